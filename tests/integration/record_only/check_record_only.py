#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A program traced through UPTI_TOOL_LIBRARIES alone: it only records, and a helper collector
started beside it writes the outputs:
check_record_only.py BUILD CASE. Exit 0 pass, 1 fail, 77 skipped.

The program is tests/apps/counted_marks: 2 threads of uptx_mark("<thread>:<i>"), each call's
return counted in a shared file (the side channel: a counted call had returned).

  helper   N known calls: the helper collector writes the database after the program ended
           (polled for, no time bound), with exactly the N marks, none dropped, source
           shared-ring; its run folder and ring folder are removed; it adds no line to the
           program's stderr, which it shares.
  kill     the helper is not the program's child and leads a session of its own; `upti
           recover` of its folder while it runs says "in use"; then the helper and the
           program are SIGKILLed (both orders): `upti recover RUN_FOLDER` writes every
           completed call exactly once (or one more: committed, not yet counted).
  group    Ctrl-C (SIGINT to the program's process group), then SIGKILL to the group: the
           helper is not in it, and writes every completed call exactly once (or one more).
  bare     UPTI_TRACE_RING_DIR set by hand to a folder that does not exist, no collector, the program SIGKILLed: `upti recover
           RING_FOLDER` names the database from the program's UPTI_TRACE_OUTPUT and holds every
           completed call once; a folder with no rings is refused in one line.
  fork     a child forked without exec (capture_phases fork) and one that execs (uptx_app
           --fork-exec): each process's database holds what `upti run` writes of the same
           programs, the forked child's under its own pid with the parent as ppid.
  missing  no collector program (UPTI_TRACE_COLLECTOR names none; then one that fails): one
           "upti:" line each, naming the run folder the records stay in and the `upti recover`
           that converts it; that command writes all N calls.
"""
import glob
import os
import random
import signal
import sqlite3
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'common', 'python'))
import upti_test  # noqa: E402
from upti_test import SKIP  # noqa: E402

BUILD, CASE = upti_test.build_and_case()
UPTI, APP, TOOL = upti_test.built(BUILD, 'bin/upti', 'bin/counted_marks', 'lib/libupti-trace.so')
THREADS = 2
# What would trace counted_marks other than as a case asks.
TRACING = ('UPTI_TOOL', 'UPTI_TRACE', 'UPTI_RING', 'OPENCL_LAYERS')
fail, _ = upti_test.failing('FAIL %s:' % CASE)


def env(tmp, **extra):
    return upti_test.tmpdir_env(tmp, TRACING, **{'UPTI_TOOL_LIBRARIES': TOOL,
                                                 'UPTI_TRACE_KINDS': 'marker_api', **extra})


def counters(path):
    data = open(path, 'rb').read()
    return list(struct.unpack('<%dQ' % THREADS, data[:8 * THREADS]))


def check_db(name, path, counts, may_be_one_more, source):
    """Per thread, marks 0..c-1 exactly once (c = calls completed), or 0..c when allowed;
    nothing dropped; metadata source as expected."""
    con = sqlite3.connect('file:%s?mode=ro' % path, uri=True)
    if con.execute('PRAGMA integrity_check').fetchall() != [('ok',)]:
        fail('%s: PRAGMA integrity_check failed' % name)
    rows = [r[0] for r in con.execute("SELECT message FROM markers WHERE operation = 'uptx_mark'")]
    meta = dict(con.execute('SELECT key, value FROM metadata'))
    con.close()
    if meta.get('records_dropped') != '0':
        fail('%s: records_dropped %r' % (name, meta.get('records_dropped')))
    if (meta.get('source') == 'shared-ring') != (source == 'shared-ring'):
        fail('%s: metadata source %r, expected %s' % (name, meta.get('source'), source))
    for t in range(THREADS):
        got = sorted(int(m.split(':')[1]) for m in rows if m.startswith('%d:' % t))
        c = counts[t]
        if not (got == list(range(c)) or (may_be_one_more and got == list(range(c + 1)))):
            fail('%s: thread %d completed %d calls; the database holds %d marks (%d duplicated)'
                 % (name, t, c, len(got), len(got) - len(set(got))))
    return len(rows)


def wait_for(cond, what, timeout=120):
    upti_test.wait_for(cond, what, fail, timeout)


def run_folders(tmp):
    return glob.glob(os.path.join(tmp, 'tmpdir', 'upti-collect-*'))


def helper_of(pid):
    """The pid of the helper collecting for pid (`upti recover --wait-pid PID`), or None."""
    want = b'\0--wait-pid\0%d\0' % pid
    for d in os.listdir('/proc'):
        if not d.isdigit():
            continue
        try:
            with open('/proc/%s/cmdline' % d, 'rb') as f:
                if want in f.read():
                    return int(d)
        except OSError:
            pass
    return None


def stat_fields(pid):
    with open('/proc/%d/stat' % pid) as f:
        s = f.read()
    return s[s.rindex(')') + 2:].split()  # state ppid pgrp session ...


def upti_lines(path):
    return [l for l in open(path, errors='replace').read().splitlines() if l.startswith('upti:')]


def case_helper(tmp):
    n = 20000
    out = os.path.join(tmp, 'out')
    os.makedirs(out)
    counter = os.path.join(tmp, 'c.counter')
    err = os.path.join(tmp, 'err')
    # A relative pattern: relative to the program's working directory, as without the helper.
    e = env(tmp, UPTI_TRACE_OUTPUT='c-%pid%')
    with open(err, 'w') as ef:
        p = subprocess.Popen([APP, 'run', counter, str(n), str(THREADS)], env=e, cwd=out,
                             stdout=subprocess.DEVNULL, stderr=ef)
        if p.wait(timeout=120) != 0:
            fail('exit status %d\nstderr: %s' % (p.returncode, open(err).read()))
    db = os.path.join(out, 'c-%d.db' % p.pid)
    wait_for(lambda: os.path.exists(db), 'the database %s' % db)
    wait_for(lambda: not run_folders(tmp), 'the run folder removed')
    wait_for(lambda: helper_of(p.pid) is None, 'the helper exited')
    counts = counters(counter)
    if counts != [n] * THREADS:
        fail('the program completed %r calls' % counts)
    marks = check_db('helper', db, counts, False, 'shared-ring')
    # The helper shares the program's stderr: it adds nothing to it.
    lines = upti_lines(err)
    if lines != []:
        fail('stderr upti: lines %r, expected none' % lines)
    if os.listdir(out) != [os.path.basename(db)]:
        fail('files in the output folder: %r' % os.listdir(out))
    print('helper: the database of the helper holds all %d marks, none dropped; folders removed'
          % marks)


def case_kill(tmp):
    rng = random.Random(os.getpid())
    recovered = 0
    for i in range(6):
        d = os.path.join(tmp, 'k%d' % i)
        os.makedirs(d)
        counter = os.path.join(d, 'counter')
        # No drop while no collector runs: a full ring waits (the program is killed anyway).
        e = env(tmp, UPTI_TRACE_OUTPUT=os.path.join(d, 'c'),
                UPTI_RING_FULL_WAIT_MS='600s')
        p = subprocess.Popen([APP, 'run', counter, '0', str(THREADS)], env=e,
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        if p.stdout.readline() != 'counted: started\n':
            p.kill()
            fail('k%d: the program did not start' % i)
        helper = helper_of(p.pid)
        if helper is None:
            p.kill()
            fail('k%d: no helper collecting for pid %d' % (i, p.pid))
        fields = stat_fields(helper)
        if int(fields[1]) == p.pid or int(fields[3]) != helper:
            p.kill()
            fail('k%d: the helper %d has parent %s and session %s (the program is %d)'
                 % (i, helper, fields[1], fields[3], p.pid))
        folders = [f for f in run_folders(tmp) if os.path.exists(os.path.join(f, 'run.conf'))]
        if i == 0:
            r = subprocess.run([UPTI, 'recover'] + folders, capture_output=True, text=True,
                               timeout=60)
            if r.returncode != 1 or 'in use by a running upti' not in r.stderr:
                p.kill()
                fail('recover of a folder in use: exit %d, stderr %r' % (r.returncode, r.stderr))
        time.sleep(rng.uniform(0, 0.05))
        victims = [helper, p.pid] if i % 2 == 0 else [p.pid, helper]
        for v in victims:
            os.kill(v, signal.SIGKILL)
        p.wait(timeout=60)
        p.stdout.close()
        wait_for(lambda: not os.path.exists('/proc/%d' % helper) or
                 stat_fields(helper)[0] == 'Z', 'the helper gone')
        counts = counters(counter)
        db = os.path.join(d, 'c.db')
        left = [f for f in folders if os.path.exists(f)]
        if i % 2 == 0 and (len(left) != 1 or os.path.exists(db)):
            fail('k%d: the helper killed first left %r and database %s' % (i, left, os.path.exists(db)))
        if left:
            r = subprocess.run([UPTI, 'recover', left[0]], capture_output=True, text=True,
                               timeout=120)
            if r.returncode != 0 or upti_test.said(r.stderr) != ['upti: wrote %s' % db]:
                fail('k%d: upti recover: exit %d\nstderr: %s' % (i, r.returncode, r.stderr))
            if os.path.exists(left[0]) or os.path.exists(
                    os.path.join('/dev/shm', os.path.basename(left[0]))):
                fail('k%d: upti recover left its folders' % i)
            recovered += 1
        check_db('k%d' % i, db, counts, True, 'shared-ring')
    print('kill: 6 times the program and its helper SIGKILLed; %d recovered with upti recover: '
          'every completed call exactly once' % recovered)


def case_group(tmp):
    for sig in (signal.SIGINT, signal.SIGKILL):
        d = os.path.join(tmp, 'g%d' % sig)
        os.makedirs(d)
        counter = os.path.join(d, 'counter')
        e = env(tmp, UPTI_TRACE_OUTPUT=os.path.join(d, 'c'))
        # A process group of its own, as a shell's job: the group is what Ctrl-C reaches.
        p = subprocess.Popen([APP, 'run', counter, '0', str(THREADS)], env=e,
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                             start_new_session=True)
        if p.stdout.readline() != 'counted: started\n':
            p.kill()
            fail('%d: the program did not start' % sig)
        time.sleep(0.05)
        os.killpg(p.pid, sig)
        if p.wait(timeout=60) != -sig:
            fail('%d: the program ended with %d' % (sig, p.returncode))
        p.stdout.close()
        db = os.path.join(d, 'c.db')
        wait_for(lambda: os.path.exists(db) and not run_folders(tmp),
                 'signal %d: the database written, the run folder removed' % sig)
        marks = check_db('signal %d' % sig, db, counters(counter), True, 'shared-ring')
        print('group: signal %d to the process group: the helper wrote all %d completed calls'
              % (sig, marks))


def case_bare(tmp):
    rings = os.path.join(tmp, 'rings')  # made by the tool
    counter = os.path.join(tmp, 'counter')
    e = env(tmp, UPTI_TRACE_RING_DIR=rings, UPTI_TRACE_OUTPUT=os.path.join(tmp, 'b-%pid%'),
            UPTI_RING_FULL_WAIT_MS='600s')
    p = subprocess.Popen([APP, 'run', counter, '0', str(THREADS)], env=e,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    if p.stdout.readline() != 'counted: started\n':
        p.kill()
        fail('the program did not start')
    time.sleep(0.05)
    p.kill()
    p.wait(timeout=60)
    p.stdout.close()
    counts = counters(counter)
    db = os.path.join(tmp, 'b-%d.db' % p.pid)
    # From the folder of the output name: a name a ring gives stays inside the current
    # folder (docs/reliability.md, "Shared machines").
    r = subprocess.run([UPTI, 'recover', rings], capture_output=True, text=True, timeout=120,
                       cwd=tmp)
    if r.returncode != 0 or upti_test.said(r.stderr) != ['upti: wrote %s' % db]:
        fail('upti recover: exit %d\nstderr: %s' % (r.returncode, r.stderr))
    if os.listdir(rings):
        fail('left in the ring folder: %r' % os.listdir(rings))
    marks = check_db('bare', db, counts, True, 'shared-ring')
    empty = os.path.join(tmp, 'empty')
    os.makedirs(empty)
    r = subprocess.run([UPTI, 'recover', empty], capture_output=True, text=True, timeout=60)
    if (r.returncode != 1 or len(upti_test.said(r.stderr)) != 1 or
            'neither a run folder of upti run' not in r.stderr):
        fail('recover of an empty folder: exit %d, stderr %r' % (r.returncode, r.stderr))
    # A folder that does not exist is said so (it was "neither a run folder nor a
    # ring folder (no readable run.conf: No such file or directory)").
    missing = os.path.join(tmp, 'nosuch')
    r = subprocess.run([UPTI, 'recover', missing], capture_output=True, text=True, timeout=60)
    if r.returncode != 1 or r.stderr != 'upti: cannot open the folder %s: No such file or ' \
            'directory\n' % missing:
        fail('recover of a missing folder: exit %d, stderr %r' % (r.returncode, r.stderr))
    print('bare: a hand-set ring folder recovered into %s: all %d completed calls' % (db, marks))


def case_missing(tmp):
    n = 20000
    for i, collector in enumerate((os.path.join(tmp, 'none', 'upti'), '/bin/false')):
        counter = os.path.join(tmp, 'counter%d' % i)
        err = os.path.join(tmp, 'err%d' % i)
        pattern = os.path.join(tmp, 'm%d' % i)
        # Rings large enough for every mark: nobody drains them while the program runs.
        e = env(tmp, UPTI_TRACE_COLLECTOR=collector, UPTI_TRACE_OUTPUT=pattern,
                UPTI_TRACE_BUFFER_SIZE='8m')
        with open(err, 'w') as ef:
            p = subprocess.run([APP, 'run', counter, str(n), str(THREADS)], env=e,
                               stdout=subprocess.DEVNULL, stderr=ef, timeout=120)
        lines = upti_lines(err)
        folders = run_folders(tmp)
        if p.returncode != 0 or len(lines) != 1 or collector not in lines[0] or \
                len(folders) != 1 or ('upti recover %s' % folders[0]) not in lines[0]:
            fail('%s: exit %d, upti: lines %r, run folders %r'
                 % (collector, p.returncode, lines, folders))
        if os.path.exists(pattern + '.db'):
            fail('%s: a database %s.db without a collector' % (collector, pattern))
        # What the line says to do writes every mark.
        r = subprocess.run([UPTI, 'recover', folders[0]], capture_output=True, text=True,
                           timeout=120)
        if r.returncode != 0 or upti_test.said(r.stderr) != ['upti: wrote %s.db' % pattern]:
            fail('%s: upti recover: exit %d, stderr %r' % (collector, r.returncode, r.stderr))
        marks = check_db('missing', pattern + '.db', counters(counter), False, 'shared-ring')
        if marks != n * THREADS:
            fail('%s: %d marks' % (collector, marks))
        if run_folders(tmp):
            fail('%s: run folders left: %r' % (collector, run_folders(tmp)))
    print('missing: no collector, then a failing one: one upti: line each naming the folder '
          'the records stay in; `upti recover` of it writes all %d marks' % (n * THREADS))


def markers_by_process(folder):
    """{pid: (ppid, sorted marker messages)} of every database in folder."""
    out = {}
    for path in glob.glob(os.path.join(folder, '*.db')):
        con = sqlite3.connect('file:%s?mode=ro' % path, uri=True)
        pid, ppid = con.execute('SELECT pid, ppid FROM info_process').fetchone()
        msgs = sorted(str(r[0]) for r in con.execute('SELECT message FROM markers'))
        con.close()
        out[pid] = (ppid, msgs)
    return out


def case_fork(tmp):
    # LLVM 14's AddressSanitizer allocator is not fork-safe: a child forked while another
    # thread of the program (UPTI's delivery thread, the helper's start) allocates can hang in
    # its first malloc. CI's ASan run hung here once (capture_phases fork, 120 s); the same
    # program is skipped under ASan by test_capture.py (case_fork) and test_cli.py (ASAN_FORK).
    # The plain and TSan runs keep this case.
    if 'libclang_rt.asan' in os.environ.get('UPTI_SANITIZER_PRELOAD', ''):
        print('SKIP: fork under ASan (see test_cli.py, ASAN_FORK)')
        sys.exit(SKIP)
    uptx_app = os.path.join(BUILD, 'bin', 'upti-test-uptx-app')
    programs = {
        'forked': [os.path.join(BUILD, 'bin', 'capture_phases'), 'fork'],
        'exec': [uptx_app, '--iterations', '3', '--threads', '2', '--fork-exec', uptx_app,
                 '--iterations', '2', '--threads', '1'],
    }
    for name, cmd in programs.items():
        if not os.path.exists(cmd[0]):
            print('SKIP: %s not built' % cmd[0])
            sys.exit(SKIP)
        got = {}
        for mode in ('upti-run', 'helper'):
            d = os.path.join(tmp, name, mode)
            os.makedirs(d)
            if mode == 'helper':
                p = subprocess.run(cmd, env=env(tmp, UPTI_TRACE_OUTPUT='p-%pid%'), cwd=d,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                   timeout=120)
            else:
                plain = {k: v for k, v in env(tmp).items()
                         if not k.startswith(('UPTI_TOOL', 'UPTI_TRACE'))}
                p = subprocess.run([UPTI, 'run', '--marker-trace', '-d', d, '-o', 'p-%pid%', '--']
                                   + cmd, env=plain, cwd=d, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL, timeout=120)
            if p.returncode != 0:
                fail('%s %s: exit %d' % (name, mode, p.returncode))
            wait_for(lambda: len(glob.glob(os.path.join(d, '*.db'))) == 2 and not run_folders(tmp),
                     '%s %s: two databases, the run folders removed' % (name, mode))
            by_pid = markers_by_process(d)
            children = [q for q in by_pid if by_pid[q][0] in by_pid]
            if len(children) != 1:
                fail('%s %s: processes (pid: ppid) %r: expected a parent and its child'
                     % (name, mode, {q: v[0] for q, v in by_pid.items()}))
            child = children[0]
            parent = by_pid[child][0]
            got[mode] = [by_pid[parent][1], by_pid[child][1]]
        if got['helper'] != got['upti-run'] or not got['helper'][1]:
            fail('%s: the helper wrote %r, upti run %r' % (name, got['helper'], got['upti-run']))
    print('fork: a forked child and an exec\'d one: each database as `upti run` writes it')


CASES = {'helper': case_helper, 'fork': case_fork, 'group': case_group, 'kill': case_kill, 'bare': case_bare, 'missing': case_missing}


if __name__ == '__main__':
    sys.exit(upti_test.in_temp_folder('upti-record-only-', CASES[CASE], needed=(UPTI, APP, TOOL)))
