#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""`upti run -i FILE` and --output-config (docs/cli.md, "Options in a file").

  test_config.py BUILD_DIR CASE

same_settings   a JSON file, a YAML file and the command line give the same
                resolved settings (NAME_config.json), equal to the expected
                object; the database keeps them in metadata "config"; the
                written file read back with -i gives them again.
passes          "jobs" with two passes over the OpenCL program: two traces
                (NAME-pass1, NAME-pass2, and %pass%), each with its own kinds
                and exact rows; options at the top level reach every pass.
cli_override    options on the command line override the file's.
signal          SIGTERM to upti run ends the running pass; no later pass starts.
recover         `upti recover` of a killed run keeps the settings (metadata, file).
errors          a malformed file, an unknown key, a wrong type, a bad value,
                a bad value in the second pass: one exact line, exit 2, and
                nothing written (not even the first pass).

Exit 0 = pass, 1 = fail, 77 = skipped.
"""
import json
import os
import sqlite3
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "common", "python"))
import upti_test  # noqa: E402
from upti_test import SKIP, check, one, run  # noqa: E402

BUILD = os.path.abspath(sys.argv[1])
UPTI, UPTX_APP, OCL_APP = upti_test.built(
    BUILD, "bin/upti", "bin/upti-test-uptx-app", "bin/upti-test-ocl-e2e")
HELP = " (see 'upti run --help')"


def write(path, text):
    with open(path, "w") as f:
        f.write(text)
    return path


def files_in(d):
    out = []
    for root, _, names in os.walk(d):
        out += [os.path.relpath(os.path.join(root, n), d) for n in names]
    return sorted(out)


# uptx_app --iterations 3 --threads 2: per thread a name, a start/stop range and
# 3 x (push, push, mark, pop, pop); the capture range "outer", repeat:2, keeps
# the first two "outer" ranges: 2 x (push, push, mark, pop, pop).
# One thread: a window is the whole process's, so a second thread's markers would fall
# into it or not depending on how the threads interleave.
APP = [UPTX_APP, "--iterations", "3", "--threads", "1"]

JSON_FILE = """{
  "marker-trace": true,
  "kernel_trace": true,
  "format": ["db", "json"],
  "kernel-include-regex": "^kern_",
  "kernel-iteration-range": [1, "3-4"],
  "capture-range": "marker",
  "capture-range-name": "outer",
  "capture-range-end": "repeat:2",
  "log-level": "error",
  "output-config": true
}
"""

YAML_FILE = """# the same options as JSON_FILE
marker-trace: true
kernel_trace: true
format:
  - db
  - json
