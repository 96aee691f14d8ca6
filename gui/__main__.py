"""python -m gpu_tco.gui: the desktop form."""
import sys

from .app import main

sys.exit(main())
