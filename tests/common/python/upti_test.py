# SPDX-License-Identifier: MIT
"""What UPTI's Python test drivers share: failing, running programs with or
without tracing, reading a database, and running a case in a temporary folder.

A driver finds this module from its own place in the tree, e.g. from
tests/integration/NAME/:

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                    '..', '..', 'common', 'python'))
    import upti_test  # noqa: E402

Two ways of failing, as the drivers have them:
- Fail and check: a case raises Fail, run_case prints "FAIL CASE: why" and
  exits 1 (the tests/integration/cli drivers);
- failing(prefix): fail(why) prints the prefix and why and exits 1 at once,
  expect(cond, why) fails unless cond.
Exit statuses: 0 passed, 1 failed, SKIP (77, ctest's SKIP_RETURN_CODE) skipped.
"""
import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

SKIP = 77

# upti run's closing line, after its "upti: wrote PATH" lines (cli.outputs_said
# checks it whole).
SUMMARY = re.compile(r"upti: traced \d+ process(es)?: \d+ records, \d+ dropped(, \d+\.\d{3} s)?; "
                     r"\d+ outputs?$")


def said(stderr):
    """stderr's lines (bytes or text), less upti run's closing summary line."""
    if isinstance(stderr, bytes):
        stderr = stderr.decode(errors="replace")
    return [line for line in stderr.splitlines() if not SUMMARY.match(line)]

# What makes a program run traced: the caller's UPTI_* variables and the layers'.
TRACING = ('UPTI_', 'OPENCL_LAYERS', 'NVTX_INJECTION64_PATH')
# Where an MPI launcher says which rank a process is (upti reads them for %rank%).
RANKS = ('PMI_RANK', 'OMPI_COMM_WORLD_RANK', 'PMIX_RANK', 'SLURM_PROCID', 'MPI_LOCALRANKID')


class Fail(Exception):
    """A check failed; the message says which and with what values."""


def check(cond, msg):
    if not cond:
        raise Fail(msg)


def failing(prefix='FAIL:'):
    """fail(msg): prints prefix and msg, exits 1; expect(cond, msg): fail(msg) unless cond."""
    def fail(msg):
        print(prefix, msg)
        sys.exit(1)

    def expect(cond, msg):
        if not cond:
            fail(msg)
    return fail, expect


def build_and_case():
    """The command line of a driver run as `DRIVER BUILD_DIR CASE`."""
    return os.path.abspath(sys.argv[1]), sys.argv[2]


def built(build, *paths):
    """Each of paths ('bin/upti', 'lib/NAME.so') in the build folder build."""
    return [os.path.join(build, *p.split('/')) for p in paths]


def driver_options(*names):
    """The command line --NAME VALUE for each of names (each one required), then the program."""
    ap = argparse.ArgumentParser()
    for name in names:
        ap.add_argument('--' + name, required=True)
    ap.add_argument('app')
    return ap.parse_args()


def fresh_db(folder, name):
    """The path of the database NAME.db in folder (made), none there yet (one left by an
    earlier run is removed)."""
    os.makedirs(folder, exist_ok=True)
    db = os.path.join(folder, name + '.db')
    if os.path.exists(db):
        os.remove(db)
    return db


def env_without(prefixes, extra=None):
    """The caller's environment less the variables whose names start with one of prefixes,
    plus extra."""
    e = {k: v for k, v in os.environ.items() if not k.startswith(tuple(prefixes))}
    e.update(extra or {})
    return e


def tmpdir_env(tmp, prefixes, **extra):
    """env_without(prefixes) with TMPDIR the folder tmp/tmpdir (made), plus extra."""
    e = env_without(prefixes)
    e['TMPDIR'] = os.path.join(tmp, 'tmpdir')
    os.makedirs(e['TMPDIR'], exist_ok=True)
    e.update(extra)
    return e


def run(args, env=None, expect=0, timeout=120, cwd=None, drop=TRACING):
    """args run untraced (the variables drop names removed, env added), output as text;
    raises Fail unless it exits expect (None: any status)."""
    p = subprocess.run(args, env=env_without(drop, env), capture_output=True, text=True,
                       errors='replace', timeout=timeout, cwd=cwd)
    if expect is not None and p.returncode != expect:
        raise Fail('%s: exit %d, expected %d\nstdout: %s\nstderr: %s'
                   % (' '.join(args), p.returncode, expect, p.stdout, p.stderr))
    return p


def run_status(cmd, env, timeout=120):
    """cmd run with exactly env: (exit status, stdout as bytes, stderr as text)."""
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=timeout)
    return p.returncode, p.stdout, p.stderr.decode(errors='replace')


