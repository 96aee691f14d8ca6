"""Entry point of the frozen desktop form (PyInstaller runs it as a script, so imports are absolute)."""
import sys

from gpu_tco.gui.app import main

if __name__ == "__main__":
    sys.exit(main())
