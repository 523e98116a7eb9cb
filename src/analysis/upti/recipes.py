# SPDX-License-Identifier: MIT
"""`upti recipe NAME DB...`: per-rank analyses of many databases.

A recipe is two steps: `part(path)` reads one database and returns a small
DataFrame (per rank, per name), and `combine(frames)` joins the parts into
the result. The parts run where the databases are: in this process (mode
`local`), or as tasks of a Dask cluster (`dask`: a local cluster of
`workers` processes; `dask=ADDRESS`: an existing scheduler), so that
thousands of rank databases on a shared file system are read by the cluster
and only the parts travel. Every result has a `rank` column (the process's
pid where the launcher gave no rank, with `rank` empty).
"""
import pandas as pd

from upti.analyze import SYNC_CALLS, _busy_intervals
from upti.trace import read_table

GAP_NS = 1_000_000


def _stats(frame, keys, column="duration"):
    """count, total, min, median, max of column per keys."""
    return frame.groupby(keys, dropna=False)[column].agg(
        count="count", total="sum", min="min", median="median", max="max").reset_index()


# kernels: per kernel name, over every dispatch of every rank, and the rank
# whose total for the kernel is farthest from the median rank's.
def kernels_part(path):
    k = read_table(path, "kernels")
    k = k[k["duration"].notna() & (k["end"] > 0)]
    return k[["rank", "pid", "name", "duration"]]


def kernels_combine(parts):
    k = pd.concat(parts, ignore_index=True)
    if k.empty:
        return pd.DataFrame(columns=["name", "count", "total", "min", "median", "max", "ranks",
                                     "outlier_rank", "outlier_total", "rank_median_total"])
    out = _stats(k, ["name"])
    per_rank = k.groupby(["name", "rank", "pid"], dropna=False)["duration"].sum().reset_index()
    rows = []
    for name, group in per_rank.groupby("name"):
        median = group["duration"].median()
        far = group.loc[(group["duration"] - median).abs().idxmax()]
        rows.append({"name": name, "ranks": len(group), "outlier_rank": far["rank"],
                     "outlier_total": int(far["duration"]), "rank_median_total": float(median)})
    out = out.merge(pd.DataFrame(rows), on="name")
    out["outlier_rank"] = out["outlier_rank"].astype("Int64")
    return out.sort_values(["total", "name"], ascending=[False, True], kind="stable") \
        .reset_index(drop=True)


# api: per rank, API calls and their time, and of them the synchronizing ones.
def api_part(path):
    a = read_table(path, "apis")
    a["sync"] = a["name"].isin(SYNC_CALLS)
    rows = []
    for (rank, pid), g in a.groupby(["rank", "pid"], dropna=False):
        s = g[g["sync"]]
        rows.append({"rank": rank, "pid": pid, "api_calls": len(g),
                     "api_ns": int(g["duration"].sum()), "sync_calls": len(s),
                     "sync_ns": int(s["duration"].sum())})
    return pd.DataFrame(rows, columns=["rank", "pid", "api_calls", "api_ns", "sync_calls",
                                       "sync_ns"])


def _by_rank(parts):
    out = pd.concat(parts, ignore_index=True)
    out["rank"] = out["rank"].astype("Int64")
    return out.sort_values(["rank", "pid"], kind="stable").reset_index(drop=True)


# ranges: per rank and range name (uptx and NVTX), count and times.
def ranges_part(path):
    r = read_table(path, "ranges")
    r = r[r["duration"].notna()]
    return _stats(r, ["rank", "pid", "name"])


def ranges_combine(parts):
    out = _by_rank(parts)
    return out.sort_values(["rank", "pid", "total"], ascending=[True, True, False],
                           kind="stable").reset_index(drop=True)


# gaps: per rank, device idle gaps of GAP_NS or more between device operations.
def _device_busy(path):
    parts = []
    for table in ("kernels", "copies"):
        t = read_table(path, table)
        parts.append(t[(t["start"] > 0) & (t["end"] >= t["start"])][["rank", "pid", "start", "end"]])
    return pd.concat(parts, ignore_index=True).sort_values("start", kind="stable")


def gaps_part(path):
    ops = _device_busy(path)
    rows = []
    for (rank, pid), g in ops.groupby(["rank", "pid"], dropna=False):
        busy = _busy_intervals(g)
        gaps = [b[0] - a[1] for a, b in zip(busy, busy[1:]) if b[0] - a[1] >= GAP_NS]
        rows.append({"rank": rank, "pid": pid, "device_ns": sum(e - s for s, e in busy),
                     "span_ns": busy[-1][1] - busy[0][0] if busy else 0, "gaps": len(gaps),
                     "idle_ns": sum(gaps), "longest_gap_ns": max(gaps, default=0)})
    return pd.DataFrame(rows, columns=["rank", "pid", "device_ns", "span_ns", "gaps", "idle_ns",
                                       "longest_gap_ns"])


# imbalance: per rank, device and API time against the median rank's.
def imbalance_part(path):
    busy = gaps_part(path)[["rank", "pid", "device_ns"]]
    api = api_part(path)[["rank", "pid", "api_ns"]]
    procs = read_table(path, "processes")
    procs = pd.DataFrame({"rank": procs["rank"], "pid": procs["pid"],
                          "run_ns": procs["duration"].fillna(0).astype("int64")})
    out = procs.merge(busy, on=["rank", "pid"], how="left").merge(api, on=["rank", "pid"],
                                                                    how="left")
    return out.fillna({"device_ns": 0, "api_ns": 0})


def imbalance_combine(parts):
    out = _by_rank(parts)
    for column in ("device_ns", "api_ns", "run_ns"):
        out[column] = out[column].astype("int64")
        median = out[column].median()
        out[column.replace("_ns", "_ratio")] = (out[column] / median).round(4) if median \
            else float("nan")
    return out


RECIPES = {
    "kernels": (kernels_part, kernels_combine,
                "per kernel: count, total, min/median/max over all ranks, and the outlier rank"),
    "api": (api_part, _by_rank, "per rank: API calls and time, and the synchronizing ones"),
    "ranges": (ranges_part, ranges_combine, "per rank and marker range: count and times"),
    "gaps": (gaps_part, _by_rank, "per rank: device busy time and idle gaps of 1 ms or more"),
    "imbalance": (imbalance_part, imbalance_combine,
                  "per rank: device, API and run time, and each as a ratio to the median rank"),
}


def run(name, paths, mode="local", workers=None):
    """The recipe `name` over the databases `paths`; mode is local, dask or
    dask=ADDRESS (workers: the local cluster's processes, default the CPUs)."""
    part, combine, _ = RECIPES[name]
    if mode == "local":
        return combine([part(p) for p in paths])
    from distributed import Client, LocalCluster
    if mode == "dask":
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                               dashboard_address=None)
        client = Client(cluster)
    elif mode.startswith("dask="):
        cluster, client = None, Client(mode[len("dask="):])
    else:
        raise ValueError(f"mode {mode!r}: local, dask or dask=ADDRESS")
    try:
        futures = client.map(part, paths, pure=False)
        return combine(client.gather(futures))
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
