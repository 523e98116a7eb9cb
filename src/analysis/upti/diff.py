# SPDX-License-Identifier: MIT
"""`upti diff A.db B.db`: what changed between two runs.

Per kernel, API function and marker range: count and total time in each run,
the difference (B - A) and the ratio (B / A), sorted by impact (the absolute
time difference, largest first). A and B may each be several databases (the
ranks of one run): their rows are summed.
"""
import pandas as pd

from upti.trace import Trace

COLUMNS = ["category", "name", "count_a", "count_b", "time_a", "time_b", "diff", "ratio"]

# Each category: the table it is read from and the column that names a row.
_CATEGORIES = [("kernel", "kernels", "name"), ("api", "apis", "name"),
               ("range", "ranges", "name")]


def _totals(trace, table, key):
    frame = trace.table(table)
    frame = frame[frame[key].notna() & frame["duration"].notna()]
    if frame.empty:
        return pd.DataFrame(columns=["count", "time"], index=pd.Index([], name=key))
    return frame.groupby(key)["duration"].agg(count="count", time="sum")


def diff(a, b):
    """The comparison of two runs (Traces or paths), as a DataFrame of COLUMNS."""
    a = a if isinstance(a, Trace) else Trace(a)
    b = b if isinstance(b, Trace) else Trace(b)
    parts = []
    for category, table, key in _CATEGORIES:
        joined = _totals(a, table, key).join(_totals(b, table, key), how="outer",
                                              lsuffix="_a", rsuffix="_b")
        if joined.empty:
            continue
        joined = joined.fillna(0).astype("int64")
        joined["diff"] = joined["time_b"] - joined["time_a"]
        joined["ratio"] = [tb / ta if ta else float("nan")
                           for ta, tb in zip(joined["time_a"], joined["time_b"])]
        joined.insert(0, "category", category)
        parts.append(joined.reset_index().rename(columns={key: "name"}))
    if not parts:
        return pd.DataFrame(columns=COLUMNS)
    out = pd.concat(parts, ignore_index=True)[COLUMNS]
    order = out["diff"].abs().sort_values(ascending=False, kind="stable").index
    return out.loc[order].reset_index(drop=True)
