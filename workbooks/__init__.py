"""The generated, formula-linked Excel workbook: ``write_workbook(path, inputs)``."""
from .build import build_workbook, write_workbook
from .common import PRINTED_PAGES_AT_MOST
from .xlsx import WorkbookError

__all__ = ["PRINTED_PAGES_AT_MOST", "WorkbookError", "build_workbook", "write_workbook"]