kernel-include-regex: "^kern_"
kernel-iteration-range: [1, 3-4]
capture-range: marker
capture-range-name: outer
capture-range-end: repeat:2
log-level: error
output-config: true
"""

CLI = ["--marker-trace", "--kernel-trace", "--format", "db,json",
       "--kernel-include-regex", "^kern_", "--kernel-iteration-range", "1,3-4",
       "--capture-range=marker", "--capture-range-name", "outer", "--capture-range-end",
       "repeat:2", "--log-level", "error", "--output-config"]

EXPECTED = {
    "upti-config": 1, "opencl-trace": False, "vulkan-trace": False, "kernel-trace": True,
    "memory-copy-trace": False, "memory-alloc-trace": False, "marker-trace": True,
    "runtime-trace": False,
    "sys-trace": False, "stats": False, "kernel-include-regex": "^kern_",
    "kernel-exclude-regex": None, "args": False, "list": False, "force-overwrite": False,
    "capture-range": "marker", "capture-range-name": "outer", "capture-range-end": "repeat:2",
    "start-paused": False, "delay": None, "duration": None, "collection-period": None,
    "kernel-iteration-range": "1,3-4", "log-level": "error", "output-config": True,
    "stats-report": None, "output-dir": None, "output": "r", "format": ["db", "json"]}


def case_same_settings(tmp):
    texts = {}
    for how, opts in (("json", ["-i", write(os.path.join(tmp, "job.json"), JSON_FILE)]),
                      ("yaml", ["-i", write(os.path.join(tmp, "job.yaml"), YAML_FILE)]),
                      ("yml", ["--input=" + write(os.path.join(tmp, "job.yml"), YAML_FILE)]),
                      ("cli", CLI)):
        d = os.path.join(tmp, how)
        run([UPTI, "run", "-d", d, "-o", "r"] + opts + ["--"] + APP)
        check(files_in(d) == ["r.db", "r.json", "r_config.json"], "%s: files %r" % (how, files_in(d)))
        text = open(os.path.join(d, "r_config.json")).read()
        check(text.startswith('{\n  "upti-config": 1,\n'), "%s: head %r" % (how, text[:40]))
        got = json.loads(text)
        want = dict(EXPECTED, **{"output-dir": d})
        check(got == want, "%s: resolved settings\n%r\nexpected\n%r" % (how, got, want))
        check(list(got) == list(want), "%s: key order %r" % (how, list(got)))
        db = sqlite3.connect(os.path.join(d, "r.db"))
        check(one(db, "SELECT value FROM metadata WHERE key = 'config'") == text,
              "%s: metadata config differs from r_config.json" % how)
        # the capture range took effect: 2 windows of push, push, mark, pop, pop
        check(one(db, "SELECT count(*) FROM marker") == 10, "%s: %d marker rows" %
              (how, one(db, "SELECT count(*) FROM marker")))
        texts[how] = text.replace(d, "D")
    check(len(set(texts.values())) == 1, "the resolved settings differ: %r" % texts)
    # The written file, read back with -i, resolves to itself.
    again = os.path.join(tmp, "again")
    run([UPTI, "run", "-i", os.path.join(tmp, "json", "r_config.json"), "-d", again, "--"] + APP)
    check(open(os.path.join(again, "r_config.json")).read().replace(again, "D") == texts["json"],
          "r_config.json read back resolves differently")
    # Without --output-config: no file, but the metadata.
    d = os.path.join(tmp, "plain")
    run([UPTI, "run", "-d", d, "-o", "p", "--marker-trace", "--"] + APP)
    check(files_in(d) == ["p.db"], "files %r" % files_in(d))
    got = json.loads(one(sqlite3.connect(os.path.join(d, "p.db")),
                         "SELECT value FROM metadata WHERE key = 'config'"))
    check(got["marker-trace"] is True and got["sys-trace"] is False and got["format"] == ["db"]
          and got["output-config"] is False and got["log-level"] == "warning"
          and got["capture-range"] == "none" and got["capture-range-end"] is None
          and got["output"] == "p", "metadata config %r" % got)
    # No kind asked for: --sys-trace, the default, is what it resolves to.
    d = os.path.join(tmp, "default")
    run([UPTI, "run", "-d", d, "-o", "p", "--"] + APP)
    got = json.loads(one(sqlite3.connect(os.path.join(d, "p.db")),
                         "SELECT value FROM metadata WHERE key = 'config'"))
    check(got["sys-trace"] is True and got["output-dir"] == d, "default kinds: %r" % got)


def ocl_ready():
    return upti_test.ocl_ready(BUILD, OCL_APP)


OCL_CALLS = 23  # ocl_e2e's API calls besides its clEnqueueNDRangeKernel ones


def case_passes(tmp):
    if not ocl_ready():
        return SKIP
    d = os.path.join(tmp, "out")
    job = write(os.path.join(tmp, "passes.json"), json.dumps({
        "output-dir": d, "output": "t", "output-config": True,
        "jobs": [{"opencl-trace": True},
                 {"kernel-trace": True, "format": "db,csv"}]}))
    p = run([UPTI, "run", "-i", job, "--", OCL_APP, "--kernels", "5"])
    check(p.stdout.count("ocl_e2e: a=5 b=0") == 2, "the program ran %d times: %r"
          % (p.stdout.count("ocl_e2e: a=5"), p.stdout))
    files = files_in(d)
    check(files == ["t-pass1.db", "t-pass1_config.json", "t-pass2.db", "t-pass2_config.json",
                    "t-pass2_kernel_trace.csv"], "files %r" % files)
    db1 = sqlite3.connect(os.path.join(d, "t-pass1.db"))
    db2 = sqlite3.connect(os.path.join(d, "t-pass2.db"))
    check(one(db1, "SELECT count(*) FROM apis") == OCL_CALLS + 5, "pass 1 API rows %d"
          % one(db1, "SELECT count(*) FROM apis"))
    check(one(db1, "SELECT count(*) FROM kernel_dispatch") == 0, "pass 1 kernel rows")
    check(one(db2, "SELECT count(*) FROM kernel_dispatch") == 5, "pass 2 kernel rows %d"
          % one(db2, "SELECT count(*) FROM kernel_dispatch"))
    check(one(db2, "SELECT count(*) FROM apis") == 0, "pass 2 API rows")
    c1 = json.load(open(os.path.join(d, "t-pass1_config.json")))
    c2 = json.load(open(os.path.join(d, "t-pass2_config.json")))
    check(c1["opencl-trace"] and not c1["kernel-trace"] and c1["format"] == ["db"]
          and c1["output"] == "t-pass1", "pass 1 settings %r" % c1)
    check(c2["kernel-trace"] and not c2["opencl-trace"] and c2["format"] == ["db", "csv"]
          and c2["output"] == "t-pass2", "pass 2 settings %r" % c2)
    # %pass% in the name: no suffix; in YAML, with a pass turning a top-level switch off.
    d = os.path.join(tmp, "named")
    job = write(os.path.join(tmp, "named.yaml"),
                "output-dir: %s\noutput: run%%pass%%-of-two\nopencl-trace: true\n"
                "jobs:\n  - {}\n  - opencl-trace: false\n    kernel-trace: true\n" % d)
    run([UPTI, "run", "-i", job, "--", OCL_APP, "--kernels", "2"])
    check(files_in(d) == ["run1-of-two.db", "run2-of-two.db"], "files %r" % files_in(d))
    db2 = sqlite3.connect(os.path.join(d, "run2-of-two.db"))
    check(one(db2, "SELECT count(*) FROM apis") == 0 and
          one(db2, "SELECT count(*) FROM kernel_dispatch") == 2, "pass 2 of named.yaml")
    # A pass whose program fails: every pass runs, upti exits with the first failure.
    d = os.path.join(tmp, "exits")
    job = write(os.path.join(tmp, "exits.json"), json.dumps(
        {"output-dir": d, "marker-trace": True, "jobs": [{"output": "a"}, {"output": "b"}]}))
    run([UPTI, "run", "-i", job, "--", UPTX_APP, "--iterations", "1", "--exit", "3"], expect=3)
    check(files_in(d) == ["a-pass1.db", "b-pass2.db"], "files %r" % files_in(d))


def case_cli_override(tmp):
    d = os.path.join(tmp, "out")
    job = write(os.path.join(tmp, "job.json"), json.dumps(
        {"output-dir": os.path.join(tmp, "file-dir"), "output": "from-file",
         "format": ["db", "json"], "marker-trace": True, "log-level": "error",
         "output-config": True}))
    run([UPTI, "run", "-i", job, "-d", d, "--output", "from-cli", "-f", "db",
         "--log-level=warning", "--opencl-trace", "--"] + APP)
    check(not os.path.exists(os.path.join(tmp, "file-dir")), "the file's output-dir was used")
    check(files_in(d) == ["from-cli.db", "from-cli_config.json"], "files %r" % files_in(d))
    got = json.load(open(os.path.join(d, "from-cli_config.json")))
    check(got["output-dir"] == d and got["output"] == "from-cli" and got["format"] == ["db"]
          and got["log-level"] == "warning" and got["marker-trace"] is True
          and got["opencl-trace"] is True, "resolved %r" % got)
    # A NAME_config.json that upti did not write is kept; the settings go to NAME-PID_config.json.
    mine = write(os.path.join(d, "from-cli_config.json"), "my own notes\n")
    p = run([UPTI, "run", "-i", job, "-d", d, "--output", "from-cli", "-f", "db", "--"] + APP)
    check(open(mine).read() == "my own notes\n", "the user's file was replaced")
    others = [f for f in files_in(d) if f not in ("from-cli.db", "from-cli_config.json")]
    check(len(others) == 1 and others[0].startswith("from-cli-") and
          others[0].endswith("_config.json"), "files %r" % files_in(d))
    check("upti: %s exists and was not written by upti: not replaced (upti run --force-overwrite "
          "replaces it); writing %s instead\n" % (mine, os.path.join(d, others[0])) in p.stderr,
          "stderr %r" % p.stderr)
    check(json.load(open(os.path.join(d, others[0])))["output"] == "from-cli", "settings written")
    # The command line wins in every pass.
    d = os.path.join(tmp, "passes")
    job = write(os.path.join(tmp, "passes.json"), json.dumps(
        {"output-dir": d, "jobs": [{"format": "db,json"}, {"format": "csv"}]}))
    run([UPTI, "run", "-i", job, "-o", "x", "-f", "db", "--marker-trace", "--"] + APP)
    check(files_in(d) == ["x-pass1.db", "x-pass2.db"], "files %r" % files_in(d))


def case_errors(tmp):
    d = os.path.join(tmp, "out")

    def refused(name, text, line):
        path = write(os.path.join(tmp, name), text)
        p = run([UPTI, "run", "-i", path, "-d", d, "--"] + APP, expect=2)
        check(p.stderr == "upti: run: " + line.replace("FILE", path) + HELP + "\n",
              "%s: stderr %r, expected %r" % (name, p.stderr, line))
        check(not os.path.exists(d), "%s: something was written: %r" % (name, files_in(d)))

    refused("trailing.json", '{\n  "stats": true,\n}\n',
            "FILE:3:1: not valid JSON: a ',' before '}' (JSON has no trailing comma)")
    refused("quote.json", "{'stats': true}",
            "FILE:1:2: not valid JSON: expected a key in double quotes, found '''")
    refused("cut.json", '{"format": ["db"',
            "FILE:1:17: not valid JSON: expected ',' or ']', found the end of the file")
    refused("tab.yaml", "stats: true\n\tdelay: 1\n",
            "FILE:2:1: not valid YAML: found a tab character that violates indentation while "
            "scanning a plain scalar")
    refused("list.json", "[]", 'FILE:1:1: expected an object of options (e.g. {"sys-trace": '
            'true}), found a list')
    refused("unknown.json", '{"marker-trace": true,\n "sys-trac": true}',
            'FILE:2:2: unknown key "sys-trac" (did you mean "sys-trace"?)')
    refused("unknown.yaml", "output_dirr: x\n",
            'FILE:1:1: unknown key "output_dirr" (did you mean "output-dir"?)')
    refused("nothing.json", '{"color": "red"}',
            'FILE:1:2: unknown key "color" (the keys are the long options of upti run, '
            'e.g. "sys-trace", and "jobs")')
    refused("bool.json", '{"stats": "yes"}', 'FILE:1:11: "stats": expected true or false, '
            'found a string')
    refused("bool.yaml", "stats: yes\n", 'FILE:1:8: "stats": expected true or false, found a string')
    refused("type.json", '{"delay": true}', 'FILE:1:11: "delay": expected a string or a '
            'number, found true')
    refused("format.json", '{"format": {"db": 1}}', 'FILE:1:12: "format": expected a string '
            'or a list of strings, found an object')
    refused("badfmt.yaml", "format: [db, xml]\n",
            "FILE:1:9: \"format\": unknown format 'xml' (db, pftrace, json, csv)")
    refused("delay.json", '{\n  "delay": "soon"\n}',
            "FILE:2:12: \"delay\": --delay 'soon': accepted: seconds, e.g. 2 or 0.5")
    refused("regex.json", '{"kernel-include-regex": "(("}',
            "FILE:1:26: \"kernel-include-regex\": invalid regular expression '(('")
    refused("placeholder.json", '{"output": "run-%pas%"}',
            "FILE:1:12: \"output\": unknown placeholder '%pas%' (known: %pid% %ppid% %hostname% "
            "%rank% %argv0% %env{NAME}% %%); upti run also expands %pass%")
    refused("twice.json", '{"marker-trace": true, "marker_trace": false}',
            'FILE:1:24: "marker_trace" is given twice (also "marker-trace" at line 1)')
    refused("help.json", '{"help": true}', 'FILE:1:2: "help" cannot be given in a file')
    refused("jobs.json", '{"jobs": []}', 'FILE:1:10: "jobs": expected a list of one or more '
            'objects of options (one per pass), found an empty list')
    refused("nested.json", '{"jobs": [{"jobs": []}]}',
            'FILE:1:12: "jobs" belongs at the top level, not in a pass')
    refused("version.json", '{"upti-config": 2}',
            'FILE:1:17: "upti-config": this upti reads version 1 only')
    # The second pass is wrong: nothing runs, not even the first.
    refused("pass2.yaml", "jobs:\n  - marker-trace: true\n  - duration: 0\n",
            "FILE:3:15: \"duration\": --duration '0': accepted: seconds > 0, e.g. 10 or 0.5")
    refused("combined.yaml", "jobs:\n  - marker-trace: true\n  - capture-range: marker\n",
            "FILE: pass 2: --capture-range=marker needs --capture-range-name NAME[@DOMAIN]")
    p = run([UPTI, "run", "-i", os.path.join(tmp, "missing.json"), "--"] + APP, expect=2)
    check(p.stderr == "upti: run: cannot read the configuration file %s: No such file or "
          "directory%s\n" % (os.path.join(tmp, "missing.json"), HELP), "missing: %r" % p.stderr)
    # A folder given as the file: its reason, not "Input/output error".
    p = run([UPTI, "run", "-i", tmp, "--"] + APP, expect=2)
    check(p.stderr == "upti: run: cannot read the configuration file %s: Is a directory%s\n"
          % (tmp, HELP), "folder: %r" % p.stderr)
    # A bad value on the command line is still the command line's.
    path = write(os.path.join(tmp, "ok.json"), '{"marker-trace": true}')
    p = run([UPTI, "run", "-i", path, "--delay", "x", "--"] + APP, expect=2)
    check(p.stderr == "upti: run: --delay 'x': accepted: seconds, e.g. 2 or 0.5%s\n" % HELP,
          "command-line value: %r" % p.stderr)


def case_signal(tmp):
    """SIGTERM sent to upti run during pass 1 of 2 ends pass 1's program; pass 2 never starts."""
    import signal
    d = os.path.join(tmp, "out")
    job = write(os.path.join(tmp, "job.json"), json.dumps(
        {"output-dir": d, "marker-trace": True, "jobs": [{}, {}]}))
    e = {k: v for k, v in os.environ.items() if not k.startswith("UPTI_")}
    p = subprocess.Popen([UPTI, "run", "-i", job, "--", "sh", "-c", "echo started; exec sleep 60"],
                         env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        check(p.stdout.readline() == "started\n", "pass 1 did not start")
        p.send_signal(signal.SIGTERM)
        out, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    check(p.returncode == 128 + signal.SIGTERM, "exit %d (stderr %r)" % (p.returncode, err))
    check("started" not in out, "pass 2 started: %r" % out)


def case_recover(tmp):
    """upti killed while its program runs: `upti recover` writes the database with its
    metadata config and, under --output-config, NAME_config.json."""
    tmpdir = os.path.join(tmp, "tmpdir")
    os.makedirs(tmpdir)
    e = {k: v for k, v in os.environ.items() if not k.startswith("UPTI_")}
    e["TMPDIR"] = tmpdir
    d = os.path.join(tmp, "out")
    job = write(os.path.join(tmp, "job.yaml"), "marker-trace: true\noutput-config: true\n")
    p = subprocess.Popen([UPTI, "run", "-i", job, "-d", d, "-o", "c", "--", UPTX_APP,
                          "--iterations", "2", "--fork-exec", "/bin/sh", "-c",
                          "echo started; sleep 1"],
                         env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    check(p.stdout.readline() == "started\n", "the program did not start")
    p.kill()
    p.communicate(timeout=60)
    folders = [f for f in os.listdir(tmpdir) if f.startswith("upti-collect-")]
    check(len(folders) == 1, "run folders %r" % folders)
    r = run([UPTI, "recover", os.path.join(tmpdir, folders[0])])
    check(sorted(upti_test.said(r.stderr)) == ["upti: wrote " + os.path.join(d, n)
                                            for n in ("c.db", "c_config.json")],
          "recover said %r" % r.stderr)
    text = open(os.path.join(d, "c_config.json")).read()
    got = json.loads(text)
    check(got["marker-trace"] is True and got["output-config"] is True and got["output"] == "c",
          "c_config.json %r" % got)
    db = sqlite3.connect(os.path.join(d, "c.db"))
    check(one(db, "SELECT value FROM metadata WHERE key = 'config'") == text, "metadata config")


CASES = {"signal": case_signal, "recover": case_recover, "same_settings": case_same_settings, "passes": case_passes,
         "cli_override": case_cli_override, "errors": case_errors}

if __name__ == "__main__":
    sys.exit(upti_test.run_case(CASES, sys.argv[2], "upti-config"))
