#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The `upti` command line: one option grammar for every subcommand, output
directories, option errors, placeholders and the UPTI_* variables.

  test_options.py BUILD_DIR CASE

Exit 0 = pass, 1 = fail, 77 = skipped. Every program runs with the caller's
UPTI_* variables removed (upti_test.run), so a CI environment that sets some
(UPTI_TEST_SCALE, UPTI_SANITIZER_PRELOAD) changes nothing here.
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_cli  # noqa: E402
import upti_test  # noqa: E402
from test_cli import UPTI, UPTX_APP, SYNTH, check, run, db_of, one  # noqa: E402

SOURCE = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
KNOWN = ("%pid%", "%ppid%", "%hostname%", "%rank%", "%argv0%", "%env{NAME}%", "%%")


def said(p):
    """stderr's lines, less the closing 'upti: wrote PATH' lines of a run."""
    return [l for l in upti_test.said(p.stderr) if not l.startswith("upti: wrote ")]


def one_line(p, what):
    """stderr is exactly one line starting with 'upti: ', printable only (besides
    the closing 'upti: wrote PATH' lines of a run)."""
    lines = said(p)
    check(len(lines) == 1 and lines[0].startswith("upti: "),
          "%s: expected one 'upti:' line, got %r" % (what, p.stderr))
    check(all(0x20 <= ord(c) != 0x7f for c in lines[0]), "%s: control bytes in %r" % (what, lines[0]))
    return lines[0]


def trace(tmp, name):
    """A small real trace (uptx markers), returns its path."""
    d = os.path.join(tmp, "src")
    run([UPTI, "run", "--marker-trace", "-d", d, "-o", name, "--", UPTX_APP, "--iterations", "2",
         "--threads", "1"])
    return os.path.join(d, name + ".db")


def case_option_grammar(tmp):
    """-d/-o/-f mean the same in run, export, merge and stats; options before or after positionals."""
    db = trace(tmp, "t")
    db2 = trace(tmp, "u")
    regions = one(db_of(db), "SELECT count(*) FROM region")
    # export: options after the database, -f and --output-file (run's spelling) accepted.
    run([UPTI, "export", db, "-f", "json", "-d", os.path.join(tmp, "e1"), "-o", "x"])
    check(os.path.exists(os.path.join(tmp, "e1", "x.json")), "export -d -o after DATABASE")
    run([UPTI, "export", "--output-file", os.path.join(tmp, "e2"), "--format=csv", db])
    check(os.path.exists(os.path.join(tmp, "e2_region_trace.csv")), "export --output-file, --format=")
    # export -d alone: the database's name in DIR.
    run([UPTI, "export", "-d", os.path.join(tmp, "e3"), db, "--format", "pftrace"])
    check(os.path.exists(os.path.join(tmp, "e3", "t.pftrace")), "export -d alone")
    # merge: options anywhere, -d and -o together, -f adds formats written from the merged database.
    run([UPTI, "merge", "-d", os.path.join(tmp, "m"), db, "-o", "all", "-f", "db,json", db2])
    m = os.path.join(tmp, "m", "all.db")
    check(os.path.exists(m), "merge -d DIR -o NAME: %r" % os.listdir(tmp))
    check(one(db_of(m), "SELECT count(*) FROM region") == 2 * regions, "merged regions")
    check(os.path.exists(os.path.join(tmp, "m", "all.json")), "merge -f json")
    run([UPTI, "merge", db, "--output", os.path.join(tmp, "m2.db")])
    check(os.path.exists(os.path.join(tmp, "m2.db")), "merge --output PATH.db")
    # stats: -f text|table|csv|json, options before or after, --csv kept; -o/-d write a file.
    text = run([UPTI, "stats", db]).stdout
    check("  outer\n" in text, "stats text")
    csv = run([UPTI, "stats", db, "-f", "csv"]).stdout
    check(csv.startswith("Time (%),Total Time (ns),Num Calls,"), "stats -f csv: %r" % csv[:80])
    check(run([UPTI, "stats", "--format", "csv", db]).stdout == csv, "stats --format")
    check(run([UPTI, "stats", "--csv", db]).stdout == csv, "stats --csv")
    check(run([UPTI, "stats", "-f", "text", db]).stdout == text, "stats -f text")
    check(run([UPTI, "stats", "-f", "table", db]).stdout == text, "stats -f table")
    run([UPTI, "stats", db, "-f", "csv", "-d", os.path.join(tmp, "s"), "-o", "st"])
    with open(os.path.join(tmp, "s", "st_stats.csv")) as f:
        check(f.read() == csv, "stats -o: NAME_stats.csv")
    run([UPTI, "stats", db, "-o", os.path.join(tmp, "st2")])
    with open(os.path.join(tmp, "st2_stats.txt")) as f:
        check(f.read() == text, "stats -o (text): NAME_stats.txt")
    # run: -f is --format; --output is --output-file; the program's own options stay its own.
    d = os.path.join(tmp, "r")
    run([UPTI, "run", "--marker-trace", "-f", "db,json", "--output-dir", d, "--output", "r",
         UPTX_APP, "--iterations", "1", "-o", "x", "-f", "csv"])
    check(sorted(os.listdir(d)) == ["r.db", "r.json"], "run -f/--output: %r" % os.listdir(d))
    p = run([UPTI, "run", "-d", d, "sh", "-c", 'printf "%s|" "$@"', "sh", "-o", "y", "--stats", "--"])
    check(p.stdout == "-o|y|--stats|--|", "program arguments: %r" % p.stdout)
    p = run([UPTI, "run", "-d", d, "--", "sh", "-c", 'printf "%s|" "$@"', "sh", "--help"])
    check(p.stdout == "--help|", "after --: %r" % p.stdout)
    # Clustered short flags and -oVALUE.
    run([UPTI, "run", "--marker-trace", "-d", d, "-or2", "--", UPTX_APP, "--iterations", "1"])
    check(os.path.exists(os.path.join(d, "r2.db")), "-oNAME")


