# SPDX-License-Identifier: MIT
"""UPTI's trace databases in Python.

    import upti
    trace = upti.open("upti-app-1234.db")          # one database, or a list
    trace.kernels.groupby("name")["duration"].sum()

A Trace holds pandas DataFrames of what the traced processes did, with names
resolved, times in ns on UPTI's clock, and the process of each row (`pid`,
`rank`, `host`, `database`). `upti.open_dask(paths)` gives the same tables
across many databases as Dask DataFrames, a partition per database.
The analyses of `upti analyze`, `upti diff` and `upti recipe` are written on
this module (upti.analyze, upti.diff, upti.recipes).
"""
from upti.trace import TABLES, Trace, TraceError, open, open_dask, read_table

__all__ = ["Trace", "TraceError", "TABLES", "open", "open_dask", "read_table"]
__version__ = "0.9.0"
