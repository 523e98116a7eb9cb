# SPDX-License-Identifier: MIT
"""Printing the analyses' tables: text for people, CSV and JSON for programs."""
import json
import math
import sys

FORMATS = ("text", "csv", "json")


def _plain(value):
    """A cell as JSON holds it: NaN and missing become null, numpy scalars Python's."""
    if value is None:
        return None
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    try:
        import pandas as pd
        if value is pd.NA:
            return None
    except ImportError:
        pass
    return value


def records(frame):
    """A DataFrame as a list of dicts of plain Python values."""
    return [{k: _plain(v) for k, v in row.items()} for row in frame.to_dict("records")]


def _cell(value):
    value = _plain(value)
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


def text_table(frame, out=sys.stdout):
    """Columns aligned, numbers to the right, a header line and a rule."""
    cols = list(frame.columns)
    rows = [[_cell(v) for v in row] for row in frame.itertuples(index=False)]
    widths = [max([len(c)] + [len(r[i]) for r in rows]) for i, c in enumerate(cols)]
    numeric = [all(r[i] == "-" or r[i].lstrip("-").replace(".", "", 1).isdigit() for r in rows)
               for i in range(len(cols))]

    def line(cells):
        return "  ".join(c.rjust(w) if n else c.ljust(w)
                         for c, w, n in zip(cells, widths, numeric)).rstrip()
    out.write(line(cols) + "\n")
    out.write("  ".join("-" * w for w in widths) + "\n")
    for r in rows:
        out.write(line(r) + "\n")


def write(frame, fmt, out=sys.stdout):
    """frame in the format fmt (one of FORMATS)."""
    if fmt == "csv":
        frame.to_csv(out, index=False, lineterminator="\n")
    elif fmt == "json":
        json.dump(records(frame), out, indent=1)
        out.write("\n")
    else:
        text_table(frame, out)
