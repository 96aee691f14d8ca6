"""The classic xlwings add-in module ("UDF MODULES" = addin.udfs): =GPU_TCO() and friends.

The functions are generated from ``addin.functions.FUNCTIONS`` by ``addin.codegen`` (the
same source as the xlwings Lite build); each is a thin wrapper around
``addin.functions.call``, which calls core.  Nothing escapes as an exception: bad input
comes back as "#INPUT! field: ..." text in the cell.
"""
from __future__ import annotations

import xlwings as xw  # noqa: F401 - the generated code below decorates with xw.func/xw.arg

from .codegen import udf_source
from .functions import call as _functions_call


def _call(name, *args):
    try:
        return _functions_call(name, *args)
    except Exception as err:  # noqa: BLE001 - last resort: an Excel cell gets text, never a traceback
        return f"#ERROR! {name}: {type(err).__name__}: {err}"[:255]


exec(compile(udf_source("classic"), "<gpu-tco udfs>", "exec"), globals())  # noqa: S102 - our own generated code
