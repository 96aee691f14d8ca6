import sys
from pathlib import Path

# tests import helpers (excel_eval) from this folder
sys.path.insert(0, str(Path(__file__).parent))
