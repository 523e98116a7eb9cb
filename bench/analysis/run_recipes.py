#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""`upti recipe` on many rank databases: a plain loop against Dask.

  run_recipes.py BUILD_DIR [--ranks 64] [--copies 4] [--workers 1,2,4]
                 [--recipes kernels,imbalance] [--keep DIR]

Traces an MPI job of --ranks ranks (OpenMPI's mpirun, oversubscribed) of
ocl_patterns ranked (tests/integration/analysis), one database per rank,
then copies the databases to make --ranks x --copies. For each recipe and
each set (the traced ranks, and the copies), prints the wall time of
`upti recipe --mode local` (one process, a loop over the files) and of
`--mode dask --workers N`, and each Dask time as a ratio to the loop's.
A local Dask cluster's start (a few seconds) is in its time: it is what a
user waits for.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--ranks", type=int, default=64)
    ap.add_argument("--copies", type=int, default=4)
    ap.add_argument("--workers", default="1,2,4")
    ap.add_argument("--recipes", default="kernels,imbalance")
    ap.add_argument("--keep", help="trace into this folder and keep it")
    args = ap.parse_args()
    upti = os.path.join(args.build, "bin", "upti")
    patterns = os.path.join(args.build, "bin", "ocl_patterns")
    mpirun = shutil.which("mpirun")
    if not (os.access(upti, os.X_OK) and os.access(patterns, os.X_OK) and mpirun):
        print("run_recipes: needs BUILD/bin/upti, BUILD/bin/ocl_patterns and mpirun", file=sys.stderr)
        return 2
    work = args.keep or tempfile.mkdtemp(prefix="upti-recipes-")
    traced = os.path.join(work, "traced")
    os.makedirs(traced, exist_ok=True)
    root = ["--allow-run-as-root"] if os.geteuid() == 0 else []
    t0 = time.monotonic()
    r = subprocess.run([mpirun, *root, "--oversubscribe", "-np", str(args.ranks), upti, "run",
                        "-d", traced, "-o", "rank%rank%", "--", patterns, "ranked", "10"],
                       capture_output=True, text=True)
    dbs = sorted(os.path.join(traced, f) for f in os.listdir(traced) if f.endswith(".db"))
    if r.returncode != 0 or len(dbs) != args.ranks:
        print(f"run_recipes: mpirun: rc {r.returncode}, {len(dbs)} databases\n{r.stderr[-2000:]}",
              file=sys.stderr)
        return 1
    print(f"traced {args.ranks} ranks in {time.monotonic() - t0:.1f} s "
          f"({sum(os.path.getsize(d) for d in dbs) / 1e6:.1f} MB of databases)")
    many = [dbs]
    if args.copies > 1:
        copied = os.path.join(work, "copies")
        os.makedirs(copied, exist_ok=True)
        more = []
        for c in range(args.copies):
            for d in dbs:
                dst = os.path.join(copied, f"c{c}-{os.path.basename(d)}")
                shutil.copyfile(d, dst)
                more.append(dst)
        many.append(more)
    workers = [int(w) for w in args.workers.split(",") if w]
    print(f"load average: {os.getloadavg()[0]:.2f}, CPUs: {os.cpu_count()}")
    print(f"{'recipe':<10} {'databases':>9} {'mode':<10} {'wall s':>8} {'ratio':>7}")
    for name in args.recipes.split(","):
        for files in many:
            loop = None
            for mode in ["local"] + [f"dask:{w}" for w in workers]:
                cmd = [upti, "recipe", name, "-f", "csv", "-o", os.devnull]
                if mode != "local":
                    cmd += ["--mode", "dask", "--workers", mode.split(":")[1]]
                t = time.monotonic()
                rr = subprocess.run(cmd + files, capture_output=True, text=True)
                wall = time.monotonic() - t
                if rr.returncode != 0:
                    print(f"run_recipes: {' '.join(cmd[:6])}: rc {rr.returncode}: {rr.stderr[-500:]}",
                          file=sys.stderr)
                    return 1
                loop = loop or wall
                print(f"{name:<10} {len(files):>9} {mode:<10} {wall:>8.2f} {wall / loop:>6.2f}x")
    if not args.keep:
        shutil.rmtree(work)
    return 0


if __name__ == "__main__":
    sys.exit(main())
