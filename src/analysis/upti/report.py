# SPDX-License-Identifier: MIT
"""`upti report DB... -o report.html`: one self-contained page to look at.

The page holds, with no network access needed (inline CSS, SVG and a few
lines of script): per database, the summary tables of `upti stats` (the
reports STATS_REPORTS, read from `upti stats --report ... -f json`, so that
the page's numbers are upti stats's), kernel-time bars, and a timeline
overview per process and device; the findings of `upti analyze`; and with
several processes, a process x kernel heat map of kernel time.
Each plot is an <svg class="plot">; the script checks on load that every
plot was laid out with a size and marks <body data-plots="N" data-ready="1">,
and records any script error in data-errors (the browser test reads both).
"""
import html
import json
import os
import subprocess

import pandas as pd

from upti.analyze import analyze
from upti.trace import Trace, TraceError

STATS_REPORTS = ("kern_sum", "api_sum", "mem_time_sum", "sync_sum", "marker_sum")
TIMELINE_BINS = 600
BARS_SHOWN = 15
HEAT_KERNELS = 30

_STYLE = """
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;max-width:1400px}
h1{font-size:22px}h2{font-size:18px;margin-top:32px;border-bottom:1px solid #ccc}
h3{font-size:15px;margin-bottom:4px}
table{border-collapse:collapse;margin:8px 0 16px}td,th{padding:2px 8px;border-bottom:1px solid #eee}
th{text-align:left;background:#f4f4f4}td.n{text-align:right;font-variant-numeric:tabular-nums}
.finding{border-left:4px solid #d9822b;padding:4px 10px;margin:8px 0;background:#fdf6ee}
.finding code{font-size:12px}svg.plot{display:block;margin:6px 0 16px;background:#fafafa}
.muted{color:#777}
"""

# Checks every plot was laid out, and records script errors, for people and
# for the browser test.
_SCRIPT = """
window.__errors=[];
window.addEventListener('error',function(e){window.__errors.push(String(e.message));
 document.body.dataset.errors=window.__errors.join(' | ');});
window.addEventListener('load',function(){
 var plots=document.querySelectorAll('svg.plot'),ok=0;
 plots.forEach(function(p){var r=p.getBoundingClientRect();
  if(r.width>0&&r.height>0&&p.querySelector('rect,path,line,text'))ok++;});
 document.body.dataset.plots=String(plots.length);
 document.body.dataset.plotsRendered=String(ok);
 document.body.dataset.ready='1';});
"""


def _e(text):
    return html.escape(str(text), quote=True)


def _fmt(value):
    if value is None or (isinstance(value, float) and value != value):
        return "-"
    if isinstance(value, float):
        return f"{value:,.1f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def stats_reports(upti, db):
    """The STATS_REPORTS of one database, as `upti stats` computes them."""
    r = subprocess.run([upti, "stats", db, "--report", ",".join(STATS_REPORTS), "-f", "json",
                        "--full-names"], capture_output=True, text=True)
    if r.returncode != 0:
        raise TraceError(f"{db}: upti stats: {r.stderr.strip() or r.returncode}")
    return json.loads(r.stdout)["reports"]


def _table(report):
    cols = report["columns"]
    out = [f'<h3>{_e(report["title"])} <span class="muted">({_e(report["report"])}, '
           f'{_e(report["unit"])})</span></h3>']
    if not report["rows"]:
        return out[0] + '<p class="muted">(no data)</p>'
    out.append(f'<table class="stats" data-report="{_e(report["report"])}"><tr>' +
               "".join(f"<th>{_e(c)}</th>" for c in cols) + "</tr>")
    for row in report["rows"]:
        cells = []
        for c in cols:
            v = row.get(c)
            num = isinstance(v, (int, float)) and not isinstance(v, bool)
            # data-v: the value as upti stats printed it, for the test to compare.
            cells.append(f'<td class="{"n" if num else "t"}" data-col="{_e(c)}" '
                         f'data-v="{_e(json.dumps(v))}">{_e(_fmt(v))}</td>')
        out.append("<tr>" + "".join(cells) + "</tr>")
    return "".join(out) + "</table>"


