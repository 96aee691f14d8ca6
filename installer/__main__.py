"""``python -m gpu_tco``: the same as the ``gpu-tco`` command."""
import sys

from .cli import main

sys.exit(main())
