"""The generated, formula-linked Excel workbook: ``write_workbook(path, inputs)``."""
from .build import build_workbook, write_workbook
from .xlsx import WorkbookError

__all__ = ["WorkbookError", "build_workbook", "write_workbook"]