def _bars(report):
    rows = sorted(report["rows"], key=lambda r: -r["total_time"])[:BARS_SHOWN]
    if not rows:
        return ""
    width, label_w, h = 900, 260, 18
    top = max(r["total_time"] for r in rows) or 1
    parts = [f'<svg class="plot" data-plot="kernel-bars" width="{width}" height="{h * len(rows) + 8}" '
             f'role="img" aria-label="kernel time">']
    for i, r in enumerate(rows):
        w = max(1, int((width - label_w - 110) * r["total_time"] / top))
        y = 4 + i * h
        parts.append(f'<text x="{label_w - 6}" y="{y + 13}" text-anchor="end" font-size="12">'
                     f'{_e(r["name"][:40])}</text>'
                     f'<rect x="{label_w}" y="{y + 2}" width="{w}" height="{h - 4}" fill="#4c78a8">'
                     f'<title>{_e(r["name"])}: {r["total_time"]:,} ns, {r["instances"]} runs</title></rect>'
                     f'<text x="{label_w + w + 6}" y="{y + 13}" font-size="12">'
                     f'{r["total_time"] / 1e6:,.3f} ms</text>')
    return "<h3>Kernel time</h3>" + "".join(parts) + "</svg>"


def _rows_busy(intervals, t0, t1, bins=TIMELINE_BINS):
    """Per bin of [t0, t1), the busy share of intervals (start, end)."""
    span = max(1, t1 - t0)
    busy = [0.0] * bins
    for s, e in intervals:
        s, e = max(s, t0), min(e, t1)
        if e <= s:
            continue
        b0, b1 = int((s - t0) * bins / span), min(bins - 1, int((e - t0) * bins / span))
        for b in range(b0, b1 + 1):
            lo = t0 + b * span / bins
            hi = lo + span / bins
            busy[b] += (min(e, hi) - max(s, lo)) / (span / bins)
    return [min(1.0, x) for x in busy]


def _timeline(trace, proc):
    """Host API activity per thread and device activity per queue, binned."""
    def mine(frame):
        return frame[(frame["database"] == proc.database) & (frame["process"] == proc.process)]
    apis, kernels, copies = mine(trace.apis), mine(trace.kernels), mine(trace.copies)
    rows = []
    for tid, g in apis.groupby("tid"):
        rows.append((f"thread {tid} API", list(zip(g["start"], g["end"])), "#72b7b2"))
    dev = pd.concat([kernels[["agent", "queue", "start", "end"]],
                     copies[["agent", "queue", "start", "end"]]], ignore_index=True)
    dev = dev[(dev["start"] > 0) & (dev["end"] >= dev["start"])]
    for (agent, queue), g in dev.groupby(["agent", "queue"]):
        rows.append((f"device {agent} queue {queue:#x}", list(zip(g["start"], g["end"])), "#e45756"))
    if not rows:
        return ""
    t0 = min(s for _, iv, _ in rows for s, _ in iv)
    t1 = max(e for _, iv, _ in rows for _, e in iv)
    label_w, bins, h = 220, TIMELINE_BINS, 22
    parts = [f'<svg class="plot" data-plot="timeline" width="{label_w + bins + 10}" '
             f'height="{h * len(rows) + 24}" role="img" aria-label="timeline">']
    for i, (label, iv, color) in enumerate(rows):
        y = 4 + i * h
        parts.append(f'<text x="{label_w - 6}" y="{y + 14}" text-anchor="end" font-size="12">'
                     f'{_e(label)}</text><line x1="{label_w}" x2="{label_w + bins}" y1="{y + h - 2}" '
                     f'y2="{y + h - 2}" stroke="#ddd"/>')
        for b, share in enumerate(_rows_busy(iv, t0, t1)):
            if share > 0:
                parts.append(f'<rect x="{label_w + b}" y="{y + 2}" width="1" height="{h - 6}" '
                             f'fill="{color}" fill-opacity="{0.25 + 0.75 * share:.2f}"/>')
    parts.append(f'<text x="{label_w}" y="{h * len(rows) + 18}" font-size="11" fill="#777">'
                 f'{(t1 - t0) / 1e6:,.3f} ms from the first call to the last operation</text></svg>')
    return "<h3>Timeline overview</h3>" + "".join(parts)


