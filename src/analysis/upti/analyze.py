# SPDX-License-Identifier: MIT
"""`upti analyze DB...`: expert rules over traces.

Each rule looks for one pattern that costs time, and says, per process where
it holds: its name, one line of explanation, the evidence (counts, times in
ns, shares of the process's run) and the time ranges to look at (the longest
first, at most RANGES_SHOWN). Thresholds are Settings, each an option of
`upti analyze`; a rule that finds nothing says nothing.
"""
from dataclasses import dataclass, field

import pandas as pd

from upti.trace import Trace

RANGES_SHOWN = 5

# Calls whose whole purpose is to wait for the device.
SYNC_CALLS = frozenset({"clFinish", "clWaitForEvents", "vkQueueWaitIdle", "vkDeviceWaitIdle",
                        "vkWaitForFences", "vkWaitSemaphores", "vkWaitSemaphoresKHR"})


@dataclass
class Settings:
    sync_min_count: int = 10        # synchronizations before they are a pattern
    sync_min_share: float = 0.10    # ... and the share of the run they blocked
    gap_ns: int = 1_000_000         # a device idle gap worth naming
    gap_min_count: int = 3          # ... and how many of them make a finding
    utilization_below: float = 0.5  # device busy / device active span
    utilization_min_span_ns: int = 10_000_000
    small_bytes: int = 65536        # a transfer smaller than this is small
    small_min_count: int = 100
    small_min_share: float = 0.5    # ... of the process's transfers
    launch_min_count: int = 10      # launches of a kernel before it is judged
    launch_min_share: float = 0.5   # share of them whose launch outlasted the kernel
    outlier_factor: float = 1.5     # a rank this far from the median (a ratio)
    outlier_z: float = 3.5          # ... and a modified z-score beyond this
    outlier_min_ns: int = 1_000_000


@dataclass
class Finding:
    rule: str
    title: str
    process: str          # "rank R (pid P, database)" or "pid P (database)"
    evidence: dict
    ranges: list = field(default_factory=list)   # [(start, end, what)]

    def as_dict(self):
        return {"rule": self.rule, "title": self.title, "process": self.process,
                "evidence": self.evidence,
                "ranges": [{"start": int(s), "end": int(e), "what": w} for s, e, w in self.ranges]}


def _who(proc):
    where = f"pid {proc.pid}, {proc.database}"
    return f"rank {proc.rank} ({where})" if pd.notna(proc.rank) else where


def _longest(frame, what, n=RANGES_SHOWN):
    top = frame.sort_values("duration", ascending=False, kind="stable").head(n)
    return [(int(s), int(e), str(w)) for s, e, w in zip(top["start"], top["end"], top[what])]


def _per_process(trace, table):
    """(process row, that process's rows of table) for each process."""
    frame = trace.table(table)
    for proc in trace.processes.itertuples(index=False):
        rows = frame[(frame["database"] == proc.database) & (frame["process"] == proc.process)]
        yield proc, rows


def _span(proc):
    return int(proc.duration) if pd.notna(proc.duration) and proc.duration > 0 else 0


def _device_ops(trace, proc):
    """A process's kernels and copies: start, end, duration, what, agent."""
    parts = []
    for table, what in (("kernels", "name"), ("copies", "operation")):
        frame = trace.table(table)
        rows = frame[(frame["database"] == proc.database) & (frame["process"] == proc.process)]
        rows = rows[(rows["start"] > 0) & (rows["end"] >= rows["start"])]
        parts.append(pd.DataFrame({"start": rows["start"], "end": rows["end"],
                                   "duration": rows["duration"], "what": rows[what].astype(str),
                                   "agent": rows["agent"]}))
    return pd.concat(parts, ignore_index=True).sort_values("start", kind="stable")


def _busy_intervals(ops):
    """The union of the ops' [start, end) intervals, as a sorted list."""
    merged = []
    for s, e in zip(ops["start"], ops["end"]):
        if merged and s <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], e)
        else:
            merged.append([int(s), int(e)])
    return merged


def _device_busy(trace, proc):
    """_busy_intervals of proc's device operations, computed once per process for
    the rules that use it (device_idle, low_utilization)."""
    cache = trace.__dict__.setdefault("_device_busy", {})
    key = (proc.database, proc.process)
    if key not in cache:
        cache[key] = _busy_intervals(_device_ops(trace, proc))
    return cache[key]


