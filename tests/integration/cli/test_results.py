#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Alike on purpose (duplicates): like the other test_*.py here it runs `upti` with small
# helpers of its own.
"""What API calls returned, end to end: tests/apps/ocl_results makes failing OpenCL
calls of several kinds under `upti run --sys-trace`; each call's result is checked
exactly in the database (api.result, apis.result), the CSV (api_trace Result), the
JSON and Perfetto timelines (the slice's "result" argument) and
`upti stats --report api_err_sum`; the program's output and exit status are the same
as without upti.

  test_results.py BUILD_DIR
Exit 0 = pass, 1 = fail, 77 = skipped (no OpenCL device).
"""
import csv
import json
import os
import sqlite3
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import traceck  # noqa: E402

BUILD = os.path.abspath(sys.argv[1])
UPTI = os.path.join(BUILD, "bin", "upti")
APP = os.path.join(BUILD, "bin", "ocl_results")
NONE = -(1 << 63)  # UPTI_API_RESULT_NONE as stored in api.result

# The calls of ocl_results.c, in order: (function, its result).
EXPECTED = [
    ("clSetKernelArg", -49),      # CL_INVALID_ARG_INDEX, returned
    ("clCreateBuffer", -61),      # CL_INVALID_BUFFER_SIZE through errcode_ret
    ("clCreateBuffer", -61),      # the same, errcode_ret NULL: only UPTI sees it
    ("clCreateBuffer", 0),        # success, errcode_ret NULL
    ("clGetDeviceInfo", -30),     # CL_INVALID_VALUE
    ("clGetDeviceInfo", 0),
    ("clReleaseMemObject", -38),  # CL_INVALID_MEM_OBJECT
    ("clSVMFree", None),          # void: no result
]


class Fail(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise Fail(msg)


def run(args, expect=0):
    e = {k: v for k, v in os.environ.items()
         if not k.startswith("UPTI_") and k not in ("OPENCL_LAYERS", "NVTX_INJECTION64_PATH")}
    p = subprocess.run(args, env=e, capture_output=True, text=True, errors="replace", timeout=300)
    if expect is not None and p.returncode != expect:
        raise Fail("%s: exit %d, expected %d\nstdout: %s\nstderr: %s"
                   % (" ".join(args), p.returncode, expect, p.stdout, p.stderr))
    return p


def first_calls(rows):
    """The rows of EXPECTED's calls: clSetKernelArg's first call onwards, up to clSVMFree."""
    names = [r[0] for r in rows]
    i = names.index("clSetKernelArg")
    return rows[i:i + len(EXPECTED)]


def main():
    if not os.path.exists(APP):
        print("SKIP: ocl_results not built")
        return 77
    bare = subprocess.run([APP], capture_output=True, text=True, timeout=300)
    if bare.returncode != 0:
        print("SKIP: no OpenCL device (%s)" % bare.stderr.strip())
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        traced = run([UPTI, "run", "--sys-trace", "-f", "db,json,csv,pftrace", "-d", tmp, "-o", "r",
                      "--", APP])
        check(traced.stdout == bare.stdout, "the program's output changed:\n%s\nvs\n%s"
              % (traced.stdout, bare.stdout))

        db = sqlite3.connect(os.path.join(tmp, "r.db"))
        raw = first_calls(db.execute("SELECT s.string, a.result FROM api a JOIN string s"
                                     " ON s.id = a.name_id ORDER BY a.start").fetchall())
        want = [(f, NONE if v is None else v) for f, v in EXPECTED]
        check(raw == want, "api.result: %r, expected %r" % (raw, want))
        view = first_calls(db.execute("SELECT name, result FROM apis ORDER BY start").fetchall())
        check(view == EXPECTED, "apis.result: %r" % view)
        check(db.execute("SELECT count(*) FROM apis WHERE result IS NULL").fetchone()[0] == 1,
              "only clSVMFree has no result")
        release = db.execute("SELECT result FROM apis WHERE name = 'clReleaseContext'").fetchall()
        check(release == [(0,)], "a successful release: %r" % release)

        with open(os.path.join(tmp, "r_api_trace.csv"), newline="") as f:
            rows = list(csv.DictReader(f))
        got = first_calls([(r["Function"], None if r["Result"] == "" else int(r["Result"]))
                           for r in rows])
        check(got == EXPECTED, "CSV: %r" % got)

        doc = json.load(open(os.path.join(tmp, "r.json")))
        evs = sorted((e for e in doc["traceEvents"] if e.get("ph") == "X" and e.get("cat") == "api"),
                     key=lambda e: e["ts"])
        got = first_calls([(e["name"], e.get("args", {}).get("result")) for e in evs])
        check(got == EXPECTED, "JSON: %r" % got)

        pf = traceck.decode_pftrace(os.path.join(tmp, "r.pftrace"))
        sl = sorted(pf["slices"], key=lambda s: s["ts"])
        got = first_calls([(s["name"], s["args"].get("result")) for s in sl
                           if s["name"].startswith("cl")])
        check(got == EXPECTED, "Perfetto: %r" % got)

        p = run([UPTI, "stats", os.path.join(tmp, "r.db"), "--report", "api_err_sum", "-f", "json"])
        rep = {r["name"]: r for r in json.loads(p.stdout)["reports"][0]["rows"]}
        check(sorted(rep) == ["clCreateBuffer", "clGetDeviceInfo", "clReleaseMemObject",
                              "clSetKernelArg"], "functions with errors: %r" % sorted(rep))
        cb = rep["clCreateBuffer"]
        check((cb["errors"], cb["other"], cb["results"]) == (2, 0, "CL_INVALID_BUFFER_SIZE (-61) x2"),
              "clCreateBuffer: %r" % cb)
        check(cb["num_calls"] == db.execute("SELECT count(*) FROM apis WHERE name = 'clCreateBuffer'")
              .fetchone()[0], "clCreateBuffer calls: %r" % cb)
        for name, code in (("clSetKernelArg", "CL_INVALID_ARG_INDEX (-49) x1"),
                           ("clGetDeviceInfo", "CL_INVALID_VALUE (-30) x1"),
                           ("clReleaseMemObject", "CL_INVALID_MEM_OBJECT (-38) x1")):
            check((rep[name]["errors"], rep[name]["results"]) == (1, code), "%s: %r" % (name, rep[name]))
    print("PASS results")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Fail as e:
        print("FAIL: %s" % e)
        sys.exit(1)
