"""Entry point of the frozen desktop form (PyInstaller runs it as a script, so imports are absolute)."""
import gc
import os
import sys

# one BLAS thread, as the command line sets it (gpu_tco/cli.py says why); before numpy loads
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from gpu_tco.gui.app import main  # noqa: E402

if __name__ == "__main__":
    gc.freeze()  # what the imports built lives as long as the form (gpu_tco/gui/__main__.py says why)
    sys.exit(main())
