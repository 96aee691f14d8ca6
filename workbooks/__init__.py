"""The generated, formula-linked Excel workbook (issue 4): ``write_workbook(path, inputs)``."""
from .build import WorkbookError, build_workbook, write_workbook

__all__ = ["WorkbookError", "build_workbook", "write_workbook"]
