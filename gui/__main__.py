"""python -m gpu_tco.gui: the desktop form."""
import os
import sys

# one BLAS thread, as the command line sets it (gpu_tco/cli.py says why); before numpy loads
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from .app import main  # noqa: E402

sys.exit(main())