def one(db, sql, *args):
    """The first column of the first row sql gives."""
    return db.execute(sql, args).fetchone()[0]


def wait_for(cond, what, fail, timeout=120):
    """Polls cond every 20 ms: its first true value; fail('WHAT: not after N s') and None
    when it stays false for timeout s (a fail that only records the failure ends the wait)."""
    end = time.monotonic() + timeout
    while True:
        got = cond()
        if got:
            return got
        if time.monotonic() > end:
            fail('%s: not after %d s' % (what, timeout))
            return None
        time.sleep(0.02)


def tool_lines(path, exclude=None):
    """A test tool's output, a record a line (TYPE WORD... KEY=VALUE...): per line that is not
    blank, (the line, its words, its KEY=VALUE words as a dict); a word holding exclude is not
    one of those."""
    for line in open(path):
        words = line.split()
        if words:
            fields = dict(w.split('=', 1) for w in words[1:]
                          if '=' in w and not (exclude and exclude in w))
            yield line, words, fields


def end_if_no_tool(case, out):
    """The case no_tool (UPTI's layer loaded, no tool configured) ends here: passed where no tool
    wrote its output file out, failed where one did."""
    if case == 'no_tool':
        _, expect = failing()
        expect(not os.path.exists(out), 'a tool ran although none was configured')
        print('PASS no_tool')
        sys.exit(0)


def ocl_ready(build, app):
    """Whether the OpenCL test program app and the OpenCL layer are built and app finds a
    device (PoCL); says why not."""
    if not os.path.exists(app) or not os.path.exists(os.path.join(build, 'lib',
                                                                  'libupti-opencl.so')):
        print('SKIP: OpenCL (or the OpenCL layer) was not built')
        return False
    p = run([app, '--kernels', '1'], expect=None)
    if p.returncode != 0:
        print('SKIP: no OpenCL device: %s' % (p.stdout + p.stderr).strip())
        return False
    return True


def icd_libraries():
    """The Vulkan drivers the loader would load (their ICD manifests' library_path)."""
    libs = []
    for manifest in sorted(glob.glob('/usr/share/vulkan/icd.d/*.json')):
        try:
            path = json.load(open(manifest))['ICD']['library_path']
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if os.path.isabs(path) and os.path.exists(path):
            libs.append(path)
    return libs


def preload_icds(env):
    """Under LeakSanitizer (ASAN_OPTIONS with detect_leaks=1), env's LD_PRELOAD gets the Vulkan
    drivers too. The loader unloads the driver at vkDestroyInstance: a block that only the
    driver's own globals point to then looks leaked, with a frame in an unmapped library that
    no suppression can name. Preloaded, the driver stays mapped: its globals stay roots, and a
    leak of UPTI's is still found."""
    if 'detect_leaks=1' in os.environ.get('ASAN_OPTIONS', ''):
        env['LD_PRELOAD'] = ' '.join(filter(None, [os.environ.get('LD_PRELOAD'), *icd_libraries()]))
    return env


def missing(paths):
    """The first of paths not built (said as SKIP), or None."""
    for path in paths:
        if not os.path.exists(path):
            print('SKIP: %s not built' % path)
            return path
    return None


def in_temp_folder(prefix, fn, needed=()):
    """fn(tmp) in a new temporary folder, removed after: 0, or SKIP where one of needed is
    not built. fn fails by exiting."""
    if missing(needed):
        return SKIP
    tmp = tempfile.mkdtemp(prefix=prefix)
    try:
        fn(tmp)
        return 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def run_case(cases, case, prefix, needed=()):
    """cases[case](tmp) in a new temporary folder tmp (kept where UPTI_TEST_KEEP is set), the
    working directory restored after; prints PASS or FAIL. Returns 0, 1, or SKIP where the case
    returns SKIP or one of needed is not built."""
    if missing(needed):
        return SKIP
    tmp = tempfile.mkdtemp(prefix='%s-%s-' % (prefix, case))
    cwd = os.getcwd()
    try:
        if cases[case](tmp) == SKIP:
            return SKIP
        print('PASS %s' % case)
        return 0
    except Fail as e:
        print('FAIL %s: %s' % (case, e))
        return 1
    except SystemExit as e:  # traceck.fail: it said why on stderr
        if e.code in (None, 0, SKIP):
            raise
        print('FAIL %s: output does not parse' % case)
        return 1
    finally:
        os.chdir(cwd)
        if os.environ.get('UPTI_TEST_KEEP'):
            print('outputs kept in ' + tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