def case_output_dirs(tmp):
    """Directories are created with their parents; -d with placeholders leaves no literal directory."""
    os.chdir(tmp)
    run([UPTI, "run", "--marker-trace", "-d", "a/b/c", "-o", "x", "--", UPTX_APP,
         "--iterations", "1"])
    check(os.path.exists(os.path.join(tmp, "a", "b", "c", "x.db")), "-d a/b/c")
    run([UPTI, "run", "--marker-trace", "-o", "newdir/deeper/name", "--", UPTX_APP,
         "--iterations", "1"])
    check(os.path.exists(os.path.join(tmp, "newdir", "deeper", "name.db")), "-o newdir/deeper/name")
    run([UPTI, "run", "--marker-trace", "-d", "pd/pd-%pid%/in", "-o", "y", "--", UPTX_APP,
         "--iterations", "1"])
    made = os.listdir(os.path.join(tmp, "pd"))
    check(len(made) == 1 and re.fullmatch(r"pd-\d+", made[0]), "pd-%%pid%%: %r" % made)
    check(os.path.exists(os.path.join(tmp, "pd", made[0], "in", "y.db")), "expanded -d")
    db = os.path.join(tmp, "a", "b", "c", "x.db")
    run([UPTI, "export", db, "-f", "json", "-d", "e/f"])
    check(os.path.exists(os.path.join(tmp, "e", "f", "x.json")), "export -d e/f")
    run([UPTI, "export", db, "-f", "pftrace", "-o", "g/h/out"])
    check(os.path.exists(os.path.join(tmp, "g", "h", "out.pftrace")), "export -o g/h/out")
    run([UPTI, "merge", db, "-o", "m/n/all.db"])
    check(os.path.exists(os.path.join(tmp, "m", "n", "all.db")), "merge -o m/n/all.db")
    run([UPTI, "stats", db, "-d", "s/t"])
    check(os.path.exists(os.path.join(tmp, "s", "t", "x_stats.txt")), "stats -d s/t")
    # A directory that cannot be made: one line, exit 1, nothing run.
    with open(os.path.join(tmp, "file"), "w"):
        pass
    p = run([UPTI, "run", "-d", "file/sub", "--", "sh", "-c", "echo ran"], expect=1)
    one_line(p, "-d under a file")
    check(p.stdout == "", "the program ran although its output directory could not be made")