def _blocked(trace, proc, apis):
    """proc's calls (of apis, its rows) in which the host waited for the device:
    synchronizing calls, and transfers whose device work ran inside the call
    (blocking reads, writes, maps)."""
    copies = trace.copies
    waits = apis[apis["name"].isin(SYNC_CALLS)]
    mine = copies[(copies["database"] == proc.database) & (copies["process"] == proc.process)]
    inside = apis.merge(mine[["correlation_id", "start", "end"]], on="correlation_id",
                        suffixes=("", "_op"))
    blocking = inside[(inside["start_op"] >= inside["start"]) &
                      (inside["end_op"] <= inside["end"]) & (inside["end_op"] > 0)]
    return pd.concat([waits, blocking[waits.columns]], ignore_index=True)


def rule_sync(trace, cfg):
    """Host threads waiting for the device: synchronizing calls, and transfers
    whose device work ran inside the call (blocking reads, writes, maps)."""
    for proc, apis in _per_process(trace, "apis"):
        blocked = _blocked(trace, proc, apis)
        total, span = int(blocked["duration"].sum()), _span(proc)
        if len(blocked) < cfg.sync_min_count or not span or total < cfg.sync_min_share * span:
            continue
        by_call = blocked.groupby("name")["duration"].agg(["count", "sum"])
        yield Finding("sync", "host threads waited for the device in synchronizing or "
                      "blocking calls; enqueue without blocking and wait once, or overlap work",
                      _who(proc),
                      {"calls": len(blocked), "blocked_ns": total, "share": round(total / span, 4),
                       "by_call": {n: {"count": int(c), "ns": int(t)}
                                   for n, (c, t) in by_call.iterrows()}},
                      _longest(blocked, "name"))


def rule_device_idle(trace, cfg):
    """Gaps between device work longer than gap_ns while the host was not
    waiting for the device (in a synchronizing call or a blocking transfer,
    as rule_sync counts them): the host was too slow to feed it. A gap inside
    a blocking read that waits for the queue (the device's own scheduling
    between two kernels, a runtime thread descheduled on a loaded machine) is
    not the host's doing."""
    for proc, mine in _per_process(trace, "apis"):
        busy = _device_busy(trace, proc)
        waits = _blocked(trace, proc, mine)
        gaps = []
        for (_, prev_end), (next_start, _) in zip(busy, busy[1:]):
            if next_start - prev_end < cfg.gap_ns:
                continue
            lo = waits["start"].clip(lower=prev_end)
            hi = waits["end"].clip(upper=next_start)
            waited = int((hi - lo).clip(lower=0).sum())
            if waited * 2 < next_start - prev_end:
                gaps.append((prev_end, next_start))
        if len(gaps) < cfg.gap_min_count:
            continue
        frame = pd.DataFrame(gaps, columns=["start", "end"])
        frame["duration"] = frame["end"] - frame["start"]
        frame["what"] = "device idle"
        yield Finding("device_idle", "the device sat idle while the host was busy elsewhere; "
                      "enqueue work ahead, or move the host work off the submitting thread",
                      _who(proc), {"gaps": len(gaps), "idle_ns": int(frame["duration"].sum()),
                                   "threshold_ns": cfg.gap_ns},
                      _longest(frame, "what"))


def rule_utilization(trace, cfg):
    """Low device utilisation: the device was busy for less than
    utilization_below of the span from its first to its last operation."""
    for proc in trace.processes.itertuples(index=False):
        busy = _device_busy(trace, proc)
        if not busy:
            continue
        span = busy[-1][1] - busy[0][0]
        if span < cfg.utilization_min_span_ns:
            continue
        busy_ns = sum(e - s for s, e in busy)
        if busy_ns >= cfg.utilization_below * span:
            continue
        yield Finding("low_utilization", "the device was busy for a small part of the time it "
                      "was in use; give it larger or more concurrent work",
                      _who(proc), {"busy_ns": busy_ns, "span_ns": span,
                                   "utilization": round(busy_ns / span, 4)},
                      [(busy[0][0], busy[-1][1], "device in use")])


def rule_small_transfers(trace, cfg):
    """Many small transfers: each pays a fixed cost; batch them."""
    for proc, copies in _per_process(trace, "copies"):
        sized = copies[copies["bytes"] > 0]
        small = sized[sized["bytes"] < cfg.small_bytes]
        if len(small) < cfg.small_min_count or len(small) < cfg.small_min_share * len(sized):
            continue
        yield Finding("small_transfers", "many small transfers, each paying a fixed cost; "
                      "batch them into fewer, larger ones",
                      _who(proc), {"small": len(small), "transfers": len(sized),
                                   "small_bytes": int(small["bytes"].sum()),
                                   "small_ns": int(small["duration"].sum()),
                                   "threshold_bytes": cfg.small_bytes},
                      _longest(small, "operation"))