def _heat_map(trace):
    k = trace.kernels
    procs = trace.processes
    if len(procs) < 2 or k.empty:
        return ""
    label, order = {}, {}
    for p in procs.itertuples(index=False):
        ranked = pd.notna(p.rank)
        label[(p.database, p.process)] = f"rank {p.rank}" if ranked else f"pid {p.pid}"
        order[(p.database, p.process)] = (not ranked, int(p.rank) if ranked else 0, p.pid,
                                          p.database)
    totals = k.groupby(["database", "process", "name"])["duration"].sum()
    names = k.groupby("name")["duration"].sum().sort_values(ascending=False).index[:HEAT_KERNELS]
    keys = sorted(label, key=order.get)
    top = max(1, int(totals.max()))
    cell, label_w, head = 22, 120, 140
    parts = [f'<h2>Kernel time per process</h2><svg class="plot" data-plot="heat-map" '
             f'width="{label_w + cell * len(names) + 10}" height="{head + cell * len(keys) + 10}" '
             f'role="img" aria-label="process by kernel heat map">']
    for j, name in enumerate(names):
        x = label_w + j * cell + cell // 2
        parts.append(f'<text transform="translate({x},{head - 6}) rotate(-60)" font-size="11">'
                     f'{_e(name[:24])}</text>')
    for i, key in enumerate(keys):
        y = head + i * cell
        parts.append(f'<text x="{label_w - 6}" y="{y + 15}" text-anchor="end" font-size="12">'
                     f'{_e(label[key])}</text>')
        for j, name in enumerate(names):
            v = int(totals.get((key[0], key[1], name), 0))
            shade = v / top
            parts.append(f'<rect x="{label_w + j * cell}" y="{y}" width="{cell - 1}" '
                         f'height="{cell - 1}" fill="rgb({255 - int(200 * shade)},'
                         f'{255 - int(120 * shade)},255)"><title>{_e(label[key])}, {_e(name)}: '
                         f'{v:,} ns</title></rect>')
    return "".join(parts) + "</svg>"


def _findings(findings):
    if not findings:
        return '<h2>Findings</h2><p class="muted">upti analyze: no findings</p>'
    out = ["<h2>Findings</h2>"]
    for f in findings:
        ev = ", ".join(f"{k}: {json.dumps(v) if isinstance(v, (dict, list)) else v}"
                       for k, v in f.evidence.items())
        ranges = "; ".join(f"{s}..{e} ({(e - s) / 1e6:.3f} ms, {w})" for s, e, w in f.ranges)
        out.append(f'<div class="finding" data-rule="{_e(f.rule)}"><b>{_e(f.rule)}</b> '
                   f'{_e(f.process)}: {_e(f.title)}<br><code>{_e(ev)}</code>'
                   + (f'<br><span class="muted">at {_e(ranges)}</span>' if ranges else "")
                   + "</div>")
    return "".join(out)


def report(paths, upti):
    """The page for the databases paths, as a string."""
    trace = Trace(paths)
    body = [f"<h1>UPTI report</h1><p>{len(trace.paths)} database(s), "
            f"{len(trace.processes)} process(es)</p>", _findings(analyze(trace)), _heat_map(trace)]
    for path in trace.paths:
        body.append(f"<h2>{_e(os.path.basename(path))}</h2>")
        procs = trace.processes[trace.processes["database"] == path]
        for proc in procs.itertuples(index=False):
            who = f"rank {proc.rank}, " if pd.notna(proc.rank) else ""
            body.append(f'<p>{_e(who)}pid {proc.pid} on {_e(proc.host)}: '
                        f'<code>{_e(proc.command)}</code></p>' + _timeline(trace, proc))
        reports = stats_reports(upti, path)
        kern = [r for r in reports if r["report"] == "kern_sum"]
        if kern:
            body.append(_bars(kern[0]))
        body += [_table(r) for r in reports]
    return ("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<title>UPTI report</title><style>" + _STYLE + "</style><script>" + _SCRIPT +
            "</script></head><body>" + "".join(body) + "</body></html>\n")
