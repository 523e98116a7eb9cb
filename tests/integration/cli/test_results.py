#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""What API calls returned, end to end: tests/apps/ocl_results makes failing OpenCL
calls of several kinds under `upti run --sys-trace`; each call's result is checked
exactly in the database (api.result, apis.result), the CSV (api_trace Result), the
JSON and Perfetto timelines (the slice's "result" argument) and
`upti stats --report api_err_sum`; the program's output and exit status are the same
as without upti. The vulkan case: tests/apps/vk_results's VkResults (VK_NOT_READY,
VK_TIMEOUT, an allocation error, VK_SUCCESS, a void call) in the database and the
report.

  test_results.py BUILD_DIR opencl|vulkan
Exit 0 = pass, 1 = fail, 77 = skipped (no OpenCL or Vulkan device).
"""
import csv
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "..", "..", "common", "python")]
import traceck  # noqa: E402
import upti_test  # noqa: E402
from upti_test import SKIP, check, one  # noqa: E402

BUILD = os.path.abspath(sys.argv[1])
UPTI, APP, VK_APP = upti_test.built(BUILD, "bin/upti", "bin/ocl_results", "bin/vk_results")
CASE = sys.argv[2]
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


def run(args, expect=0):
    return upti_test.run(args, expect=expect, timeout=300)


def first_calls(rows):
    """The rows of EXPECTED's calls: clSetKernelArg's first call onwards, up to clSVMFree."""
    names = [r[0] for r in rows]
    i = names.index("clSetKernelArg")
    return rows[i:i + len(EXPECTED)]


def err_report(db_path):
    """upti stats --report api_err_sum's rows by function name."""
    p = run([UPTI, "stats", db_path, "--report", "api_err_sum", "-f", "json"])
    return {r["name"]: r for r in json.loads(p.stdout)["reports"][0]["rows"]}


def check_merge_old(tmp, path):
    """upti merge of this database and one written before api.result (the column and the views
    dropped from a copy): the old rows' result is NULL, the new ones' kept."""
    old = os.path.join(tmp, "old.db")
    shutil.copy(path, old)
    o = sqlite3.connect(old)
    views = [n for (n,) in o.execute("SELECT name FROM sqlite_master WHERE type = 'view'")]
    for v in views:
        o.execute('DROP VIEW "%s"' % v)
    o.execute("ALTER TABLE api DROP COLUMN result")
    o.commit()
    o.close()
    run([UPTI, "merge", "-d", tmp, "-o", "both", path, old])
    m = sqlite3.connect(os.path.join(tmp, "both.db"))
    n = one(sqlite3.connect(path), "SELECT count(*) FROM api")
    check(one(m, "SELECT count(*) FROM api") == 2 * n, "merged rows")
    check(one(m, "SELECT count(*) FROM api WHERE result IS NULL") == n, "the old rows: NULL")
    check(one(m, "SELECT count(*) FROM apis WHERE result = -49") == 1, "the new rows: kept")


def case_vulkan(tmp):
    if "ASAN_OPTIONS" not in os.environ and "TSAN_OPTIONS" not in os.environ:
        return vulkan_results(tmp)
    # The driver's own allocation of 2^62 bytes fails bare; ASan would abort on it instead.
    # Allowed to fail, ASan warns: the warnings go to a folder of this case's (a file in the
    # build's report folder fails CI), where nothing else may be.
    with tempfile.TemporaryDirectory() as logs:
        for tool in ("ASAN", "TSAN"):
            if tool + "_OPTIONS" in os.environ:
                os.environ[tool + "_OPTIONS"] += (":allocator_may_return_null=1:log_path="
                                                  + os.path.join(logs, tool.lower()))
        if "UBSAN_OPTIONS" in os.environ:  # (a combined runtime logs through UBSan's path)
            os.environ["UBSAN_OPTIONS"] += ":log_path=" + os.path.join(logs, "ubsan")
        rc = vulkan_results(tmp)
        said = [line for name in sorted(os.listdir(logs))
                for line in open(os.path.join(logs, name)).read().splitlines() if line.strip()]
        other = [line for line in said
                 if not re.search(r"WARNING: (Address|Thread)Sanitizer failed to allocate 0x4000000000000000", line)]
        check(not other, "sanitizer reports:\n" + "\n".join(other))
        return rc


def vulkan_results(tmp):
    if not os.path.exists(VK_APP):
        print("SKIP: vk_results not built")
        return SKIP
    # As the Vulkan tests do: under LeakSanitizer the driver is preloaded.
    upti_test.preload_icds(os.environ)
    bare = subprocess.run([VK_APP], capture_output=True, text=True, timeout=300)
    if bare.returncode != 0:
        print("SKIP: no Vulkan device (%s)" % bare.stderr.strip())
        return SKIP
    alloc = int(bare.stderr.split("vkAllocateMemory: ")[1].split()[0])
    check(alloc < 0, "vkAllocateMemory returned %d" % alloc)
    traced = run([UPTI, "run", "--sys-trace", "-d", tmp, "-o", "v", "--", VK_APP])
    check(traced.stdout == bare.stdout, "the program's output changed:\n%s\nvs\n%s"
          % (traced.stdout, bare.stdout))
    db = sqlite3.connect(os.path.join(tmp, "v.db"))
    got = {n: [r for (r,) in db.execute("SELECT result FROM apis WHERE name = ? ORDER BY start",
                                       (n,))]
           for n in ("vkGetFenceStatus", "vkWaitForFences", "vkAllocateMemory", "vkResetFences",
                     "vkDestroyFence")}
    want = {"vkGetFenceStatus": [1], "vkWaitForFences": [2], "vkAllocateMemory": [alloc],
            "vkResetFences": [0], "vkDestroyFence": [None]}
    check(got == want, "apis.result: %r, expected %r" % (got, want))
    rep = err_report(os.path.join(tmp, "v.db"))
    check(sorted(rep) == ["vkAllocateMemory", "vkGetFenceStatus", "vkWaitForFences"],
          "functions: %r" % sorted(rep))
    f, w, a = rep["vkGetFenceStatus"], rep["vkWaitForFences"], rep["vkAllocateMemory"]
    check((f["errors"], f["other"], f["results"]) == (0, 1, "VK_NOT_READY (1) x1"), "%r" % f)
    check((w["errors"], w["other"], w["results"]) == (0, 1, "VK_TIMEOUT (2) x1"), "%r" % w)
    check((a["num_calls"], a["errors"], a["other"]) == (1, 1, 0) and ("(%d) x1" % alloc)
          in a["results"] and a["results"].startswith("VK_ERROR_"), "%r" % a)
    print("PASS results")
    return 0


def case_opencl(tmp):
    if not os.path.exists(APP):
        print("SKIP: ocl_results not built")
        return SKIP
    bare = subprocess.run([APP], capture_output=True, text=True, timeout=300)
    if bare.returncode != 0:
        print("SKIP: no OpenCL device (%s)" % bare.stderr.strip())
        return SKIP
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

    check_merge_old(tmp, os.path.join(tmp, "r.db"))
    rep = err_report(os.path.join(tmp, "r.db"))
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
    sys.exit(upti_test.run_case({"opencl": case_opencl, "vulkan": case_vulkan}, CASE, "upti-results"))
