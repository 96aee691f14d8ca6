"""python -m gpu_tco.gui: the desktop form."""
import gc
import os
import sys

# one BLAS thread, as the command line sets it (gpu_tco/cli.py says why); before numpy loads
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from .app import main  # noqa: E402

# a process of its own (the desktop launcher runs this): what the imports built lives as long as the form, so the
# collector's passes, and its last one at exit, skip it (about 50 ms of a 0.85 s start to a picture)
gc.freeze()
sys.exit(main())