def case_option_errors(tmp):
    """Exact option names only; a missing value names the option; bad format lists; one line, exit 2."""
    os.chdir(tmp)
    p = run([UPTI, "run", "--kernel-trac", "--", "true"], expect=2)
    line = one_line(p, "--kernel-trac")
    check("unknown option '--kernel-trac'" in line and "--kernel-trace" in line, line)
    for args in (["run", "--sys"], ["run", "--out", "x", "--", "true"], ["export", "--form", "json", "x.db"],
                 ["stats", "--cs", "x.db"], ["merge", "--out", "m.db", "a.db"]):
        p = run([UPTI] + args, expect=2)
        check("unknown option" in one_line(p, repr(args)), "%r: %r" % (args, p.stderr))
    for args, opt in ((["run", "--output"], "--output"), (["run", "--output-dir"], "--output-dir"),
                      (["export", "x.db", "--format"], "--format"), (["merge", "a.db", "--output"], "--output"),
                      (["stats", "x.db", "--format"], "--format"), (["run", "-o"], "-o"),
                      (["run", "--kernel-include-regex"], "--kernel-include-regex")):
        p = run([UPTI] + args, expect=2)
        line = one_line(p, repr(args))
        check(("option %s needs a value" % opt) in line, "%r: %r" % (args, line))
    for args in (["run", "--format", ",", "--", "true"], ["run", "--format", "", "--", "true"],
                 ["run", "--format", "db,", "--", "true"], ["run", "-f", "db,,json", "--", "true"],
                 ["export", "x.db", "--format", ","], ["export", "x.db", "-f", ""],
                 ["merge", "a.db", "-o", "m.db", "-f", ","], ["stats", "x.db", "-f", ","],
                 ["stats", "x.db", "-f", "text,csv"], ["export", "x.db", "-f", "db"],
                 ["run", "--stats=1", "--", "true"], ["run", "-x", "--", "true"],
                 ["run", "--\x07", "--", "true"], ["export", "a.db", "b.db", "-f", "json"],
                 ["stats", "a.db", "b.db"]):
        p = run([UPTI] + args, expect=2)
        one_line(p, repr(args))
        check(p.stdout == "", "%r printed %r" % (args, p.stdout))
    # An output name that names a folder (it wrote a hidden dd/.db, or ..db).
    for name in ("dd/", ".", "..", "dd/.."):
        for args in (["run", "-o", name, "--", "true"], ["stats", "x.db", "-o", name],
                     ["export", "x.db", "-f", "json", "-o", name], ["merge", "a.db", "-o", name]):
            p = run([UPTI] + args, expect=2)
            line = one_line(p, repr(args))
            check("names a folder, not a file name" in line, "%r: %r" % (args, line))
    check(os.listdir(tmp) == [], "an erroneous command left files: %r" % os.listdir(tmp))


def case_foreign_spellings(tmp):
    """Options as nsys and rocprofv3 spell them get a hint naming upti's (one line, exit 2);
    a numeric -d is obeyed, with one warning that it names the output folder."""
    os.chdir(tmp)
    for args, says in ((["-t", "cuda,nvtx"], "--opencl-trace"), (["--trace=cuda"], "--sys-trace"),
                       (["-y", "5"], "--delay SEC"), (["--output-format", "json"], "-f/--format"),
                       (["--hip-trace"], "--vulkan-trace"), (["--nvtx-trace"], "--marker-trace"),
                       (["-o", "r%q{RANK}"], "%env{VAR}%")):
        p = run([UPTI, "run"] + args + ["--", "true"], expect=2)
        line = one_line(p, repr(args))
        check(says in line, "%r: %r" % (args, line))
    check(os.listdir(tmp) == [], "files left: %r" % os.listdir(tmp))
    p = run([UPTI, "run", "--marker-trace", "-d", "5", "-o", "t", "--", UPTX_APP, "--iterations", "1",
             "--threads", "1"])
    warn = [l for l in upti_test.said(p.stderr) if "warning" in l]
    check(warn == ["upti: run: warning: -d 5 names the output folder '5' (for a duration, as "
                   "nsys's -d, upti's is --duration SEC)"], "%r" % p.stderr)
    check(os.path.exists(os.path.join(tmp, "5", "t.db")), "the trace is in 5/")


def case_unknown_placeholder(tmp):
    """%foo% is an error that lists the known placeholders, from -o, -d and UPTI_TRACE_OUTPUT."""
    os.chdir(tmp)
    for args in (["-o", "x-%foo%"], ["-d", "pd-%bar%"], ["-o", "50%"]):
        p = run([UPTI, "run", "--marker-trace"] + args + ["--", UPTX_APP, "--iterations", "1"],
                expect=2)
        line = one_line(p, repr(args))
        check("placeholder" in line and all(k in line for k in KNOWN), "%r: %r" % (args, line))
    check(os.listdir(tmp) == [], "files left: %r" % os.listdir(tmp))
    # Without the CLI: the tool says so once, names the variable and uses the default name.
    lib = os.path.join(test_cli.BUILD, "lib", "libupti-trace.so")
    p = run([UPTX_APP, "--iterations", "1", "--threads", "1"],
            env={"UPTI_TOOL_LIBRARIES": lib, "UPTI_TRACE_KINDS": "marker_api",
                 "UPTI_TRACE_OUTPUT": os.path.join(tmp, "o-%foo%")})
    line = one_line(p, "UPTI_TRACE_OUTPUT")
    check("UPTI_TRACE_OUTPUT" in line and "%foo%" in line and all(k in line for k in KNOWN), line)
    dbs = [f for f in os.listdir(tmp) if f.endswith(".db")]
    check(len(dbs) == 1 and dbs[0].startswith("upti-upti-test-uptx-app-"), "default name: %r" % dbs)


