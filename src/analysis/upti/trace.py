# SPDX-License-Identifier: MIT
"""Reading trace databases into pandas DataFrames.

Each table is one SQL query over the database's own tables (not its views,
which name processes by pid only), so that every row carries its process:
`process` (the row of info_process), `pid`, `rank` (NULL when the launcher
gave none), `host`, and `database` (the file it came from). Times are ns on
UPTI's clock; `duration` is `end - start` where both are known.
"""
import os
import sqlite3

import pandas as pd

# The process columns every table starts with.
_PROCESS = "p.id AS process, p.pid, p.rank, p.hostname AS host"

# Each table: the SQL that reads it. `copies` are the device operations that
# move data; barriers and markers, which synchronize a queue, are `sync_ops`.
# String ids are resolved with LEFT JOINs:
# a row whose name is missing keeps NULL rather than vanishing.
TABLES = {
    "processes": f"""SELECT {_PROCESS}, p.ppid, p.command, p.start, p.end,
        p.end - p.start AS duration FROM info_process p""",
    "apis": f"""SELECT {_PROCESS}, a.tid, d.string AS domain, n.string AS name,
        a.correlation_id, a.start, a.end, a.end - a.start AS duration,
        CASE WHEN a.result = -9223372036854775808 THEN NULL ELSE a.result END AS result
        FROM api a JOIN info_process p ON p.id = a.process_id
        LEFT JOIN string d ON d.id = a.domain_id LEFT JOIN string n ON n.id = a.name_id""",
    "kernels": f"""SELECT {_PROCESS}, k.tid, k.agent_handle AS agent, k.queue_handle AS queue,
        n.string AS name, k.correlation_id, k.grid_x, k.grid_y, k.grid_z,
        k.workgroup_x, k.workgroup_y, k.workgroup_z, k.queued, k.submit, k.start, k.end,
        k.end - k.start AS duration, k.status
        FROM kernel_dispatch k JOIN info_process p ON p.id = k.process_id
        LEFT JOIN string n ON n.id = k.name_id""",
    "copies": f"""SELECT {_PROCESS}, m.tid, m.agent_handle AS agent, m.queue_handle AS queue,
        o.string AS operation, dr.string AS direction, m.bytes, m.correlation_id,
        m.queued, m.submit, m.start, m.end, m.end - m.start AS duration, m.status
        FROM memory_copy m JOIN info_process p ON p.id = m.process_id
        LEFT JOIN string o ON o.id = m.operation_id LEFT JOIN string dr ON dr.id = m.direction_id
        WHERE coalesce(o.string, '') NOT IN ('BARRIER', 'MARKER')""",
    "sync_ops": f"""SELECT {_PROCESS}, m.tid, m.agent_handle AS agent, m.queue_handle AS queue,
        o.string AS operation, dr.string AS direction, m.bytes, m.correlation_id,
        m.queued, m.submit, m.start, m.end, m.end - m.start AS duration, m.status
        FROM memory_copy m JOIN info_process p ON p.id = m.process_id
        LEFT JOIN string o ON o.id = m.operation_id LEFT JOIN string dr ON dr.id = m.direction_id
        WHERE o.string IN ('BARRIER', 'MARKER')""",
    "allocations": f"""SELECT {_PROCESS}, m.tid, o.string AS operation, t.string AS type,
        m.agent_handle AS agent, m.handle, m.size, m.flags, m.correlation_id, m.timestamp
        FROM memory_allocate m JOIN info_process p ON p.id = m.process_id
        LEFT JOIN string o ON o.id = m.operation_id LEFT JOIN string t ON t.id = m.type_id""",
    "ranges": f"""SELECT {_PROCESS}, r.tid, CASE r.kind WHEN 0 THEN 'push' ELSE 'range' END AS kind,
        s.string AS name, r.depth, r.domain, r.category, r.start, r.end,
        r.end - r.start AS duration
        FROM region r JOIN info_process p ON p.id = r.process_id
        LEFT JOIN string s ON s.id = r.name_id""",
    "agents": f"""SELECT {_PROCESS}, g.handle AS agent, g.type, g.runtime, g.name, g.vendor,
        g.compute_units, g.global_memory_bytes
        FROM info_agent g JOIN info_process p ON p.id = g.process_id""",
}


class TraceError(Exception):
    """A file that is not a readable UPTI trace database."""


def _connect(path):
    if not os.path.isfile(path):
        raise TraceError(f"{path}: no such file")
    try:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        names = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    except sqlite3.DatabaseError as e:
        raise TraceError(f"{path}: not a trace database ({e})") from None
    missing = {"info_process", "api", "kernel_dispatch", "string"} - names
    if missing:
        con.close()
        raise TraceError(f"{path}: not a trace database (no table {', '.join(sorted(missing))})")
    return con


def read_table(path, table):
    """One table of one database as a DataFrame, with a `database` column."""
    if table not in TABLES:
        raise ValueError(f"no table {table!r}: one of {', '.join(TABLES)}")
    con = _connect(path)
    try:
        frame = pd.read_sql_query(TABLES[table], con)
    except sqlite3.DatabaseError as e:
        raise TraceError(f"{path}: {e}") from None
    finally:
        con.close()
    frame.insert(0, "database", path)
    # A rank is an integer that may be missing: pandas' nullable integer.
    frame["rank"] = frame["rank"].astype("Int64")
    if "result" in frame:
        frame["result"] = frame["result"].astype("Int64")
    return frame


class Trace:
    """The tables of one or many databases, each read on first use.

    Attributes: processes, apis, kernels, copies, sync_ops, allocations, ranges, agents
    (see TABLES), and metadata (database, key, value)."""

    def __init__(self, paths):
        self.paths = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
        self.paths = [os.fspath(p) for p in self.paths]
        if not self.paths:
            raise TraceError("no database given")
        for path in self.paths:
            _connect(path).close()
        self._tables = {}

    def table(self, name):
        """The named table across every database, as one DataFrame."""
        if name not in self._tables:
            frames = [read_table(p, name) for p in self.paths]
            self._tables[name] = pd.concat(frames, ignore_index=True) if len(frames) > 1 \
                else frames[0]
        return self._tables[name]

    def __getattr__(self, name):
        if name in TABLES:
            return self.table(name)
        raise AttributeError(name)

    @property
    def metadata(self):
        rows = []
        for path in self.paths:
            con = _connect(path)
            try:
                rows += [(path, k, v) for k, v in con.execute("SELECT key, value FROM metadata")]
            finally:
                con.close()
        return pd.DataFrame(rows, columns=["database", "key", "value"])

    def label(self, row):
        """A process's name for people: its rank when known, else its pid."""
        return f"rank {row['rank']}" if pd.notna(row["rank"]) else f"pid {row['pid']}"


def open(paths):
    """A Trace of one database (a path) or of several (a list of paths)."""
    return Trace(paths)


def open_dask(paths, table):
    """One table across many databases as a Dask DataFrame, a partition per
    database, each read by whichever worker computes it."""
    import dask
    import dask.dataframe as dd
    paths = [os.fspath(p) for p in paths]
    if not paths:
        raise TraceError("no database given")
    meta = read_table(paths[0], table).iloc[0:0]
    parts = [dask.delayed(read_table)(p, table) for p in paths]
    return dd.from_delayed(parts, meta=meta)
