#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""`upti stats --report`: every report in every format against its golden file,
on a database built from a committed SQL fixture (reports/fixture.sql).

  test_reports.py BUILD_DIR CASE

goldens   each report × table/csv/json (and the option variants of GOLDEN_RUNS)
          equals reports/golden/NAME byte for byte; every JSON output parses.
          UPTI_UPDATE_GOLDENS=1 rewrites the goldens instead (then read the diff).
values    the numbers worked out by hand in fixture.sql's comments, read from the
          JSON output: the goldens hold what was checked, not what was printed.
errors    unknown report, bad --unit/--format/--top, options without --report:
          one `upti:` line each, exit 2, nothing on stdout; --list names every report.
cut_names names cut in tables are cut between UTF-8 characters (reports and the
          plain summary); --full-names shows them whole; a name that is not valid
          UTF-8 is printed with U+FFFD in every format.
traced    every report in JSON on a database `upti run` wrote (the OpenCL test
          program on PoCL): its counts agree with the database's rows.
docs      docs/cli.md has a bullet per report (**`NAME`**) that names each of its
          JSON keys, and no bullet for a report that does not exist.
Exit 0 = pass, 1 = fail, 77 = skipped.
"""
import json
import os
import sqlite3
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "common", "python"))
import upti_test  # noqa: E402
from upti_test import Fail, check  # noqa: E402

BUILD = os.path.abspath(sys.argv[1])
CASE = sys.argv[2]
UPTI, SYNTH = upti_test.built(BUILD, "bin/upti", "bin/upti-synth")
HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURE = os.path.join(HERE, "reports", "fixture.sql")
GOLDEN = os.path.join(HERE, "reports", "golden")
UPDATE = os.environ.get("UPTI_UPDATE_GOLDENS") == "1"

REPORTS = ["api_sum", "api_err_sum", "kern_sum", "mem_time_sum", "mem_size_sum", "sync_sum", "alloc_sum",
           "marker_sum",
           "marker_gpu_proj_sum", "kern_exec_sum", "queue_busy_sum", "dev_busy_sum"]
FORMATS = {"table": "txt", "csv": "csv", "json": "json"}
# Option variants: (golden file, arguments after DATABASE).
GOLDEN_RUNS = [("%s.%s" % (r, ext), ["--report", r, "--format", f])
               for r in REPORTS for f, ext in FORMATS.items()] + [
    ("kern_sum_us_top2.txt", ["--report", "kern_sum", "--unit", "us", "--top", "2"]),
    ("kern_sum_ms.csv", ["--report", "kern_sum", "--unit", "ms", "-f", "csv"]),
    ("kern_sum_s.json", ["--report", "kern_sum", "--unit", "s", "-f", "json"]),
    ("kernels_demangle_full.txt", ["--report", "kern_sum,kern_exec_sum", "--demangle",
                                   "--full-names"]),
    ("kernels_demangle.json", ["--report", "kern_sum,kern_exec_sum", "--demangle", "-f", "json"]),
    ("two_reports.csv", ["--report", "mem_time_sum,mem_size_sum", "-f", "csv"]),
]


def run(args, expect=0):
    p = subprocess.run([UPTI, "stats"] + args, capture_output=True, timeout=60)
    if expect is not None and p.returncode != expect:
        raise Fail("upti %s: exit %d, expected %d\nstderr: %s"
                   % (" ".join(args), p.returncode, expect, p.stderr.decode(errors="replace")))
    return p


def fixture_db(tmp):
    """An upti database (the writer's own schema and views) holding fixture.sql's rows only."""
    path = os.path.join(tmp, "fixture.db")
    subprocess.run([SYNTH, path, "0", "--quiet"], check=True, timeout=60)
    db = sqlite3.connect(path)
    tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    for t in tables:
        if t != "metadata":
            db.execute("DELETE FROM %s" % t)
    db.executescript(open(FIXTURE, encoding="utf-8").read())
    db.commit()
    db.close()
    return path


def case_goldens(tmp):
    db = fixture_db(tmp)
    missing = []
    for name, args in GOLDEN_RUNS:
        out = run([db] + args).stdout
        if name.endswith(".json"):
            json.loads(out.decode("utf-8"))  # valid JSON and valid UTF-8
        path = os.path.join(GOLDEN, name)
        if UPDATE:
            with open(path, "wb") as f:
                f.write(out)
            continue
        if not os.path.exists(path):
            missing.append(name)
            continue
        want = open(path, "rb").read()
        check(out == want, "%s differs from its golden:\n--- got\n%s\n--- want\n%s"
              % (name, out.decode(errors="replace"), want.decode(errors="replace")))
    check(not missing, "goldens missing: %s" % missing)
    # Every golden file is one of the runs (none left over from a renamed report).
    extra = set(os.listdir(GOLDEN)) - {n for n, _ in GOLDEN_RUNS}
    check(not extra, "goldens without a run: %s" % sorted(extra))
    # All reports in one JSON document: the same rows as one by one.
    doc = json.loads(run([db, "--report", ",".join(REPORTS), "-f", "json"]).stdout)
    check([r["report"] for r in doc["reports"]] == REPORTS, "report order in one document")
    for r in doc["reports"]:
        alone = json.loads(open(os.path.join(GOLDEN, r["report"] + ".json"), "rb").read())
        check(alone["reports"] == [r], "%s differs inside the combined document" % r["report"])
    # -o writes NAME_stats.json instead of stdout.
    p = run([db, "--report", "kern_sum", "-f", "json", "-d", tmp, "-o", "out"])
    check(p.stdout == b"", "stdout with -o: %r" % p.stdout[:100])
    check(open(os.path.join(tmp, "out_stats.json"), "rb").read()
          == open(os.path.join(GOLDEN, "kern_sum.json"), "rb").read(), "-o out_stats.json")
    # Without --report: the default reports (upti run --stats prints the same), in order.
    default = ["api_sum", "api_err_sum", "kern_sum", "mem_time_sum", "mem_size_sum", "sync_sum",
               "marker_sum"]
    check(run([db]).stdout == run([db, "--report", ",".join(default)]).stdout,
          "upti stats without --report is not its default reports")
    check(run([db, "--top", "1", "--unit", "us"]).stdout ==
          run([db, "--report", ",".join(default), "--top", "1", "--unit", "us"]).stdout,
          "--top and --unit without --report")
    doc = json.loads(run([db, "-f", "json"]).stdout)
    check([r["report"] for r in doc["reports"]] == default, "-f json without --report")
    for r in doc["reports"]:
        if r["report"] in REPORTS:
            alone = json.loads(open(os.path.join(GOLDEN, r["report"] + ".json"), "rb").read())
            check(alone["reports"] == [r], "%s differs among the default reports" % r["report"])


def rows(db, report, *extra):
    doc = json.loads(run([db, "--report", report, "-f", "json"] + list(extra)).stdout)
    check(len(doc["reports"]) == 1 and doc["reports"][0]["report"] == report, "one report")
    r = doc["reports"][0]
    for row in r["rows"]:
        check(list(row) == r["columns"], "%s: row keys %s != columns" % (report, list(row)))
    return r["rows"]


def by(rows_, key):
    return {r[key]: r for r in rows_}


def case_values(tmp):
    db = fixture_db(tmp)
    k = by(rows(db, "kern_sum"), "name")
    v = k["_Z6vecaddPfS_S_i"]
    check((v["total_time"], v["instances"], v["avg"], v["med"], v["min"], v["max"])
          == (900, 3, 300.0, 200.0, 100, 600), "vecadd: %r" % v)
    check(v["stddev"] == round(70000 ** 0.5, 1), "vecadd stddev %r" % v["stddev"])
    check(len(k) == 4, "kernels that started: %r" % list(k))  # the unstarted one is out
    total = 900 + 400 + 1000 + 300
    check(v["time_pct"] == round(100.0 * 900 / total, 1), "vecadd percent %r" % v["time_pct"])
    d = by(rows(db, "kern_sum", "--demangle"), "name")
    check("vecadd(float*, float*, float*, int)" in d, "demangled: %r" % list(d))
    check("sycl::_V1::detail::__pf_kernel_wrapper<saxpy>" in d, "SYCL typeinfo name: %r" % list(d))
    check("reduce" in d, "a C name stays as it is")

    a = by(rows(db, "api_sum"), "name")
    check(a["clEnqueueNDRangeKernel"]["num_calls"] == 6, "NDRange calls")
    check(a['weird,"name"\n\x01é']["total_time"] == 10, "control bytes kept in JSON: %r" % list(a))
    e = by(rows(db, "api_err_sum"), "name")
    check(sorted(e) == ["clEnqueueNDRangeKernel", "clEnqueueWriteBuffer"], "functions with errors: %r" % list(e))
    n = e["clEnqueueNDRangeKernel"]
    check((n["num_calls"], n["errors"], n["other"], n["error_pct"], n["results"])
          == (6, 3, 0, 50.0, "CL_INVALID_KERNEL (-48) x2, CL_INVALID_WORK_GROUP_SIZE (-54) x1"), "%r" % n)
    w = e["clEnqueueWriteBuffer"]
    check((w["num_calls"], w["errors"], w["results"]) == (2, 1, "-9999 x1"), "an unnamed code: %r" % w)

    t = by(rows(db, "mem_time_sum"), "direction")
    check(set(t) == {"HOST_TO_DEVICE", "DEVICE_TO_HOST"}, "timed directions: %r" % list(t))
    check((t["HOST_TO_DEVICE"]["total_time"], t["HOST_TO_DEVICE"]["count"]) == (900, 2), "H2D")
    s = by(rows(db, "mem_size_sum"), "direction")
    check(s["HOST_TO_DEVICE"]["total_mb"] == 4.0 and s["HOST_TO_DEVICE"]["med_mb"] == 2.0, "MB")
    check(s["DEVICE_TO_DEVICE"]["total_mb"] == 0.002, "an untimed copy still has its size")
    check(set(s) == {"HOST_TO_DEVICE", "DEVICE_TO_HOST", "DEVICE_TO_DEVICE"}, "no barrier: %r" % list(s))
    y = by(rows(db, "sync_sum"), "operation")
    check(set(y) == {"BARRIER"} and (y["BARRIER"]["total_time"], y["BARRIER"]["count"]) == (150, 1),
          "sync_sum: %r" % y)

    al = by(rows(db, "alloc_sum"), "type")
    dev = al["DEVICE"]
    check((dev["allocs"], dev["frees"], dev["total_mb"], dev["peak_mb"], dev["left_mb"],
           dev["device"], dev["pid"]) == (3, 1, 7.0, 5.0, 3.0, "Fixture GPU", 4242), "%r" % dev)
    check(al["HOST"]["device"] == "host" and al["HOST"]["left_mb"] == 0.001, "%r" % al["HOST"])

    m = by(rows(db, "marker_sum"), "range")
    check((m["iteration"]["instances"], m["iteration"]["total_time"]) == (2, 7000), "iteration")
    check(m["setup"]["style"] == "StartEnd" and m["inner"]["style"] == "PushPop", "styles")
    check("phase é" in m, "UTF-8 range name")

    p = by(rows(db, "marker_gpu_proj_sum"), "range")
    it = p["iteration"]
    check((it["total_proj_time"], it["total_range_time"], it["range_instances"], it["proj_min"],
           it["proj_max"], it["gpu_ops"], it["gpu_time"]) == (3100, 7000, 2, 800, 2300, 7, 2400),
          "iteration projection: %r" % it)
    check((p["inner"]["total_proj_time"], p["inner"]["gpu_ops"]) == (200, 1), "inner")
    # A start/end range takes the operations of any thread.
    check((p["setup"]["total_proj_time"], p["setup"]["gpu_ops"]) == (300, 1), "setup")
    check(p["phase é"]["total_proj_time"] == 1000, "phase")

    e = {(r["api_name"], r["operation"]): r for r in rows(db, "kern_exec_sum")}
    v = e[("clEnqueueNDRangeKernel", "_Z6vecaddPfS_S_i")]
    # API start to kernel start: 200, 300, 400; queue (submit to start): 50, 100, unknown.
    check((v["count"], v["total_latency"], v["latency_min"], v["latency_max"], v["queue_avg"],
           v["queue_min"], v["queue_max"]) == (3, 900, 200, 400, 75.0, 50, 100), "%r" % v)
    c = e[("clEnqueueReadBuffer", "DEVICE_TO_HOST")]
    check((c["latency_avg"], c["queue_avg"], c["exec_avg"]) == (200.0, 50.0, 200.0), "%r" % c)

    q = by(rows(db, "queue_busy_sum"), "queue")
    # 0x10: 400-700, 1300-1400, 1900-2100, 6500-7200 (two kernels), 7700-7900, and
    # the barrier 9050-9200 (it occupies the queue).
    check((q["0x10"]["busy_time"], q["0x10"]["span"], q["0x10"]["ops"], q["0x10"]["op_time"],
           q["0x10"]["busy_pct"]) == (1650, 8800, 7, 1850, 18.8), "0x10: %r" % q["0x10"])
    check((q["0x11"]["busy_time"], q["0x11"]["span"]) == (1000, 1800), "0x11")
    check(q["0x20"]["device"] == "Second GPU", "queue's device")
    dv = by(rows(db, "dev_busy_sum"), "device")
    g = dv["Fixture GPU"]
    check((g["busy_time"], g["span"], g["ops"], g["queues"], g["busy_pct"])
          == (2450, 8800, 9, 2, 27.8), "device 7: %r" % g)
    check(dv["Second GPU"]["busy_pct"] == 100.0, "device 8")

    check(len(rows(db, "kern_sum", "--top", "1")) == 1, "--top 1")
    us = by(rows(db, "kern_sum", "--unit", "us"), "name")["_Z6vecaddPfS_S_i"]
    check((us["total_time"], us["avg"]) == (0.9, 0.3), "--unit us: %r" % us)


def case_cut_names(tmp):
    """Names cut in tables (at 60 characters) are cut between characters: the output
    stays valid UTF-8; --full-names shows them whole."""
    db = fixture_db(tmp)
    con = sqlite3.connect(db)
    long60 = "a" * 56 + "\u00e9" * 5  # 61 characters, the 57th is two bytes
    long48 = "b" * 44 + "\u00e9\u00e9_tail"  # 51 characters, the 45th is two bytes
    con.execute("UPDATE string SET string = ? WHERE id = 13", (long60,))  # reduce
    con.execute("UPDATE string SET string = ? WHERE id = 14", (long48,))
    con.execute("UPDATE kernel_dispatch SET name_id = 14 WHERE id = 7")  # give it a start
    con.execute("UPDATE kernel_dispatch SET start = 1, end = 2 WHERE id = 7")
    # A name that is not valid UTF-8 (a database written by another tool): U+FFFD.
    con.execute("UPDATE string SET string = CAST(X'76FF61' AS TEXT) WHERE id = 10")
    con.commit()
    con.close()
    table = run([db, "--report", "kern_sum"]).stdout.decode("utf-8")
    check(("a" * 56 + "\u00e9...\n") in table, "cut at 60: %r" % table)
    full = run([db, "--report", "kern_sum", "--full-names"]).stdout.decode("utf-8")
    check(long60 + "\n" in full, "--full-names: %r" % full)
    for f in ("json", "csv", "table"):
        try:
            out = run([db, "--report", "kern_sum", "-f", f]).stdout.decode("utf-8")
        except UnicodeDecodeError as e:
            raise Fail("-f %s is not valid UTF-8: %s" % (f, e))
        check("v\ufffda" in out, "-f %s: invalid byte not replaced: %r" % (f, out))
    names = [r["name"] for r in json.loads(run([db, "--report", "kern_sum", "-f", "json"])
                                           .stdout)["reports"][0]["rows"]]
    check("v\ufffda" in names, "JSON names: %r" % names)
    try:
        summary = run([db]).stdout.decode("utf-8")
    except UnicodeDecodeError as e:
        raise Fail("the default reports are not valid UTF-8: %s" % e)
    # Without --report: the same cut (57 characters and "..."), the 51-character name whole.
    check(("a" * 56 + "\u00e9...\n") in summary and (long48 + "\n") in summary,
          "default reports cut at 60: %r" % summary)
    summary = run([db, "--full-names"]).stdout.decode("utf-8")
    check(long60 + "\n" in summary, "default reports --full-names: %r" % summary)


def case_traced(tmp):
    import test_cli  # its BUILD comes from the same argv
    if not test_cli.ocl_ready():
        return 77
    d = os.path.join(tmp, "out")
    subprocess.run([os.path.join(BUILD, "bin", "upti"), "run", "--sys-trace", "-d", d, "-o", "o",
                    "--", test_cli.OCL_APP, "--kernels", "50"], check=True, capture_output=True,
                   timeout=120)
    path = os.path.join(d, "o.db")
    con = sqlite3.connect(path)

    def one(sql):
        return con.execute(sql).fetchone()[0]

    def total(report, key, *extra):
        return sum(r[key] for r in rows(path, report, *extra))

    kernels = one("SELECT count(*) FROM kernel_dispatch WHERE start > 0")
    check(kernels >= 50, "kernels traced: %d" % kernels)
    check(total("kern_sum", "instances") == kernels, "kern_sum instances")
    check(total("api_sum", "num_calls") == one("SELECT count(*) FROM api"), "api_sum calls")
    copies = ("SELECT count(*) FROM memory_copy m JOIN string o ON o.id = m.operation_id"
              " WHERE o.string NOT IN ('BARRIER', 'MARKER')")
    check(total("mem_time_sum", "count") == one(copies + " AND start > 0"), "mem_time_sum count")
    check(total("mem_size_sum", "count") == one(copies), "sizes")
    timed = one("SELECT count(*) FROM (SELECT correlation_id FROM kernel_dispatch WHERE start > 0"
                " UNION ALL SELECT correlation_id FROM memory_copy WHERE start > 0) o"
                " WHERE correlation_id != 0 AND EXISTS (SELECT 1 FROM api a"
                " WHERE a.correlation_id = o.correlation_id)")
    check(total("kern_exec_sum", "count") == timed, "kern_exec_sum count")
    for r in rows(path, "kern_exec_sum"):
        check(r["latency_min"] >= 0, "a device operation began before its API call: %r" % r)
    ops = one("SELECT (SELECT count(*) FROM kernel_dispatch WHERE start > 0 AND end >= start)"
              " + (SELECT count(*) FROM memory_copy WHERE start > 0 AND end >= start)")
    check(total("queue_busy_sum", "ops") == ops and total("dev_busy_sum", "ops") == ops, "ops")
    for report in ("queue_busy_sum", "dev_busy_sum"):
        for r in rows(path, report):
            check(0 < r["busy_time"] <= min(r["span"], r["op_time"]), "%s: %r" % (report, r))
    check(total("dev_busy_sum", "busy_time") <= total("queue_busy_sum", "busy_time"), "busy")
    for report in REPORTS:  # each in each format, at every unit: exit 0, valid JSON
        for unit in ("ns", "s"):
            json.loads(run([path, "--report", report, "-f", "json", "--unit", unit]).stdout)
            run([path, "--report", report, "-f", "csv", "--unit", unit])
            run([path, "--report", report, "--unit", unit, "--demangle"])


def one_line(p, what):
    lines = p.stderr.decode(errors="replace").strip().splitlines()
    check(len(lines) == 1 and lines[0].startswith("upti: "), "%s: stderr %r" % (what, lines))
    check(p.stdout == b"", "%s: stdout %r" % (what, p.stdout[:200]))
    return lines[0]


def case_errors(tmp):
    db = fixture_db(tmp)
    line = one_line(run([db, "--report", "kern_sum,nosuch"], expect=2), "unknown report")
    check("unknown report 'nosuch'" in line, line)
    for r in REPORTS:
        check(r in line, "%s not listed in %r" % (r, line))
    one_line(run([db, "--report", ""], expect=2), "empty --report")
    one_line(run([db, "--report", "kern_sum,"], expect=2), "trailing comma")
    line = one_line(run([db, "--report", "kern_sum,\n,x"], expect=2), "control byte")
    check("unknown report '?'" in line, line)  # the newline shown as '?', on one line
    line = one_line(run([db, "--report", "nosuch\x1b[31m"], expect=2), "escape sequence")
    check("\x1b" not in line, "a control byte reached the terminal: %r" % line)
    for bad in ("ps", "", "NS", "sec"):
        line = one_line(run([db, "--report", "kern_sum", "--unit", bad], expect=2), "unit " + bad)
        check("--unit" in line and "ns, us, ms or s" in line, line)
    for bad in ("xml", "table,json", ""):
        one_line(run([db, "--report", "kern_sum", "--format", bad], expect=2), "format " + bad)
    for bad in ("0", "-1", "x", "1x", "", "99999999999999999999999"):
        line = one_line(run([db, "--report", "kern_sum", "--top", bad], expect=2), "top " + bad)
        check("--top" in line, line)
    for bad in ("kern", "kern_sum,", ",", "kern_sum,,api_sum"):
        line = one_line(run([db, "--report", bad], expect=2), "--report " + bad)
        check(("unknown report 'kern'" if bad == "kern" else "empty report name in '%s'" % bad)
              in line and "(reports: api_sum, api_err_sum, " in line, line)
    one_line(run(["--list", db], expect=2), "--list with a DATABASE")
    one_line(run([os.path.join(tmp, "nosuch.db"), "--report", "kern_sum"], expect=1),
             "missing database")
    # Output that cannot be written (a full disk) is one line and exit 1, never a
    # silent 0 (the summary, --list and the help used to be lost without a word).
    if os.path.exists("/dev/full"):
        for args in ([db], [db, "--report", "kern_sum"], ["--list"], ["--help"]):
            with open("/dev/full", "wb") as full:
                p = subprocess.run([UPTI, "stats"] + args, stdout=full, stderr=subprocess.PIPE,
                                   timeout=60)
            check(p.returncode == 1, "%s > /dev/full: exit %d, expected 1" % (args, p.returncode))
            lines = p.stderr.decode(errors="replace").strip().splitlines()
            check(len(lines) == 1 and lines[0].startswith("upti: cannot write"),
                  "%s > /dev/full: stderr %r" % (args, lines))
    p = run(["--list"])
    names = [l.split()[0] for l in p.stdout.decode().splitlines()]
    check(names == REPORTS, "--list: %r" % names)
    check(all(len(l.split(None, 1)) == 2 for l in p.stdout.decode().splitlines()),
          "--list: a description per report")


def case_docs(tmp):
    db = fixture_db(tmp)
    text = open(os.path.join(HERE, "..", "..", "..", "docs", "cli.md"), encoding="utf-8").read()
    bullets = {}
    for block in text.split("\n- **`")[1:]:
        name, _, body = block.partition("`**")
        bullets[name] = body.split("\n\n")[0]
    check(sorted(bullets) == sorted(REPORTS), "documented reports: %s" % sorted(bullets))
    doc = json.loads(run([db, "--report", ",".join(REPORTS), "-f", "json"]).stdout)
    for r in doc["reports"]:
        body = bullets[r["report"]]
        if r["report"] == "dev_busy_sum":  # "the same per device": queue_busy_sum's keys
            body += bullets["queue_busy_sum"]
        for key in r["columns"]:
            check("`%s`" % key in body or key in ("time_pct", "total_time", "avg", "med", "min",
                                                   "max", "stddev") and "`time_pct`"
                  in bullets["api_sum"], "%s: column %s not documented" % (r["report"], key))


def case_no_clobber(tmp):
    """upti stats -o never replaces a file upti did not write; its own outputs it does."""
    db = fixture_db(tmp)
    out = os.path.join(tmp, "s")
    variants = [([], "txt"), (["-f", "csv"], "csv"), (["--report", "api_sum"], "txt"),
                (["--report", "api_sum,kern_sum", "-f", "csv"], "csv"),
                (["--report", "kern_sum", "--unit", "ms", "-f", "csv"], "csv"),
                (["--report", "api_sum", "-f", "json"], "json")]
    for args, ext in variants:
        path = "%s_stats.%s" % (out, ext)
        with open(path, "w") as f:
            f.write("PRECIOUS\n")
        line = one_line(run([db, "-o", out] + args, expect=1), "foreign %s" % path)
        check("not written by upti" in line and "--force-overwrite" in line, line)
        check(open(path).read() == "PRECIOUS\n", "%s %s: replaced a foreign file" % (args, path))
        run([db, "-o", out, "--force-overwrite"] + args)
        first = open(path, "rb").read()
        check(first != b"PRECIOUS\n" and len(first) > 0, "%s: --force-overwrite wrote nothing" % args)
        p = run([db, "-o", out] + args)  # its own output: replaced, said as written
        check(p.stderr == ("upti: wrote %s\n" % path).encode(), "%s: %r" % (args, p.stderr))
        check(open(path, "rb").read() == first, "%s: a second run differs" % args)
        os.unlink(path)


def main():
    cases = {"goldens": case_goldens, "values": case_values, "errors": case_errors,
             "docs": case_docs, "cut_names": case_cut_names,
             "traced": case_traced, "no_clobber": case_no_clobber}
    return upti_test.run_case(cases, CASE, "upti-reports", needed=(UPTI, SYNTH))


if __name__ == "__main__":
    sys.exit(main())