def case_env_vars(tmp):
    """Each UPTI_* variable has one meaning; a bad value gives one line naming it and its forms."""
    os.chdir(tmp)
    app = [UPTX_APP, "--iterations", "1", "--threads", "1"]
    # Good values: silent, and the trace is complete.
    good = {"UPTI_RING_FULL_WAIT_MS": "2s", "UPTI_TRACE_BUFFER_SIZE": "64k",
            "UPTI_VK_DISABLE_CALIBRATED": "1", "UPTI_OPENCL_COMPLETION": "callback",
            "UPTI_CLOCK": "gettime"}
    p = run([UPTI, "run", "--marker-trace", "-d", "g", "-o", "g", "--"] + app, env=good)
    check(said(p) == [], "good values were not silent: %r" % p.stderr)
    check(upti_test.said(p.stderr) == ["upti: wrote g/g.db"], "the output not said: %r" % p.stderr)
    check(os.path.exists(os.path.join(tmp, "g", "g.db")), "no trace with good values")
    bad = (("UPTI_RING_FULL_WAIT_MS", "10k", ("ms", "s"), ("bytes",)),
           ("UPTI_RING_FULL_WAIT_MS", "0", ("ms",), ()),
           ("UPTI_TRACE_BUFFER_SIZE", "12q", ("bytes", "k", "m", "g"), ("ms",)),
           ("UPTI_VK_DISABLE_CALIBRATED", "maybe", ("0", "1"), ()),
           ("UPTI_OPENCL_COMPLETION", "bogus", ("poll", "callback"), ()),
           ("UPTI_CLOCK", "rdtsc", ("gettime", "tsc"), ()))
    for var, value, want, unwanted in bad:
        # Only the layers read UPTI_OPENCL_COMPLETION and UPTI_VK_DISABLE_CALIBRATED:
        # without `upti run` (which checks them before the program starts) a
        # marker-only program never does.
        for how in (("run",) if var in ("UPTI_OPENCL_COMPLETION", "UPTI_VK_DISABLE_CALIBRATED")
                    else ("run", "direct")):
            d = os.path.join(tmp, "%s-%s-%s" % (how, var, value))
            if how == "run":
                p = run([UPTI, "run", "--marker-trace", "-d", d, "-o", "t", "--"] + app,
                        env={var: value})
            else:
                lib = os.path.join(test_cli.BUILD, "lib", "libupti-trace.so")
                p = run(app, env={var: value, "UPTI_TOOL_LIBRARIES": lib,
                                  "UPTI_TRACE_KINDS": "marker_api",
                                  "UPTI_TRACE_OUTPUT": os.path.join(d, "t")})
            line = one_line(p, "%s %s=%s" % (how, var, value))
            check(("%s='%s'" % (var, value)) in line, line)
            for w in want:
                check(re.search(r"\b%s\b" % re.escape(w), line), "%r lacks %r" % (line, w))
            for w in unwanted:
                check(not re.search(r"\b%s\b" % re.escape(w), line), "%r says %r" % (line, w))
            check(os.path.exists(os.path.join(d, "t.db")), "%s %s=%s: no trace" % (how, var, value))
            if var == "UPTI_TRACE_BUFFER_SIZE":  # one default, with or without `upti run`
                check(line.endswith("using 1 MiB"), "%s: %r does not end with 1 MiB" % (how, line))
    # Under upti run a full ring waits 1 s by default (50 ms without it): a bad value
    # names the default that the program's processes get.
    d = os.path.join(tmp, "run-full-wait")
    p = run([UPTI, "run", "--marker-trace", "-d", d, "-o", "t", "--"] + app,
            env={"UPTI_RING_FULL_WAIT_MS": "-5"})
    line = one_line(p, "run UPTI_RING_FULL_WAIT_MS=-5")
    check(line.startswith("upti: UPTI_RING_FULL_WAIT_MS='-5' is not a duration")
          and line.endswith("using 1 s"), line)


def case_env_docs(tmp):
    """Every UPTI_* variable the sources read or set is documented in docs/cli.md."""
    names = set()
    pat = re.compile(r'"(UPTI_[A-Z0-9_]+)"')
    for root, _, files in os.walk(os.path.join(SOURCE, "src")):
        for f in files:
            if f.endswith((".c", ".h")):
                with open(os.path.join(root, f), errors="replace") as fh:
                    names.update(pat.findall(fh.read()))
    check(len(names) >= 15, "found only %r" % sorted(names))
    with open(os.path.join(SOURCE, "docs", "cli.md")) as fh:
        doc = fh.read()
    missing = sorted(n for n in names if ("`%s`" % n) not in doc and ("`%s=" % n) not in doc)
    check(not missing, "not in docs/cli.md: %s" % ", ".join(missing))


CASES = {name[5:]: fn for name, fn in globals().items() if name.startswith("case_")}


def main():
    return upti_test.run_case(CASES, sys.argv[2], "upti-opt", needed=(UPTI, UPTX_APP, SYNTH))


if __name__ == "__main__":
    sys.exit(main())
