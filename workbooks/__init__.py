"""gpu-tco workbooks front end (arrives with its own issue; holds no formulas: it calls core)."""
