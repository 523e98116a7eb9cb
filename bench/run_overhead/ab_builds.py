#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Two builds of UPTI against each other, in one sitting, with bare runs between.

    bench/run_overhead/ab_builds.py BUILD_A BUILD_B [--threads 1,8] [--rounds R]
        [--calls N] [--kernels K] [--writes W]

What a change does to the whole traced run moves less than what one sitting of
run_overhead.py differs from the next (its ratios move by a tenth or more
between sittings, for the same build): this runs both builds in the same
sitting, alternating. Per thread count, ROUNDS rounds; each round runs the probe
(bench_run_overhead_probe, under bench_run_overhead_wait, as run_overhead.py
does) bare, under BUILD_A's `upti run --sys-trace` and under BUILD_B's, in an
order that rotates from round to round, after one run of each that is not
counted. The bare runs use BUILD_A's probe.

Per build it prints medians over the rounds:
  - the whole run's wall time, and its ratio to the same round's bare run;
  - the CPU time of upti and the program together (user + system);
  - the time from the program's end to upti's;
  - the program's waits for ring room, in all and until upti had made room.
Then, paired by round, B's wall and CPU less A's: median and quartiles.
No assertion on any figure: it measures, it does not judge.
"""
import argparse
import glob
import os
import shutil
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_overhead  # noqa: E402  (its runner, environment and database readers)


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("build_a")
    p.add_argument("build_b")
    p.add_argument("--threads", default="1,8")
    p.add_argument("--rounds", type=int, default=14)
    p.add_argument("--calls", type=int, default=2000000)
    p.add_argument("--kernels", type=int, default=20000)
    p.add_argument("--writes", type=int, default=10000)
    return p.parse_args()


def one_run(a, build, traced, threads, work):
    """One run of the probe: wall ms, CPU ms, ms after the program's end, waits ms, room ms."""
    probe_build = os.path.abspath(a.build_a if not traced else build)
    probe = [os.path.join(probe_build, "bin", "bench_run_overhead_wait"),
             os.path.join(probe_build, "bin", "bench_run_overhead_probe"),
             str(a.calls), str(threads), str(a.kernels), str(a.writes)]
    out = tempfile.mkdtemp(dir=work)
    cmd = probe
    if traced:
        cmd = [os.path.join(probe_build, "bin", "upti"), "run", "--sys-trace", "-d", out, "-o",
               "ab-%pid%", "--"] + probe
    f, wall_ns, cpu_ms = run_overhead.run_timed(cmd, run_overhead.clean_env(), out,
                                                f"{build if traced else 'bare'} threads={threads}")
    ended_ns = time.monotonic_ns()
    m = {"wall": wall_ns / 1e6, "cpu": cpu_ms}
    if traced:
        dbs = glob.glob(os.path.join(out, "ab-*.db"))
        if len(dbs) != 1:
            sys.exit(f"bench: upti run left {len(dbs)} databases in {out}")
        m["after"] = (ended_ns - int(f["child_exited_ns"])) / 1e6
        _, m["waits"], m["room"] = run_overhead.ring_waits(dbs[0])
    shutil.rmtree(out)
    return m


def quartiles(xs):
    if len(xs) < 2:
        return xs[0], xs[0]
    q = statistics.quantiles(xs, n=4)
    return q[0], q[2]


def main():
    a = parse_args()
    work = tempfile.mkdtemp(prefix="upti-ab-")
    modes = (("bare", None), ("A", a.build_a), ("B", a.build_b))
    try:
        print(f"ab_builds: A={a.build_a} B={a.build_b} calls={a.calls} kernels={a.kernels} "
              f"writes={a.writes} rounds={a.rounds}; load average before: "
              f"{' '.join('%.2f' % x for x in os.getloadavg())}")
        # Not counted: PoCL builds the probe's kernel into its cache on a first run,
        # and each build's files come into the page cache.
        for name, build in modes:
            one_run(a, build, build is not None, 1, work)
        for threads in (int(t) for t in a.threads.split(",")):
            got = {name: [] for name, _ in modes}
            for r in range(a.rounds):
                order = modes[r % 3:] + modes[:r % 3]
                for name, build in order:
                    got[name].append(one_run(a, build, build is not None, threads, work))
            bare = got["bare"]
            bare_wall = statistics.median(b["wall"] for b in bare)
            bare_cpu = statistics.median(b["cpu"] for b in bare)
            for name in ("A", "B"):
                runs = got[name]
                med = {k: statistics.median(m[k] for m in runs) for k in runs[0]}
                ratio = statistics.median(m["wall"] / b["wall"] for m, b in zip(runs, bare))
                print(f"threads={threads} {name}: whole run {med['wall']:.1f} ms ({ratio:.2f}x "
                      f"bare's {bare_wall:.1f} ms), CPU {med['cpu']:.1f} ms (bare {bare_cpu:.1f}), "
                      f"after the program's end {med['after']:.1f} ms, waited for room "
                      f"{med['waits']:.1f} ms, of which until upti had made room "
                      f"{med['room']:.1f} ms")
            for k, what in (("wall", "whole run"), ("cpu", "CPU")):
                d = [b[k] - x[k] for x, b in zip(got["A"], got["B"])]
                lo, hi = quartiles(d)
                print(f"threads={threads} B - A, paired over {a.rounds} rounds: {what} "
                      f"{statistics.median(d):+.1f} ms ({lo:+.1f} to {hi:+.1f})")
        print(f"load average after: {' '.join('%.2f' % x for x in os.getloadavg())}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