def rule_api_errors(trace, cfg):
    """API calls that returned an error (a negative OpenCL or Vulkan status)."""
    for proc, apis in _per_process(trace, "apis"):
        failed = apis[apis["result"].notna() & (apis["result"] < 0)]
        if failed.empty:
            continue
        by = failed.groupby(["name", "result"]).size()
        yield Finding("api_errors", "API calls returned errors; check their status",
                      _who(proc), {"calls": len(failed),
                                   "by_call": [{"name": n, "result": int(r), "count": int(c)}
                                               for (n, r), c in by.items()]},
                      _longest(failed, "name"))


def rule_launch_overhead(trace, cfg):
    """Kernels whose launch call took longer than the kernel ran."""
    apis = trace.apis
    for proc, kernels in _per_process(trace, "kernels"):
        mine = apis[(apis["database"] == proc.database) & (apis["process"] == proc.process)]
        joined = kernels[kernels["duration"] > 0].merge(
            mine[["correlation_id", "duration"]], on="correlation_id", suffixes=("", "_api"))
        for name, rows in joined.groupby("name"):
            slower = rows[rows["duration_api"] > rows["duration"]]
            if len(rows) < cfg.launch_min_count or len(slower) < cfg.launch_min_share * len(rows):
                continue
            yield Finding("launch_overhead", f"launching {name} cost more than running it; "
                          "fuse its launches or give each more work",
                          _who(proc), {"kernel": name, "launches": len(rows),
                                       "launch_slower": len(slower),
                                       "launch_ns": int(rows["duration_api"].sum()),
                                       "run_ns": int(rows["duration"].sum())},
                          _longest(rows, "name"))


def rule_rank_outliers(trace, cfg):
    """With three ranks or more (processes an MPI launcher gave a rank): one
    whose device or API time is far from the median of all (load imbalance,
    a slow node): a ratio to the median beyond outlier_factor, a distance of
    outlier_min_ns, and a modified z-score (0.6745 (x - median) / MAD, the
    median absolute deviation: Iglewicz and Hoaglin's test, robust to the
    outliers it looks for) beyond outlier_z, so that ranks that merely vary
    together are not named. Processes without a rank are not compared: they
    need not run the same program."""
    procs = trace.processes
    procs = procs[procs["rank"].notna()]
    if len(procs) < 3:
        return
    kernels, apis = trace.kernels, trace.apis
    keys = ["database", "process"]
    device = kernels.groupby(keys)["duration"].sum()
    host = apis.groupby(keys)["duration"].sum()
    for measure, totals, what in (("device_ns", device, "device"), ("api_ns", host, "API")):
        values = pd.Series(procs.set_index(keys).index.map(lambda k: int(totals.get(k, 0))))
        median = float(values.median())
        mad = float((values - median).abs().median())
        for proc, value in zip(procs.itertuples(index=False), values):
            z = 0.6745 * (value - median) / mad if mad else (0.0 if value == median else
                                                              float("inf"))
            far = abs(value - median) >= cfg.outlier_min_ns and abs(z) > cfg.outlier_z and (
                value > cfg.outlier_factor * median or value * cfg.outlier_factor < median)
            if far:
                yield Finding("rank_outlier", f"this rank's {what} time is far from the other "
                              "ranks'; look for imbalance or a slow node",
                              _who(proc), {"measure": measure, "value_ns": value,
                                           "median_ns": int(median),
                                           "ratio": round(value / median, 3) if median else None},
                              [(int(proc.start), int(proc.end), "process")]
                              if pd.notna(proc.start) and pd.notna(proc.end) else [])


RULES = {"sync": rule_sync, "device_idle": rule_device_idle, "low_utilization": rule_utilization,
         "small_transfers": rule_small_transfers, "api_errors": rule_api_errors,
         "launch_overhead": rule_launch_overhead, "rank_outlier": rule_rank_outliers}


def analyze(trace, rules=None, settings=None):
    """Every finding of the chosen rules (default: all) over a Trace or paths."""
    trace = trace if isinstance(trace, Trace) else Trace(trace)
    cfg = settings or Settings()
    findings = []
    for name in rules or RULES:
        findings += list(RULES[name](trace, cfg))
    return findings
