"""gpu-tco in Excel: worksheet functions (xlwings) and the add-in that installs them; holds no formulas, it calls core."""
