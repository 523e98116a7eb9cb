#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Crash-safe traces: check_crash.py BUILD CASE. Exit 0 pass, 1 fail, 77 skipped.

`upti run --sys-trace --format db,pftrace` on tests/apps/ocl_crash, a program
that runs N kernels (each waited for) and then dies. The traced program only
records, into shared rings that `upti run` drains (docs/shared-rings.md):
whatever ends it, every record it committed is in its database, and the
database says how it ended (metadata `ended`). No "upti:" line but the files
written: nothing was lost, nothing is to be recovered.

  sigkill       N kernels, a pause, M more enqueued, SIGKILL: N..N+M kernels, N+M
                enqueue records, and the kernels in flight counted (kernels_incomplete).
  sigkill_mid   killed by the test at moments spread over a busy run: each
                database opens, passes integrity_check and holds whole rows.
  segv, abort   exactly N kernels (no handler of UPTI's in the program).
  exit          _exit(3) after a pause: exactly N kernels, status 3.
"""
import contextlib
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(HERE, '..', 'cli'), os.path.join(HERE, '..', '..', 'common', 'python')]
import traceck  # noqa: E402
import upti_test  # noqa: E402
from upti_test import SKIP  # noqa: E402

BUILD, CASE = upti_test.build_and_case()
UPTI, APP = upti_test.built(BUILD, 'bin/upti', 'bin/ocl_crash')
N, M = 20, 5
PAUSE_MS = 2000  # the program's pause before its end: the collector drains meanwhile


fail, _ = upti_test.failing('FAIL %s:' % CASE)


def env():
    e = upti_test.env_without(('UPTI_TOOL', 'UPTI_TRACE', 'OPENCL_LAYERS'))
    # Sanitizer builds: the faults are the program's, not reports; let the
    # default action (and UPTI's handler) have them.
    for var in ('ASAN_OPTIONS', 'TSAN_OPTIONS', 'UBSAN_OPTIONS'):
        if var in e:
            e[var] += ':handle_segv=0:handle_abort=0'
    return e


def upti_run(tmp, name, args, expect_rc):
    cmd = [UPTI, 'run', '--sys-trace', '--format', 'db,pftrace', '-d', tmp, '-o', name,
           '--', APP] + [str(a) for a in args]
    p = subprocess.run(cmd, env=env(), capture_output=True, text=True, errors='replace',
                       timeout=120)
    where = '\ncommand: %s\nstdout: %s\nstderr: %s' % (' '.join(cmd), p.stdout, p.stderr)
    if p.returncode != expect_rc:
        fail('exit status %d, expected %d%s' % (p.returncode, expect_rc, where))
    if 'app: %d kernels' % args[0] not in p.stdout:
        fail('the program did not run its kernels%s' % where)
    # The run ends by naming its outputs: both formats of the one process.
    wrote = sorted(l[len('upti: wrote '):] for l in upti_test.said(p.stderr)
                   if l.startswith('upti: wrote '))
    want = sorted(os.path.join(tmp, name + ext).replace('\n', '\\n') for ext in ('.db', '.pftrace'))
    if wrote != want:
        fail('"upti: wrote" lines %r, expected %r%s' % (wrote, want, where))
    return [l for l in upti_test.said(p.stderr)
            if l.startswith('upti:') and not l.startswith('upti: wrote ')], where


def check_db(path, kernels_min, kernels_max, recovered, reason=None):
    """Checks a finished database; returns the number of kernel rows."""
    if not os.path.exists(path):
        fail('%s missing' % path)
    con = sqlite3.connect('file:%s?mode=ro' % path, uri=True)
    try:
        if con.execute('PRAGMA integrity_check').fetchone()[0] != 'ok':
            fail('%s: integrity_check failed' % path)
        q = lambda sql: con.execute(sql).fetchone()[0]  # noqa: E731
        kernels = q('SELECT count(*) FROM kernel_dispatch')
        if not kernels_min <= kernels <= kernels_max:
            fail('%s: %d kernel rows, expected %d..%d' % (path, kernels, kernels_min, kernels_max))
        whole = q("SELECT count(*) FROM kernels WHERE name = 'bump' AND start > 0"
                  " AND end >= start AND submit <= start")
        if whole != kernels:
            fail('%s: %d of %d kernel rows are whole' % (path, whole, kernels))
        finishes = q("SELECT count(*) FROM apis WHERE name = 'clFinish'")
        if kernels_min == kernels_max and finishes != kernels_min:
            fail('%s: %d clFinish rows, expected %d' % (path, finishes, kernels_min))
        if q('SELECT count(*) FROM info_process WHERE end IS NOT NULL AND end >= start') != 1:
            fail('%s: the process has no end' % path)
        last = q('SELECT max(end) FROM kernel_dispatch') or 0
        if q('SELECT end FROM info_process') < last:
            fail('%s: the process ends before its last kernel' % path)
        if q('SELECT count(*) FROM info_thread') < 1:
            fail('%s: no thread rows' % path)
        if q("SELECT count(*) FROM info_agent WHERE runtime = 'opencl'") < 1:
            fail('%s: no OpenCL agent' % path)
        # The ranges open when it died end with the process, on its named thread.
        for name, kind in (('work', 0), ('async', 1)):
            n = q("SELECT count(*) FROM region r JOIN string s ON s.id = r.name_id"
                  " WHERE s.string = '%s' AND r.kind = %d AND r.start > 0"
                  " AND r.end = (SELECT end FROM info_process)" % (name, kind))
            if n != 1:
                fail('%s: %d region(s) %r ending with the process, expected 1' % (path, n, name))
        if q("SELECT count(*) FROM info_thread t JOIN string s ON s.id = t.name_id"
             " WHERE s.string = 'crasher'") != 1:
            fail('%s: the thread named "crasher" is not in info_thread' % path)
        ended = con.execute("SELECT value FROM metadata WHERE key = 'ended'").fetchone()
        if recovered and (ended is None or (reason and reason not in ended[0])):
            fail('%s: metadata ended = %r, expected %r' % (path, ended, reason))
        if not recovered and ended is not None:
            fail('%s: recovered (%r), but the process should have closed it' % (path, ended))
        return kernels
    finally:
        con.close()


def check_pftrace(path, kernels):
    if not os.path.exists(path):
        fail('%s missing' % path)
    t = traceck.decode_pftrace(path)
    bumps = sum(1 for s in t['slices'] if s['name'] == 'bump')
    # A kernel is one slice on its queue's track (plus its enqueue call's).
    if bumps < kernels:
        fail('%s: %d "bump" slices for %d kernels' % (path, bumps, kernels))


def check_in_flight(path, enqueued):
    """The M kernels enqueued without waiting were in flight at the kill: all their
    enqueue records are there; those that did not complete are counted."""
    con = sqlite3.connect('file:%s?mode=ro' % path, uri=True)
    q = lambda sql: con.execute(sql).fetchone()[0]  # noqa: E731
    enqueues = q("SELECT count(*) FROM apis WHERE name = 'clEnqueueNDRangeKernel'")
    kernels = q('SELECT count(*) FROM kernel_dispatch')
    incomplete = q("SELECT value FROM metadata WHERE key = 'kernels_incomplete'")
    con.close()
    if enqueues != enqueued:
        fail('%s: %d enqueue records, expected %d' % (path, enqueues, enqueued))
    if incomplete is None or int(incomplete) != enqueues - kernels:
        fail('%s: kernels_incomplete %r, expected %d' % (path, incomplete, enqueues - kernels))


def ended_run(d, name, args, expect_rc, kernels_max, reason):
    """upti_run of the program into d/NAME.*, which says no "upti:" line but the files written;
    the database and the Perfetto trace checked (N to kernels_max kernels, the end's reason; the
    enqueues beyond N counted in flight): the number of kernels."""
    lines, where = upti_run(d, name, args, expect_rc)
    if lines:
        fail('no "upti:" line expected but the files written%s' % where)
    kernels = check_db(os.path.join(d, name + '.db'), N, kernels_max, True, reason)
    if kernels_max > N:
        check_in_flight(os.path.join(d, name + '.db'), kernels_max)
    check_pftrace(os.path.join(d, name + '.pftrace'), kernels)
    return kernels


def case_sigkill(tmp):
    kernels = ended_run(tmp, 'k', [N, 'kill', PAUSE_MS, M], 128 + 9, N + M, 'killed by signal 9')
    print('sigkill: %d kernels of %d..%d, the rest counted in flight' % (kernels, N, N + M))


def all_children(pid):
    """The children of process pid (none once it is gone)."""
    try:
        with open('/proc/%d/task/%d/children' % (pid, pid)) as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return []


def children(pid):
    """The children of upti (pid) but its collecting process, a fork of upti that did not
    exec (the same executable): the program, as the tests that kill it mean it."""
    def exe(p):
        try:
            return os.readlink('/proc/%d/exe' % p)
        except OSError:
            return None
    own = exe(pid)
    return [k for k in all_children(pid) if exe(k) != own]


def case_sigkill_mid(tmp):
    counts, lags = [], []
    # Delays after the first kernel finished (the program says so), not after
    # the start: a loaded machine may take longer than a fixed delay to start it.
    for i, delay in enumerate((0.2, 0.3, 0.45, 0.6, 0.75, 0.9)):
        cmd = [UPTI, 'run', '--sys-trace', '-d', tmp, '-o', 'mid%d' % i, '--', APP,
               '100000', 'kill']
        p = subprocess.Popen(cmd, env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, errors='replace')
        first = p.stdout.readline()
        if first != 'app: started\n':
            p.kill()
            fail('the program did not start its kernels: %r' % first)
        time.sleep(delay)
        kids = children(p.pid)
        killed_at = time.clock_gettime_ns(time.CLOCK_MONOTONIC_RAW)  # UPTI's clock
        for k in kids:
            os.kill(k, signal.SIGKILL)
        out, err = p.communicate(timeout=120)
        if not kids:
            fail('the program had ended before %.2f s' % delay)
        if p.returncode != 128 + 9:
            fail('exit status %d, expected 137\nstderr: %s' % (p.returncode, err))
        path = os.path.join(tmp, 'mid%d.db' % i)
        counts.append(check_db(path, 0, 100000, True, 'killed by signal 9'))
        # Measured, not asserted (a loaded machine may starve the writer):
        # how long before the kill the last recovered record ended.
        con = sqlite3.connect('file:%s?mode=ro' % path, uri=True)
        last = con.execute('SELECT max(end) FROM api').fetchone()[0] or 0
        con.close()
        lags.append((killed_at - last) / 1e6)
    print('sigkill_mid: kernels recovered per run: %s' % counts)
    print('sigkill_mid: last record before the kill, ms: %s'
          % ', '.join('%.1f' % x for x in lags))


def case_crash(tmp, how, sig):
    ended_run(tmp, how, [N, how, 0, 0], 128 + sig, N, 'killed by signal %d' % sig)
    print('%s: all %d kernels' % (how, N))


def case_exit(tmp):
    ended_run(tmp, 'x', [N, 'exit', PAUSE_MS, 0], 3, N, 'exited with status 3')
    print('exit: all %d kernels' % N)


def case_newline_dir(tmp):
    """An output directory whose name holds a newline: the killed program's trace is written."""
    d = os.path.join(tmp, 'new\nline')
    kernels = ended_run(d, 'k', [N, 'kill', PAUSE_MS, M], 128 + 9, N + M, 'killed by signal 9')
    print('newline_dir: %d kernels of %d..%d' % (kernels, N, N + M))


UPTX_APP = os.path.join(BUILD, 'bin', 'upti-test-uptx-app')


def uptx_markers(threads, iterations):
    """Marker records of upti-test-uptx-app (tests/integration/cli/uptx_app.c)."""
    return threads * (3 + 5 * iterations) + 4


def recover_to(folder, e, path):
    """`upti recover FOLDER`, which must say exactly that it wrote path."""
    r = subprocess.run([UPTI, 'recover', folder], env=e, capture_output=True, text=True,
                       errors='replace', timeout=300)
    if r.returncode != 0 or upti_test.said(r.stderr) != ['upti: wrote ' + path]:
        fail('upti recover: exit %d, stderr %r' % (r.returncode, r.stderr))


def markers_and_metadata(path):
    """The marker rows of the database at path, and its metadata."""
    con = sqlite3.connect('file:%s?mode=ro' % path, uri=True)
    held = con.execute('SELECT count(*) FROM marker').fetchone()[0]
    meta = dict(con.execute('SELECT key, value FROM metadata').fetchall())
    con.close()
    return held, meta


@contextlib.contextmanager
def small_tmpfs(tmp, size):
    """A tmpfs of size (mount's size=) at tmp/fs, unmounted after; SKIP where none can be
    mounted (not root, no mount permission)."""
    fs = os.path.join(tmp, 'fs')
    os.mkdir(fs)
    if subprocess.run(['mount', '-t', 'tmpfs', '-o', 'size=' + size, 'tmpfs', fs],
                      capture_output=True).returncode != 0:
        print('SKIP: cannot mount a tmpfs here')
        sys.exit(SKIP)
    try:
        yield fs
    finally:
        subprocess.run(['umount', '-l', fs], capture_output=True)


def kept_folders(lines):
    """The run folders that upti run said it kept for `upti recover`."""
    return [m for m in (re.match(r'upti: what could not be written stays in (\S+): upti '
                                 r'recover \1, once there is room$', l) for l in lines) if m]


def case_full_disk(tmp):
    """A file size limit (4 MiB, RLIMIT_FSIZE, for upti and the program) hit by
    `upti run` while it stores the program's records: the program runs to its
    end undisturbed; upti says once that its spool cannot be written, goes on
    draining the rings without storing, and states per process how many
    records it could not store, a measured count: the database holds the
    records stored before (written by `upti recover` once there is room, when
    the limit stops the database too), and held + lost + dropped is every
    marker made."""
    import resource
    iterations = 100000
    made = uptx_markers(2, iterations)
    limit = 4 << 20

    def limited():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    e = env()
    # The program's ring file (4 slots of 256 KiB) fits under the limit.
    e['UPTI_TRACE_RING_SLOTS'] = '4'
    e['UPTI_TRACE_BUFFER_SIZE'] = '256k'
    cmd = [UPTI, 'run', '--marker-trace', '-d', tmp, '-o', 'f', '--', UPTX_APP, '--iterations',
           str(iterations)]
    p = subprocess.run(cmd, env=e, capture_output=True, text=True, errors='replace',
                       timeout=300, preexec_fn=limited)
    where = '\nstdout: %s\nstderr: %s' % (p.stdout, p.stderr)
    if p.returncode != 0:
        fail('exit status %d, expected 0 (the program is not disturbed)%s' % (p.returncode, where))
    if p.stdout != '':
        fail('the program printed something (it fails only then)%s' % where)
    lines = [l for l in upti_test.said(p.stderr) if l.startswith('upti:')]
    said = [l for l in lines if l.startswith('upti: cannot write the spool ')]
    if len(said) != 1 or not said[0].endswith(': the records the rings still hold are counted '
                                              'and discarded'):
        fail('expected one line saying the spool cannot be written%s' % where)
    counted = [re.match(r'upti: pid (\d+): (\d+) records could not be stored \((.+)\)$', l)
               for l in lines]
    counted = [m for m in counted if m]
    if len(counted) != 1:
        fail('expected one line with the counts%s' % where)
    lost = int(counted[0].group(2))
    reason = counted[0].group(3)
    if reason not in said[0] or reason != os.strerror(27):  # EFBIG: File too large
        fail('reason %r, expected %r in both lines%s' % (reason, os.strerror(27), where))
    # The database may hit the limit too: written after the fact, it is then not
    # completed; one line says how many records of the spool it could not take,
    # and the run folder (the spool) is kept for `upti recover`.
    incomplete = [re.match(r'upti: pid (\d+): its database could not be completed: the (\d+) '
                           r'records of the spool are not in a database$', l) for l in lines]
    incomplete = [m for m in incomplete if m]
    kept = kept_folders(lines)
    drops = [re.match(r'upti: process (\d+): (\d+) records were dropped \(ring full\)$', l)
             for l in lines]
    drops = [m for m in drops if m]
    dropped = int(drops[0].group(2)) if drops else 0
    path = os.path.join(tmp, 'f.db')
    if len(incomplete) > 1 or len(incomplete) != len(kept):
        fail('expected one line on the database and one on the run folder, or none%s' % where)
    if incomplete:
        if os.path.exists(path):
            fail('an incomplete database was written%s' % where)
        # Room again (no limit): the recovery writes every record the spool holds.
        recover_to(kept[0].group(1), e, path)
    held, meta = markers_and_metadata(path)
    if incomplete and int(incomplete[0].group(2)) != held:
        fail('the line says %s records in the spool, the recovered database holds %d%s'
             % (incomplete[0].group(2), held, where))
    if int(meta.get('records_dropped', -1)) != dropped:
        fail('the line says %d dropped, metadata %r' % (dropped, meta.get('records_dropped')))
    if int(meta.get('records_written', -1)) != held:
        fail('metadata records_written %r, the database holds %d markers' %
             (meta.get('records_written'), held))
    if held + lost + dropped != made or lost == 0 or held == 0:
        fail('held %d + lost %d + dropped %d != %d markers made%s' %
             (held, lost, dropped, made, where))
    # The database says it too, not only the first stderr (a recovered one as well):
    # the records not stored, and how the program ended (its wait status: 0).
    if meta.get('records_not_stored') != str(lost):
        fail('metadata records_not_stored %r, the line says %d' % (meta.get('records_not_stored'), lost))
    if 'finalized' not in meta and not meta.get('ended', '').startswith('exited with status 0'):
        fail('metadata ended %r, expected the wait status (exited with status 0)' % meta.get('ended'))
    # Nothing else is claimed (the database's own error lines name no count).
    known = said + [m.group(0) for m in counted + incomplete + kept + drops]
    others = [l for l in lines if l not in known and not l.startswith('upti: wrote ') and
              not re.match(r'upti: database \S+: ', l)]
    if others:
        fail('lines not expected: %r%s' % (others, where))
    print('full_disk: %d of %d markers stored%s, %d could not be stored, %d dropped'
          % (held, made, ' (the database written by upti recover)' if incomplete else '',
             lost, dropped))


def case_tmpdir_unwritable(tmp):
    """TMPDIR names a folder that can never be created (a path under a regular
    file, root included): one line says so and where the run folder went
    instead; the program runs to its end with its exit status, traced."""
    blocker = os.path.join(tmp, 'file')
    open(blocker, 'w').write('x')
    e = env()
    e['TMPDIR'] = blocker + '/x'
    cmd = [UPTI, 'run', '--marker-trace', '-d', tmp, '-o', 't', '--', UPTX_APP, '--iterations',
           '10', '--exit', '5']
    p = subprocess.run(cmd, env=e, capture_output=True, text=True, errors='replace', timeout=120)
    where = '\nstdout: %s\nstderr: %s' % (p.stdout, p.stderr)
    if p.returncode != 5:
        fail('exit status %d, expected the program\'s 5%s' % (p.returncode, where))
    lines = [l for l in upti_test.said(p.stderr)
             if l.startswith('upti:') and not l.startswith('upti: wrote ')]
    want = ('upti: cannot create the run folder in TMPDIR %s (%s): it is in /tmp'
            % (blocker + '/x', os.strerror(20)))  # ENOTDIR
    if lines != [want]:
        fail('expected the one line %r%s' % (want, where))
    con = sqlite3.connect('file:%s?mode=ro' % os.path.join(tmp, 't.db'), uri=True)
    n = con.execute('SELECT count(*) FROM marker').fetchone()[0]
    con.close()
    if n != uptx_markers(2, 10):
        fail('%d markers, expected %d' % (n, uptx_markers(2, 10)))
    print('tmpdir_unwritable: said once; the program ran, %d markers traced' % n)


def case_kill_in_outputs(tmp):
    """upti killed while writing its outputs (pftrace, JSON): the run folder it leaves
    ($TMPDIR/upti-collect-*) is finished by `upti recover`, which writes every output whole
    and removes the folder; no half-written file is left."""
    iterations = 60000
    tmpdir = os.path.join(tmp, 'tmpdir')
    os.makedirs(tmpdir)
    e = env()
    e['TMPDIR'] = tmpdir
    for attempt in range(6):
        d = os.path.join(tmp, 'a%d' % attempt)
        os.makedirs(d)
        cmd = [UPTI, 'run', '--marker-trace', '--format', 'db,pftrace,json', '-d', d, '-o', 'o',
               '--', UPTX_APP, '--iterations', str(iterations)]
        p = subprocess.Popen(cmd, env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, errors='replace')
        seen = None
        while p.poll() is None and seen is None:
            parts = [f for f in os.listdir(d) if f.endswith('.part')]
            if parts:
                seen = parts[0]
                p.kill()  # upti itself: the program has ended, upti writes the outputs
            else:
                time.sleep(0.001)
        out, err = p.communicate(timeout=300)
        if seen is None:
            iterations *= 2  # written before it could be seen: a larger trace
            for f in os.listdir(tmpdir):
                shutil.rmtree(os.path.join(tmpdir, f), ignore_errors=True)
            continue
        folders = [f for f in os.listdir(tmpdir) if f.startswith('upti-collect-')]
        if len(folders) != 1:
            fail('expected one run folder left in %s, found %r' % (tmpdir, folders))
        folder = os.path.join(tmpdir, folders[0])
        r = subprocess.run([UPTI, 'recover', folder], env=e, capture_output=True, text=True,
                           errors='replace', timeout=300)
        where = '\nrecover stderr: %s' % r.stderr
        if r.returncode != 0:
            fail('upti recover exit %d%s' % (r.returncode, where))
        wrote = sorted(l[len('upti: wrote '):] for l in upti_test.said(r.stderr)
                       if l.startswith('upti: wrote '))
        want = sorted(os.path.join(d, 'o' + x) for x in ('.db', '.json', '.pftrace'))
        if wrote != want:
            fail('recover wrote %r, expected %r%s' % (wrote, want, where))
        names = sorted(os.listdir(d))
        if names != ['o.db', 'o.json', 'o.pftrace']:
            fail('outputs %r (killed while writing %s)%s' % (names, seen, where))
        if os.path.exists(folder):
            fail('the run folder %s is still there after its recovery' % folder)
        con = sqlite3.connect('file:%s?mode=ro' % os.path.join(d, 'o.db'), uri=True)
        markers = con.execute('SELECT count(*) FROM marker').fetchone()[0]
        dropped = int(con.execute("SELECT value FROM metadata WHERE key = 'records_dropped'")
                      .fetchone()[0])
        con.close()
        if markers + dropped != uptx_markers(2, iterations):
            fail('o.db holds %d markers and counts %d dropped, the program made %d'
                 % (markers, dropped, uptx_markers(2, iterations)))
        traceck.check_json(os.path.join(d, 'o.json'))
        t = traceck.decode_pftrace(os.path.join(d, 'o.pftrace'))
        if not t['slices']:
            fail('o.pftrace holds no slice')
        print('kill_in_outputs: upti killed while writing %s; upti recover finished all' % seen)
        return
    fail('never saw an output being written')


def ended(pid):
    """Whether process pid has ended (gone, or a zombie nobody reaped)."""
    try:
        with open('/proc/%d/stat' % pid) as f:
            return f.read().rsplit(')', 1)[1].split()[0] in ('Z', 'X')
    except OSError:
        return True


def uptx_run(tmp, iterations, sleep):
    """upti run of upti-test-uptx-app (whose child sleeps sleep s) into tmp/out/c.*, its run
    folder in tmp/tmpdir: (the environment, the output folder, the command)."""
    tmpdir = os.path.join(tmp, 'tmpdir')
    os.makedirs(tmpdir)
    e = env()
    e['TMPDIR'] = tmpdir
    d = os.path.join(tmp, 'out')
    cmd = [UPTI, 'run', '--marker-trace', '-d', d, '-o', 'c', '--', UPTX_APP, '--iterations',
           str(iterations), '--fork-exec', '/bin/sh', '-c', 'sleep %d' % sleep]
    return e, d, cmd


def upti_killed(tmp, iterations, sleep, after, wait_program):
    """uptx_run's upti SIGKILLed after s in; with wait_program, returns once the program has
    ended. (The environment, the output folder, the one run folder, upti's children when it
    was killed.) upti's output goes to files: pipes would be held open by the program, and
    reading them to their end would wait for it without saying so (it closes them in its
    exit, before it is seen to have ended)."""
    e, d, cmd = uptx_run(tmp, iterations, sleep)
    tmpdir = e['TMPDIR']
    with open(os.path.join(tmp, 'run.out'), 'w') as out:
        p = subprocess.Popen(cmd, env=e, stdout=out, stderr=subprocess.STDOUT)
    time.sleep(after)
    kids = children(p.pid)
    p.kill()
    p.wait(timeout=60)
    deadline = time.monotonic() + 120
    while wait_program and not all(ended(k) for k in kids):
        if time.monotonic() > deadline:
            fail('the program %r still runs 120 s after upti was killed' % kids)
        time.sleep(0.02)
    folders = [os.path.join(tmpdir, f) for f in os.listdir(tmpdir) if f.startswith('upti-collect-')]
    if len(folders) != 1:
        fail('expected one run folder in %s, found %r' % (tmpdir, folders))
    return e, d, folders[0], kids


def case_collector_killed(tmp):
    """upti killed while its program runs: the program goes on, recording into its rings;
    `upti recover` started at once waits for it to end (said in one line naming the
    program, its ring and the longest wait), and its database holds every record, those
    made after upti died included."""
    iterations = 3000
    # The program waits for its child's sleep 3: all its workers' calls are later than 0.8 s.
    e, d, folder, kids = upti_killed(tmp, iterations, 3, 0.8, False)
    if len(kids) != 1:
        fail('expected the program as the one child of upti, found %r' % kids)
    r = subprocess.run([UPTI, 'recover', folder], env=e,
                       capture_output=True, text=True, errors='replace', timeout=120)
    where = '\nrecover stderr: %s' % r.stderr
    if not ended(kids[0]):
        fail('upti recover returned while the program still ran%s' % where)
    wrote = 'upti: wrote ' + os.path.join(d, 'c.db')
    lines = upti_test.said(r.stderr)
    # Named as its ring says: pid, command (its first word, cut at 63 characters: a
    # build in a deep folder has a longer path), start tick (/proc/PID/stat field 22),
    # its ring file (in the ring folder, /dev/shm's where there is room).
    waiting = r'upti: waiting for pid %d \(([^,]+), started at tick \d+, as its ring says\) to ' \
              r'end: it writes to /\S+/upti-%d-0\.upti-ring \(at most 60 s\)$' % (kids[0], kids[0])
    # The program ran when recover was started, 2 s before its end: it is waited for, and
    # said; only a machine that stalled recover that long would find it ended.
    m = re.match(waiting, lines[0]) if len(lines) == 2 else None
    said_wait = m is not None and UPTX_APP[:63] == m.group(1)
    if r.returncode != 0 or not (said_wait and lines[1] == wrote or lines == [wrote]):
        fail('upti recover exit %d (expected 0, the wait for pid %d and %r)%s'
             % (r.returncode, kids[0], wrote, where))
    con = sqlite3.connect('file:%s?mode=ro' % os.path.join(d, 'c.db'), uri=True)
    q = lambda sql: con.execute(sql).fetchone()[0]  # noqa: E731
    markers = q('SELECT count(*) FROM marker')
    dropped = int(q("SELECT value FROM metadata WHERE key = 'records_dropped'"))
    finalized = q("SELECT count(*) FROM metadata WHERE key = 'finalized'")
    con.close()
    want = uptx_markers(2, iterations) + 2  # and the range around the fork
    if markers != want or dropped != 0 or finalized != 1:
        fail('c.db: %d markers (expected %d), %d dropped, finalized %d%s'
             % (markers, want, dropped, finalized, where))
    print('collector_killed: upti killed 0.8 s in; upti recover %s and wrote all %d markers'
          % ('said it waits for the program' if said_wait else 'found the program ended',
             markers))


def case_collecting_killed(tmp):
    """upti's collecting process (a fork of upti in a session of its own) ignores SIGINT,
    SIGHUP and SIGTERM (meant for the program or upti: `pkill -f` matches it too); killed
    while the program runs, upti says so once, naming the run folder, and ends with the
    program's status; the program's records stay in its rings and `upti recover` writes
    them all."""
    iterations = 3000
    e, d, cmd = uptx_run(tmp, iterations, 2)
    tmpdir = e['TMPDIR']
    p = subprocess.Popen(cmd, env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         errors='replace')
    time.sleep(0.8)
    kids = all_children(p.pid)
    program = children(p.pid)
    collecting = [k for k in kids if k not in program]
    if len(collecting) != 1 or len(program) != 1:
        p.kill()
        fail('expected the program and the collecting process as upti\'s children, found '
             '%r (program %r)' % (kids, program))
    if os.getsid(collecting[0]) != collecting[0] or os.getsid(program[0]) != os.getsid(p.pid):
        p.kill()
        fail('sessions: collecting process %d, program %d, upti %d' %
             (os.getsid(collecting[0]), os.getsid(program[0]), os.getsid(p.pid)))
    for sig in (signal.SIGINT, signal.SIGHUP, signal.SIGTERM):
        os.kill(collecting[0], sig)
    time.sleep(0.2)
    if ended(collecting[0]):
        p.kill()
        fail('the collecting process ended on SIGINT, SIGHUP or SIGTERM')
    os.kill(collecting[0], signal.SIGKILL)
    _out, err = p.communicate(timeout=120)
    folders = [os.path.join(tmpdir, f) for f in os.listdir(tmpdir) if f.startswith('upti-collect-')]
    if len(folders) != 1:
        fail('expected one run folder in %s, found %r' % (tmpdir, folders))
    said = upti_test.said(err)
    want = ('upti: the collecting process was killed by signal 9: what it had not written stays '
            'in %s (upti recover %s)' % (folders[0], folders[0]))
    if p.returncode != 0 or said != [want]:
        fail('upti exit %d (expected 0, the program\'s), said %r, expected %r'
             % (p.returncode, said, [want]))
    r = subprocess.run([UPTI, 'recover', folders[0]], env=e, capture_output=True, text=True,
                       errors='replace', timeout=120)
    if r.returncode != 0 or upti_test.said(r.stderr) != ['upti: wrote ' + os.path.join(d, 'c.db')]:
        fail('upti recover exit %d, stderr %r' % (r.returncode, r.stderr))
    con = sqlite3.connect('file:%s?mode=ro' % os.path.join(d, 'c.db'), uri=True)
    markers = con.execute('SELECT count(*) FROM marker').fetchone()[0]
    dropped = int(con.execute("SELECT value FROM metadata WHERE key = 'records_dropped'")
                  .fetchone()[0])
    con.close()
    want_markers = uptx_markers(2, iterations) + 2  # and the range around the fork
    if markers != want_markers or dropped != 0:
        fail('c.db: %d markers (expected %d), %d dropped' % (markers, want_markers, dropped))
    print('collecting_killed: upti said so and ended with the program\'s status; upti recover '
          'wrote all %d markers' % markers)


def case_recover_full(tmp):
    """`upti recover` of a run folder whose database cannot be written (a file size
    limit of 64 KiB: the spool fits, the database does not, its empty schema alone
    takes about 100 KB in 4 KiB pages): exit 1, one
    line on the database, one on its records, one saying the folder stays for
    `upti recover` (not 'nothing was recorded'); no c.db; the folder is kept. Run
    again without the limit, it writes every marker."""
    import resource
    iterations = 100
    e, d, folder, _ = upti_killed(tmp, iterations, 1, 0.5, True)
    path = os.path.join(d, 'c.db')
    limit = 64 << 10

    def limited():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    r = subprocess.run([UPTI, 'recover', folder], env=e, capture_output=True, text=True,
                       errors='replace', timeout=120, preexec_fn=limited)
    where = '\nrecover stderr: %s' % r.stderr
    spool = os.path.getsize(os.path.join(folder, 'spool'))
    if spool >= limit:
        fail('the spool (%d bytes) does not fit under the limit: the case tests nothing' % spool)
    lines = upti_test.said(r.stderr)
    db_lines = [l for l in lines if re.match(r'upti: database \S+: .+', l)]
    incomplete = [l for l in lines if re.match(r'upti: pid \d+: its database could not be '
                                               r'completed: the \d+ records of the spool are not '
                                               r'in a database$', l)]
    kept = ['upti: what could not be written stays in %s: upti recover %s, once there is room'
            % (folder, folder)]
    if r.returncode != 1 or len(db_lines) != 1 or len(incomplete) != 1 or \
            lines != db_lines + incomplete + kept:
        fail('upti recover under the limit: exit %d (expected 1 and three lines: the '
             'database, its records, the folder kept)%s' % (r.returncode, where))
    if os.path.exists(path) or not os.path.isdir(folder):
        fail('c.db written (%s) or the run folder removed (%s)%s'
             % (os.path.exists(path), not os.path.isdir(folder), where))
    r = subprocess.run([UPTI, 'recover', folder], env=e, capture_output=True, text=True,
                       errors='replace', timeout=120)
    if r.returncode != 0 or upti_test.said(r.stderr) != ['upti: wrote ' + path]:
        fail('upti recover with room: exit %d\nstderr: %s' % (r.returncode, r.stderr))
    con = sqlite3.connect('file:%s?mode=ro' % path, uri=True)
    markers = con.execute('SELECT count(*) FROM marker').fetchone()[0]
    ok = con.execute('PRAGMA integrity_check').fetchone()[0]
    con.close()
    want = uptx_markers(2, iterations) + 2  # and the range around the fork
    if markers != want or ok != 'ok' or os.path.exists(folder):
        fail('c.db: %d markers (expected %d), integrity %s, folder left %s'
             % (markers, want, ok, os.path.exists(folder)))
    print('recover_full: exit 1 and the folder kept under the limit; then all %d markers'
          % markers)


COUNTED = os.path.join(BUILD, 'bin', 'counted_marks')


def counters(path, n):
    """The words a counted_marks program stored: calls completed per thread."""
    import struct
    data = open(path, 'rb').read()
    return list(struct.unpack('<%dQ' % n, data[:8 * n]))


def run_counted(tmp, name, mode, n, threads=2, preexec=None, signal_after=None, sig=None,
                expect_rc=0, extra_env=None, timeout=300):
    """`upti run --marker-trace` on counted_marks; returns (db path, calls completed per thread,
    stderr). signal_after: seconds after the program started when sig goes to it (SIGKILL: the
    program only; others through upti, which forwards them)."""
    d = os.path.join(tmp, name)
    counter = os.path.join(tmp, name + '.counter')
    cmd = [UPTI, 'run', '--marker-trace', '-d', d, '-o', 'c', '--', COUNTED, mode, counter,
           str(n), str(threads)]
    e = env()
    e.update(extra_env or {})
    p = subprocess.Popen(cmd, env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, errors='replace', preexec_fn=preexec)
    if signal_after is not None:
        first = p.stdout.readline()
        if first != 'counted: started\n':
            p.kill()
            fail('%s: the program did not start: %r' % (name, first))
        time.sleep(signal_after)
        if sig == signal.SIGKILL:
            for k in children(p.pid):
                os.kill(k, sig)
        else:
            p.send_signal(sig)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        fail('%s: upti did not end within %d s\nstderr: %s' % (name, timeout, err))
    if mode == 'burst' and 'counted: collector attached' not in out:
        fail('%s: no collector attached to the program\'s ring: %r' % (name, out))
    if p.returncode != expect_rc:
        fail('%s: upti exit %d, expected %d\nstderr: %s' % (name, p.returncode, expect_rc, err))
    return os.path.join(d, 'c.db'), counters(counter, threads + 1), err


def check_counted(name, path, counts, threads, may_be_one_more):
    """Per thread, the database holds marks 0..c-1 exactly once (c = the calls completed), or
    0..c (the call that was committed when the kill came, before its counter store).
    may_be_one_more: True (every thread), False, or the set of threads that may."""
    con = sqlite3.connect('file:%s?mode=ro' % path, uri=True)
    rows = [r[0] for r in con.execute("SELECT message FROM markers WHERE operation = 'uptx_mark'")]
    dropped = con.execute("SELECT value FROM metadata WHERE key = 'records_dropped'").fetchone()
    con.close()
    if dropped is None or dropped[0] != '0':
        fail('%s: records_dropped %r' % (name, dropped))
    for t in range(threads):
        got = sorted(int(m.split(':')[1]) for m in rows if m.startswith('%d:' % t))
        c = counts[t]
        one_more = may_be_one_more is True or (may_be_one_more and t in may_be_one_more)
        ok = got == list(range(c)) or (one_more and got == list(range(c + 1)))
        if not ok:
            dup = len(got) - len(set(got))
            fail('%s: thread %d completed %d calls; the database holds %d marks (%d duplicated, '
                 'first missing %r)' % (name, t, c, len(got), dup,
                                        next((i for i in range(c) if i not in set(got)), None)))
    return rows


def case_run_doorbell(tmp):
    """The collector sleeps on its rings' doorbells (upti/ring.h): here each sleep lasts
    1,000 s (UPTI_TEST_DOORBELL_SLEEP_MS, honoured by the build tree's upti only) unless a
    doorbell or the program's end ends it. Two threads wait until the collector attached to
    their ring file, then make 200,000 marks each through rings of 1 MiB (12.8 MiB each): the
    producers ring as their slots fill or wait for room (without it each would wait 20 s
    for room, then drop), and the program's end ends the last sleep (without it upti would end 1,000 s
    later: the run must end within 240 s, room for a loaded machine).
    Every mark is there, none dropped, none waited for past the ring's limit."""
    n = 200000
    path, counts, err = run_counted(tmp, 'doorbell', 'burst', n,
                                    extra_env={'UPTI_TEST_DOORBELL_SLEEP_MS': '1000000',
                                               # (a producer waits for room up to 20 s, not 1:
                                               # a loaded machine may hold the collector back)
                                               'UPTI_RING_FULL_WAIT_MS': '20000'},
                                    timeout=240)
    if counts[:2] != [n, n]:
        fail('doorbell: the program completed %r calls, expected %d per thread' % (counts, n))
    if 'traced 1 process: %d records, 0 dropped' % (2 * n) not in err:
        fail('doorbell: upti said %r' % err)
    check_counted('doorbell', path, counts, 2, False)
    print('run_doorbell: %d marks per thread through 1 MiB rings, all there' % n)


def case_run_kill(tmp):
    """SIGKILL at 20 random moments under `upti run`: every call the program completed is in
    its database exactly once (or one more, committed before its counter store)."""
    import random
    rng = random.Random(os.getpid())
    for i in range(20):
        path, counts, _ = run_counted(tmp, 'k%d' % i, 'run', 0, signal_after=rng.uniform(0, 0.05),
                                      sig=signal.SIGKILL, expect_rc=128 + 9)
        check_counted('kill %d' % i, path, counts, 2, True)
    print('run_kill: 20 kills, every completed call exactly once')


def case_run_endings(tmp):
    """_exit, SIGSEGV with the default action, a SIGSEGV a handler swallows (the program lives
    on and so does its trace): every completed call, exactly. Thread 0 ends the program after
    its counter store; thread 1 runs on until then, and may have committed a mark whose
    counter store the ending cut off (one more)."""
    n = 20000
    for mode, rc in (('exit', 3), ('segv', 128 + signal.SIGSEGV), ('segv_caught', 0)):
        path, counts, _ = run_counted(tmp, mode, mode, n, expect_rc=rc)
        if mode == 'segv_caught' and counts[:2] != [n, n]:
            fail('segv_caught: the program completed %r calls, expected %d each' % (counts[:2], n))
        check_counted(mode, path, counts, 2, {1} if mode in ('exit', 'segv') else False)
    print('run_endings: _exit, SIGSEGV, SIGSEGV caught: every completed call exactly')


def case_run_sigint_nohup(tmp):
    """SIGINT ignored (as under nohup): the program goes on to its end, and so does its trace."""
    n = 200000
    path, counts, _ = run_counted(tmp, 'nohup', 'run', n, signal_after=0.05, sig=signal.SIGINT,
                                  preexec=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    if counts[:2] != [n, n]:
        fail('nohup: the program completed %r calls, expected %d each' % (counts[:2], n))
    check_counted('nohup', path, counts, 2, False)
    print('run_sigint_nohup: SIGINT ignored, all %d calls traced' % (2 * n))


def uptx_traced(out, e, iterations):
    """upti-test-uptx-app under `upti run --marker-trace` into out/f.*, with the environment e:
    its CompletedProcess and its stderr, to be said on a failure."""
    cmd = [UPTI, 'run', '--marker-trace', '-d', out, '-o', 'f', '--', UPTX_APP,
           '--iterations', str(iterations)]
    p = subprocess.run(cmd, env=e, capture_output=True, text=True, errors='replace', timeout=300)
    return p, '\nstderr: %s' % p.stderr


def case_full_tmpdir(tmp):
    """$TMPDIR (where upti run keeps its run folder) fills up: the spool stops
    storing (counted), and the database cannot even be created there. The
    run folder, spool and all, is kept for `upti recover` (it was removed:
    every stored record was lost), and once there is room the recovery
    writes every record the spool held: held + lost + dropped is every marker
    made. Needs a small tmpfs (root, mount): skipped where none can be made."""
    with small_tmpfs(tmp, '8m') as fs:
        iterations = 200000
        made = uptx_markers(2, iterations)
        e = env()
        e['TMPDIR'] = fs
        out = os.path.join(tmp, 'out')
        p, where = uptx_traced(out, e, iterations)
        if p.returncode != 0:
            fail('exit status %d, expected 0 (the program is not disturbed)%s' % (p.returncode, where))
        lines = [l for l in upti_test.said(p.stderr) if l.startswith('upti:')]
        counted = [m for m in (re.match(r'upti: pid (\d+): (\d+) records could not be stored', l)
                               for l in lines) if m]
        kept = kept_folders(lines)
        if len(counted) != 1 or len(kept) != 1:
            fail('expected one line with the count and one on the kept run folder%s' % where)
        if not os.path.exists(os.path.join(kept[0].group(1), 'spool')):
            fail('the run folder %s lost its spool%s' % (kept[0].group(1), where))
        if os.path.exists(os.path.join(out, 'f.db')):
            fail('a database was written with no room for it%s' % where)
        subprocess.run(['mount', '-o', 'remount,size=256m', fs], check=True)
        path = os.path.join(out, 'f.db')
        recover_to(kept[0].group(1), e, path)
        held, meta = markers_and_metadata(path)
        lost = int(counted[0].group(2))
        dropped = int(meta.get('records_dropped', 0))
        if held + lost + dropped != made or held == 0 or lost == 0:
            fail('held %d + lost %d + dropped %d != %d markers made%s'
                 % (held, lost, dropped, made, where))
        print('full_tmpdir: run folder kept; recovered %d markers, %d not stored, %d dropped'
              % (held, lost, dropped))


def case_full_outdir(tmp):
    """The output folder is full (the run folder in $TMPDIR has room): the database
    cannot be moved there. One line says where the trace stays; no empty NAME.db is
    left under the output's name (it was, until `upti recover` replaced it); once
    there is room, the recovery writes every marker. Needs a small tmpfs (root,
    mount): skipped where none can be made."""
    with small_tmpfs(tmp, '1m') as fs:
        iterations = 20000
        made = uptx_markers(2, iterations)
        e = env()
        p, where = uptx_traced(fs, e, iterations)
        if p.returncode != 0:
            fail('exit status %d, expected 0%s' % (p.returncode, where))
        kept = kept_folders(upti_test.said(p.stderr))
        if len(kept) != 1:
            fail('expected one line on the kept run folder%s' % where)
        path = os.path.join(fs, 'f.db')
        if os.path.exists(path):
            fail('%s was left (%d bytes) with no room for the trace%s'
                 % (path, os.path.getsize(path), where))
        subprocess.run(['mount', '-o', 'remount,size=256m', fs], check=True)
        recover_to(kept[0].group(1), e, path)
        held, meta = markers_and_metadata(path)
        if held != made:
            fail('recovered %d markers, %d made' % (held, made))
        print('full_outdir: no empty database left; recovered %d markers' % held)


def case_run_sigterm_drain(tmp):
    """A program's SIGTERM handler runs (no handler of UPTI's before it), the program drains
    its work after it, and that work is traced."""
    if 'TSAN_OPTIONS' in os.environ:
        # Under ThreadSanitizer the SIGTERM never reached the program's handler (300 s
        # timeout in CI, not understood yet); the plain and ASan suites run this case.
        print('SKIP: not run under ThreadSanitizer')
        sys.exit(SKIP)
    path, counts, _ = run_counted(tmp, 'drain', 'drain', 0, signal_after=0.05,
                                  sig=signal.SIGTERM)
    rows = check_counted('drain', path, counts, 2, False)
    drained = sorted(int(m.split(':')[1]) for m in rows if m.startswith('drain:'))
    if counts[2] != 1000 or drained != list(range(1000)):
        fail('drain: %d drain calls completed, %d traced' % (counts[2], len(drained)))
    print('run_sigterm_drain: the handler ran, 1000 drain calls after it traced')


CASES = {
    'sigkill': case_sigkill,
    'sigkill_mid': case_sigkill_mid,
    'segv': lambda tmp: case_crash(tmp, 'segv', signal.SIGSEGV),
    'abort': lambda tmp: case_crash(tmp, 'abort', signal.SIGABRT),
    'exit': case_exit,
    'newline_dir': case_newline_dir,
    'full_disk': case_full_disk,
    'tmpdir_unwritable': case_tmpdir_unwritable,
    'kill_in_outputs': case_kill_in_outputs,
    'collector_killed': case_collector_killed,
    'collecting_killed': case_collecting_killed,
    'recover_full': case_recover_full,
    'run_kill': case_run_kill,
    'run_doorbell': case_run_doorbell,
    'run_endings': case_run_endings,
    'run_sigint_nohup': case_run_sigint_nohup,
    'run_sigterm_drain': case_run_sigterm_drain,
    'full_tmpdir': case_full_tmpdir,
    'full_outdir': case_full_outdir,
}


if __name__ == '__main__':
    sys.exit(upti_test.in_temp_folder('upti-crash-', CASES[CASE], needed=(UPTI, APP)))
