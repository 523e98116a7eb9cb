#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""What `upti run` costs the traced program, in one command.

    bench/run_overhead/run_overhead.py [BUILD_DIR] [--calls N] [--threads 1,8]
        [--kernels K] [--writes W] [--reps R] [--ring-size SIZE]
        [--short-reps S] [--marks M] [--no-callgrind]
        (--reps 0: only the short, marker and instructions rows)

Runs the probe (bench_run_overhead_probe: CALLS clSetKernelArg calls split over
THREADS threads, each its own kernel, then KERNELS launches and WRITES buffer
writes) under a parent that times its end (bench_run_overhead_wait), in each
mode, alternating, REPS times:

  bare        no UPTI
  upti-run    upti run --sys-trace: the program only records into shared
              rings; upti drains them and builds the database after the end
  old-writer  UPTI_TOOL_LIBRARIES + OPENCL_LAYERS + UPTI_TRACE_KINDS=all
              without upti run: the tool writes SQLite inside the program
  cliloader   CLIntercept's `cliloader -h -d`, when it is installed

after one bare warm-up run that is not counted (PoCL compiles the kernel into
its cache), and prints, per thread count, the minimum over the repetitions of: ns per
clSetKernelArg (wall, as one thread sees it, and CPU), the added ns and the
ratio to bare; the program's exit latency (its last line, printed just before
main returns, to its parent's wait4 returning); its peak RSS (its own rusage,
not upti's); the whole command's wall time; and, for upti run, the time from
the program's end to upti's end (the conversion) and its rate in records/s.
Then the short-process row: a test suite of thousands of short processes (or
a job of many ranks) pays `upti run`'s fixed cost once per process. The probe
with SHORT_CALLS clSetKernelArg calls, 10 kernels and 10 writes (about 1,000
records, a process of a few hundred ms, most of it PoCL's start) runs
SHORT_REPS times bare and under `upti run --sys-trace` (alternating, under
bench_run_overhead_wait both ways; which goes first alternates too), and the
row gives the median wall time of each, the added ms per process and the ratio
to bare; a second line gives, over the rounds, the spread of the added wall ms
(each round's upti run minus its own bare run: median, quartiles, min, max),
the CPU time (user + system of upti and the program, from wait4) of each and
its added ms, and the load average before and after; a third line splits the
added wall ms (paired, median) into upti's start before the program's, the
program's own run, and the time from its end to upti's.
Per thread count, paired over the repetitions (each upti run against its own
bare run): the added wall ns per clSetKernelArg, the whole run's ratio, the
time after the program's end, upti's own CPU per record (drain, conversion,
outputs: all the CPU of the command but the program's) and the time the
program waited for ring room, also as a share of the run, and of it the part
until upti had made the room (metadata ring_wait_room_ns; the rest the
threads spent runnable, behind their own program's other threads); the added
wall ns per enqueued command (the probe's KERNELS and WRITES, enqueued from its
main thread and finished with clFinish, against bare; the phase also holds one
clSetKernelArg and the buffer's creation, nothing beside 30,000 commands); with
--big-ring (default 256m) the same program under upti run with rings of that size
(mode upti-big). The marker row: MARK_THREADS threads x MARKS uptx_mark calls
(bench_run_overhead_marks), bare and under `upti run --marker-trace`: the whole
run, the time after the end, the waits summed over threads and as a share of
the run (both parts; medians of --mark-reps runs, 3 by default, and each
share's lowest and highest run: it spreads widely from run to run), upti's CPU
per record. Last, unless --no-callgrind, the instructions a
traced clSetKernelArg adds (callgrind_per_call.sh; valgrind): counted, not
timed, so the machine's load does not move them.
No assertion on any figure: it measures, it does not judge.
"""
import argparse
import glob
import os
import re
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

RECORD_TABLES = ("api", "kernel_dispatch", "memory_copy", "memory_allocate", "marker", "region")


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("build", nargs="?", default="build")
    p.add_argument("--calls", type=int, default=2000000)
    p.add_argument("--threads", default="1,8")
    p.add_argument("--kernels", type=int, default=20000)
    p.add_argument("--writes", type=int, default=10000)
    p.add_argument("--reps", type=int, default=3,
                   help="repetitions of the long rows (0: only the short-process and marker rows)")
    p.add_argument("--short-reps", type=int, default=20)
    p.add_argument("--short-calls", type=int, default=1000)
    p.add_argument("--ring-size", default=None,
                   help="UPTI_TRACE_BUFFER_SIZE for upti run: each thread's ring (default 1m)")
    p.add_argument("--big-ring", default="256m",
                   help="also upti run with rings of this size (mode upti-big; '' for none)")
    p.add_argument("--marks", type=int, default=1000000,
                   help="the marker row: uptx_mark calls per thread (0: no marker row)")
    p.add_argument("--mark-threads", type=int, default=16)
    p.add_argument("--mark-reps", type=int, default=3,
                   help="runs of the marker row (its waits spread widely from run to run)")
    p.add_argument("--no-callgrind", dest="callgrind", action="store_false",
                   help="leave out the instructions row (callgrind_per_call.sh, about 25 s)")
    a = p.parse_args()
    a.threads = [int(t) for t in a.threads.split(",") if t]
    if a.calls < 1 or a.reps < 0 or not a.threads or min(a.threads) < 1:
        p.error("--calls and --threads must be positive, --reps at least 0")
    return a


def clean_env():
    env = dict(os.environ)
    for k in list(env):
        if k.startswith("UPTI_") or k in ("OPENCL_LAYERS", "NVTX_INJECTION64_PATH"):
            del env[k]
    return env


def count_records(db):
    con = sqlite3.connect(db)
    try:
        return sum(con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in RECORD_TABLES)
    finally:
        con.close()


def ring_waits(db):
    """How often the program waited for room in a full ring, how long in all (ms), and
    how long of that until upti had made the room (the rest: runnable, waiting for a
    CPU that its other threads held)."""
    con = sqlite3.connect(db)
    try:
        meta = dict(con.execute("SELECT key, value FROM metadata WHERE key IN "
                                "('ring_waits', 'ring_wait_ns', 'ring_wait_room_ns')").fetchall())
    finally:
        con.close()
    return (int(meta.get("ring_waits", 0)), int(meta.get("ring_wait_ns", 0)) / 1e6,
            int(meta.get("ring_wait_room_ns", 0)) / 1e6)


def run_once(a, mode, threads, work):
    build = os.path.abspath(a.build)
    probe = [os.path.join(build, "bin", "bench_run_overhead_wait"),
             os.path.join(build, "bin", "bench_run_overhead_probe"),
             str(a.calls), str(threads), str(a.kernels), str(a.writes)]
    env = clean_env()
    out = os.path.join(work, mode)
    os.makedirs(out, exist_ok=True)
    if mode == "bare":
        cmd = probe
    elif mode in ("upti-run", "upti-big"):
        cmd = [os.path.join(build, "bin", "upti"), "run", "--sys-trace", "-d", out,
               "-o", "upti-%pid%", "--"] + probe
        ring = a.big_ring if mode == "upti-big" else a.ring_size
        if ring is not None:
            env["UPTI_TRACE_BUFFER_SIZE"] = ring
    elif mode == "old-writer":
        cmd = probe
        env["UPTI_TOOL_LIBRARIES"] = os.path.join(build, "lib", "libupti-trace.so")
        env["OPENCL_LAYERS"] = os.path.join(build, "lib", "libupti-opencl.so")
        env["UPTI_TRACE_KINDS"] = "all"
        env["UPTI_TRACE_OUTPUT"] = os.path.join(out, "old-%pid%")
    else:
        cmd = ["cliloader", "-h", "-d"] + probe
    f, wall_ns, cpu_ms = run_timed(cmd, env, out, f"{mode} threads={threads}")
    ended_ns = time.monotonic_ns()
    m = {
        "ns_call": float(f["wall_ns_per_call"]),
        "cpu_call": float(f["cpu_ns_per_call"]),
        "exit_ms": (int(f["child_exited_ns"]) - int(f["exit_start_ns"])) / 1e6,
        "rss_mib": int(f["maxrss_kb"]) / 1024,
        "wall_s": wall_ns / 1e9,
        "cpu_ms": cpu_ms,  # of the program and, traced, of upti
        "program_cpu_ms": int(f["child_cpu_ns"]) / 1e6,
        # The kernels and writes, enqueued then finished (clFinish), per command.
        "enq_ns": float(f["enqueue_wall_ns"]) / max(1, a.kernels + a.writes),
    }
    if mode in ("upti-run", "upti-big"):
        dbs = glob.glob(os.path.join(out, "upti-*.db"))
        if len(dbs) != 1:
            sys.exit(f"bench: upti run left {len(dbs)} databases in {out}")
        m["convert_s"] = (ended_ns - int(f["child_exited_ns"])) / 1e9
        m["records"] = count_records(dbs[0])
        m["waits"], m["wait_ms"], m["room_ms"] = ring_waits(dbs[0])
        m["rate"] = m["records"] / m["convert_s"]
        # upti's own CPU (drain, conversion, outputs, its start): all but the program's.
        m["collector_ns_record"] = (cpu_ms * 1e6 - int(f["child_cpu_ns"])) / m["records"]
    shutil.rmtree(out)
    return m


def run_timed(cmd, env, cwd, what):
    """Runs cmd: its key=value output, its wall ns and the CPU ms (user + system)
    of it and of every process it waited for."""
    children_cpu_ms_delta()  # the CPU of the children reaped before: not this run's
    t0 = time.monotonic_ns()
    p = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    out, err = p.communicate()
    t1 = time.monotonic_ns()
    # (communicate() reaped it: RUSAGE_CHILDREN holds it, and what it waited for.)
    if p.returncode != 0:
        sys.exit(f"bench: {what} failed ({p.returncode}):\n{err[-2000:]}")
    f = {}
    for line in out.splitlines():
        for item in line.split():
            k, _, v = item.partition("=")
            if v:
                f[k] = v
    return f, t1 - t0, children_cpu_ms_delta()


_children_cpu = [0.0]


def children_cpu_ms_delta():
    """CPU ms (user + system) of this process's reaped children since the last call."""
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    now = (ru.ru_utime + ru.ru_stime) * 1e3
    d = now - _children_cpu[0]
    _children_cpu[0] = now
    return d


def spawn_timed(cmd, cwd):
    """Runs cmd, whose program runs under bench_run_overhead_wait: its wall ms, the CPU ms
    (user + system) of it and every process it waited for (upti and the program), its
    status and stderr, and its parts in ms: from the start to the program's (the wait
    tool's wait_start_ns: upti's own start, under upti run), the program's run (to
    child_exited_ns), and from the program's end to the command's."""
    err, out = tempfile.TemporaryFile(), tempfile.TemporaryFile()
    t0 = time.monotonic_ns()
    p = subprocess.Popen(cmd, env=clean_env(), cwd=cwd, stdout=out, stderr=err)
    _, status, ru = os.wait4(p.pid, 0)
    t1 = time.monotonic_ns()
    p.returncode = os.waitstatus_to_exitcode(status)
    err.seek(0)
    out.seek(0)
    kv = dict(w.split("=", 1) for w in out.read().decode().split() if "=" in w)
    start, ended = int(kv.get("wait_start_ns", t0)), int(kv.get("child_exited_ns", t1))
    parts = ((start - t0) / 1e6, (ended - start) / 1e6, (t1 - ended) / 1e6)
    return ((t1 - t0) / 1e6, (ru.ru_utime + ru.ru_stime) * 1e3, p.returncode,
            err.read().decode(), parts)


def short_process(a, work):
    """The short probe SHORT_REPS times bare and under upti run, alternating (which
    goes first alternates too): per round, each one's wall and CPU ms."""
    build = os.path.abspath(a.build)
    probe = [os.path.join(build, "bin", "bench_run_overhead_wait"),
             os.path.join(build, "bin", "bench_run_overhead_probe"), str(a.short_calls), "1",
             "10", "10"]
    out = os.path.join(work, "short")
    os.makedirs(out, exist_ok=True)
    upti = [os.path.join(build, "bin", "upti"), "run", "--sys-trace", "-d", out, "-o",
            "short-%pid%", "--"]
    rounds = []
    records = 0
    for i in range(a.short_reps):
        modes = [("bare", probe), ("upti-run", upti + probe)]
        got = {}
        for mode, cmd in (modes if i % 2 == 0 else modes[::-1]):
            wall, cpu, rc, err, parts = spawn_timed(cmd, out)
            if rc != 0:
                sys.exit(f"bench: short process {mode} failed ({rc}):\n{err[-2000:]}")
            got[mode] = (wall, cpu) + parts
        rounds.append(got)
        dbs = glob.glob(os.path.join(out, "short-*.db"))
        if dbs and records == 0:
            records = count_records(dbs[0])
        for db in dbs:
            os.unlink(db)
    shutil.rmtree(out)
    return rounds, records


def marker_row(a, work):
    """MARK_THREADS threads x MARKS uptx_mark calls, bare and under upti run
    --marker-trace, MARK_REPS times alternating: per repetition, each one's figures."""
    build = os.path.abspath(a.build)
    probe = [os.path.join(build, "bin", "bench_run_overhead_wait"),
             os.path.join(build, "bin", "bench_run_overhead_marks"), str(a.marks),
             str(a.mark_threads)]
    out = os.path.join(work, "marks")
    os.makedirs(out, exist_ok=True)
    upti = [os.path.join(build, "bin", "upti"), "run", "--marker-trace", "-d", out, "-o",
            "marks-%pid%", "--"]
    reps = []
    for i in range(a.mark_reps):
        got = {}
        for mode, cmd in (("bare", probe), ("upti-run", upti + probe)):
            f, wall_ns, cpu_ms = run_timed(cmd, clean_env(), out, "marker row " + mode)
            got[mode] = {"wall_s": wall_ns / 1e9, "ns_call": float(f["wall_ns_per_call"]),
                         "marks_s": float(f["wall_ns"]) / 1e9, "cpu_ms": cpu_ms,
                         "program_cpu_ms": int(f["child_cpu_ns"]) / 1e6,
                         "after_s": (time.monotonic_ns() - int(f["child_exited_ns"])) / 1e9}
            if mode == "upti-run":
                dbs = glob.glob(os.path.join(out, "marks-*.db"))
                if len(dbs) != 1:
                    sys.exit(f"bench: the marker row left {len(dbs)} databases")
                got[mode]["records"] = count_records(dbs[0])
                got[mode]["waits"], got[mode]["wait_ms"], got[mode]["room_ms"] = ring_waits(dbs[0])
                os.unlink(dbs[0])
        reps.append(got)
    shutil.rmtree(out)
    return reps


def share_of_run(m, key):
    """A run's waits (m[key], in ms, summed over its threads) as a share of its wall time, %."""
    return m[key] / 1e3 / m["wall_s"] * 100


def print_marks(a, reps):
    med = lambda mode, k: statistics.median(r[mode][k] for r in reps)
    bare, upti = med("bare", "wall_s"), med("upti-run", "wall_s")
    records = reps[0]["upti-run"]["records"]
    coll = statistics.median((r["upti-run"]["cpu_ms"] - r["upti-run"]["program_cpu_ms"]) * 1e6 /
                             r["upti-run"]["records"] for r in reps)
    wait_ms, room_ms = med("upti-run", "wait_ms"), med("upti-run", "room_ms")
    def spread(key):
        """Each run's waits as a share of its own run: the lowest to the highest."""
        shares = [share_of_run(r["upti-run"], key) for r in reps]
        return f"{min(shares):.1f} to {max(shares):.1f}%"
    print(f"marker row ({a.mark_threads} threads x {a.marks} uptx_mark, {records} records, "
          f"median of {len(reps)}, load {os.getloadavg()[0]:.2f}): bare {bare:.2f} s, upti run "
          f"{upti:.2f} s ({upti / bare:.2f}x), marking {med('bare', 'marks_s'):.2f} s bare / "
          f"{med('upti-run', 'marks_s'):.2f} s traced, after the program's end "
          f"{med('upti-run', 'after_s'):.2f} s; the threads waited for room "
          f"{med('upti-run', 'waits'):.0f} times, {wait_ms / 1e3:.2f} s summed over threads "
          f"({wait_ms / 1e3 / upti * 100:.1f}% of the run; runs {spread('wait_ms')}), of which "
          f"until upti had made room {room_ms / 1e3:.2f} s ({room_ms / 1e3 / upti * 100:.1f}%; "
          f"runs {spread('room_ms')}); collector CPU {coll:.0f} ns per record")


def quartiles(values):
    """(first quartile, median, third quartile)."""
    if len(values) < 2:
        return values[0], values[0], values[0]
    q = statistics.quantiles(values, n=4, method="inclusive")
    return q[0], statistics.median(values), q[2]


def print_short(a, short, load_before):
    """The short-process row: medians of the rounds, the added ms and the ratio to
    bare, and the spread of the added ms over the rounds (each round's upti run
    minus its own bare run: a paired difference)."""
    rounds, records = short
    med = lambda mode, k: statistics.median(r[mode][k] for r in rounds)
    bare_ms, upti_ms = med("bare", 0), med("upti-run", 0)
    bare_cpu, upti_cpu = med("bare", 1), med("upti-run", 1)
    added = [r["upti-run"][0] - r["bare"][0] for r in rounds]
    added_cpu = [r["upti-run"][1] - r["bare"][1] for r in rounds]
    q1, qm, q3 = quartiles(added)
    c1, cm, c3 = quartiles(added_cpu)
    print(f"short process (probe {a.short_calls} calls, {records} records, median of "
          f"{a.short_reps}): bare {bare_ms:.1f} ms, upti run {upti_ms:.1f} ms, "
          f"added {upti_ms - bare_ms:.1f} ms per process, ratio {upti_ms / bare_ms:.2f}")
    print(f"short process, {len(rounds)} rounds of bare and upti run alternating, load average "
          f"{load_before:.2f} before, {os.getloadavg()[0]:.2f} after: added wall per round "
          f"median {qm:.1f} ms (quartiles {q1:.1f} to {q3:.1f}, min {min(added):.1f}, max "
          f"{max(added):.1f}); CPU (user+system of upti and the program) bare {bare_cpu:.1f} ms, "
          f"upti run {upti_cpu:.1f} ms, added per round median {cm:.1f} ms (quartiles {c1:.1f} "
          f"to {c3:.1f}), ratio {upti_cpu / bare_cpu:.2f}")
    # Where the added time goes: each part's paired difference, median over the rounds.
    part = lambda k: statistics.median(r["upti-run"][k] - r["bare"][k] for r in rounds)
    print(f"short process, added per part (median of the paired differences): before the "
          f"program starts {part(2):.1f} ms, the program's run {part(3):.1f} ms, after its end "
          f"{part(4):.1f} ms")


def main():
    a = parse_args()
    modes = ["bare", "upti-run", "old-writer"] + (["upti-big"] if a.big_ring else [])
    cliloader = shutil.which("cliloader")
    if cliloader:
        modes.append("cliloader")
    print(f"run_overhead: calls={a.calls} kernels={a.kernels} writes={a.writes} reps={a.reps} "
          f"(each figure: the minimum over the repetitions; max for the conversion rate)")
    print("load average before: %.2f %.2f %.2f (%d CPUs)" % (os.getloadavg() + (os.cpu_count(),)))
    print("cliloader: " + (cliloader if cliloader else
                           "not available (not installed; no Debian package clintercept)"))
    work = tempfile.mkdtemp(prefix="upti-run-overhead-")
    best = {}
    runs = {}  # (threads, mode): every repetition's figures, in order
    marks = None
    try:
        run_once(a, "bare", a.threads[0], work)  # warm-up (PoCL's kernel cache), not counted
        short_load = os.getloadavg()[0]
        short = short_process(a, work) if a.short_reps > 0 else None
        for rep in range(a.reps):
            for threads in a.threads:
                for mode in modes:
                    m = run_once(a, mode, threads, work)
                    runs.setdefault((threads, mode), []).append(m)
                    b = best.setdefault((threads, mode), dict(m))
                    for k, v in m.items():
                        b[k] = max(b[k], v) if k in ("rate", "records") else min(b[k], v)
                    # The waits of the run whose ns/call is kept.
                    if mode == "upti-run" and m["ns_call"] == b["ns_call"]:
                        for k in ("waits", "wait_ms", "room_ms"):
                            b[k] = m[k]
        if a.marks > 0:
            marks = marker_row(a, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    if a.reps > 0:
        print_long_rows(a, modes, best, runs)
    if marks is not None:
        print_marks(a, marks)
    if short is not None:
        print_short(a, short, short_load)
    if a.callgrind:
        print_instructions(a)


def print_instructions(a):
    """The instructions a traced clSetKernelArg adds (callgrind_per_call.sh): counted,
    not timed, so the machine's load does not move them."""
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "callgrind_per_call.sh")
    if shutil.which("valgrind") is None:
        print("instructions per clSetKernelArg: valgrind is not installed "
              "(apt-get install valgrind)")
        return
    p = subprocess.run(["sh", script, os.path.abspath(a.build)], capture_output=True, text=True)
    got = dict(re.findall(r"^(traced|bare): ([0-9.]+) instructions", p.stdout, re.M))
    added = re.search(r"^added: ([-+][0-9.]+)", p.stdout, re.M)
    if p.returncode != 0 or len(got) != 2 or added is None:
        sys.exit(f"bench: callgrind_per_call.sh failed ({p.returncode}):\n"
                 f"{p.stdout}{p.stderr[-2000:]}")
    print(f"instructions per clSetKernelArg (callgrind, 1,000 and 11,000 calls, one thread, no "
          f"collector): traced {got['traced']}, bare {got['bare']}, added {added.group(1)}")


def print_long_rows(a, modes, best, runs):
    """The table of the long rows, per thread count and mode, and their paired figures."""
    head = (f"{'threads':>7} {'mode':<10} {'ns/call':>9} {'added':>8} {'ratio':>7} "
            f"{'cpu ns':>8} {'exit ms':>8} {'+exit':>8} {'rss MiB':>8} {'+rss':>7} "
            f"{'wall s':>7} {'ratio':>6}")
    print(head)
    for threads in a.threads:
        bare = best[(threads, "bare")]
        for mode in modes:
            m = best[(threads, mode)]
            ex = "-" if mode == "cliloader" else f"{m['exit_ms'] - bare['exit_ms']:.1f}"
            print(f"{threads:>7} {mode:<10} {m['ns_call']:>9.1f} "
                  f"{m['ns_call'] - bare['ns_call']:>8.1f} "
                  f"{m['ns_call'] / bare['ns_call']:>7.2f} {m['cpu_call']:>8.1f} "
                  f"{m['exit_ms']:>8.1f} {ex:>8} {m['rss_mib']:>8.1f} "
                  f"{m['rss_mib'] - bare['rss_mib']:>7.1f} {m['wall_s']:>7.2f} "
                  f"{m['wall_s'] / bare['wall_s']:>6.2f}")
    for threads in a.threads:
        u = best[(threads, "upti-run")]
        print(f"threads={threads} upti run: total {u['wall_s']:.2f} s "
              f"({u['wall_s'] / best[(threads, 'bare')]['wall_s']:.2f}x bare), "
              f"conversion after the program ended {u['convert_s']:.2f} s, "
              f"records={u['records']} rate={u['rate'] / 1e6:.2f} M records/s; "
              f"the program waited for room {u['waits']} times, {u['wait_ms']:.1f} ms in all "
              f"({u['wait_ms'] * 1e6 / a.calls:.1f} ns per call), {u['room_ms']:.1f} ms of them "
              f"until upti had made room")
    if len(a.threads) > 1:
        lo, hi = a.threads[0], a.threads[-1]
        print(f"ns/call at {hi} threads / at {lo} thread(s): " + ", ".join(
            f"{mode} {best[(hi, mode)]['ns_call'] / best[(lo, mode)]['ns_call']:.2f}x"
            for mode in modes))
        # On a machine with fewer cores than threads, bare calls slow down too: the
        # traced run's scaling relative to bare's, on ns/call and on added CPU ns/call.
        b_lo, b_hi = best[(lo, "bare")], best[(hi, "bare")]
        for mode in modes[1:]:
            m_lo, m_hi = best[(lo, mode)], best[(hi, mode)]
            wall = (m_hi["ns_call"] / b_hi["ns_call"]) / (m_lo["ns_call"] / b_lo["ns_call"])
            add_lo = m_lo["cpu_call"] - b_lo["cpu_call"]
            add_hi = m_hi["cpu_call"] - b_hi["cpu_call"]
            cpu = add_hi / add_lo if add_lo > 0 else float("nan")
            print(f"{mode}: ratio to bare at {hi} threads / at {lo}: {wall:.2f}x; "
                  f"added cpu ns/call at {hi} / at {lo}: {cpu:.2f}x")


    for threads in a.threads:
        # Paired: each repetition's upti run against its own bare run (same load).
        pairs = [u["ns_call"] - b["ns_call"]
                 for b, u in zip(runs[(threads, "bare")], runs[(threads, "upti-run")])]
        wall = [u["wall_s"] / b["wall_s"]
                for b, u in zip(runs[(threads, "bare")], runs[(threads, "upti-run")])]
        q1, qm, q3 = quartiles(pairs)
        w1, wm, w3 = quartiles(wall)
        u = runs[(threads, "upti-run")]
        coll = statistics.median(m["collector_ns_record"] for m in u)
        after = statistics.median(m["convert_s"] for m in u)
        waits = statistics.median(m["wait_ms"] for m in u)
        waited = statistics.median(share_of_run(m, "wait_ms") for m in u)
        room = statistics.median(m["room_ms"] for m in u)
        roomed = statistics.median(share_of_run(m, "room_ms") for m in u)
        print(f"threads={threads} paired over {len(pairs)} repetitions (median, quartiles): "
              f"added wall ns per clSetKernelArg {qm:.1f} ({q1:.1f} to {q3:.1f}); whole run "
              f"{wm:.2f}x bare ({w1:.2f} to {w3:.2f}); after the program's end {after:.3f} s; "
              f"collector CPU {coll:.0f} ns per record; waited for room {waits:.1f} ms "
              f"({waited:.2f}% of the run), of which until upti had made room {room:.1f} ms "
              f"({roomed:.2f}%)")
        # The CPU the whole run takes, against what the machine's CPUs give in the
        # wall time: no run of that much CPU can end sooner than CPU / CPUs.
        cpus = len(os.sched_getaffinity(0))
        b_cpu = statistics.median(m["cpu_ms"] for m in runs[(threads, "bare")])
        b_wall = statistics.median(m["wall_s"] for m in runs[(threads, "bare")]) * 1e3
        u_cpu = statistics.median(m["cpu_ms"] for m in u)
        u_prog = statistics.median(m["program_cpu_ms"] for m in u)
        print(f"threads={threads} CPU of the whole run (median): bare {b_cpu:.0f} ms in "
              f"{b_wall:.0f} ms; upti run {u_cpu:.0f} ms (the program {u_prog:.0f}, upti "
              f"{u_cpu - u_prog:.0f}): on {cpus} CPUs no such run ends before {u_cpu / cpus:.0f} "
              f"ms, {u_cpu / cpus / b_wall:.2f}x bare's wall")
        if a.kernels + a.writes > 0:
            # What tracing a device command costs the thread that enqueues it: UPTI's
            # event and profiling times for each, its record when it completes.
            bare_runs = runs[(threads, "bare")]
            ep = [t["enq_ns"] - b["enq_ns"] for b, t in zip(bare_runs, u)]
            e1, em, e3 = quartiles(ep)
            eb = statistics.median(m["enq_ns"] for m in bare_runs)
            print(f"threads={threads} enqueued commands ({a.kernels} kernels, {a.writes} writes, "
                  f"to their clFinish): bare {eb:.0f} ns per command, added wall ns per command "
                  f"{em:.0f} ({e1:.0f} to {e3:.0f})")
        if a.big_ring:
            g = runs[(threads, "upti-big")]
            gp = [x["ns_call"] - y["ns_call"] for x, y in zip(g, u)]
            print(f"threads={threads} rings of {a.big_ring}: ns per call {best[(threads, 'upti-big')]['ns_call']:.1f} "
                  f"against {best[(threads, 'upti-run')]['ns_call']:.1f} with the default rings "
                  f"(paired median {statistics.median(gp):+.1f} ns), program's peak RSS "
                  f"{best[(threads, 'upti-big')]['rss_mib'] - best[(threads, 'upti-run')]['rss_mib']:+.1f} MiB")


if __name__ == "__main__":
    main()
