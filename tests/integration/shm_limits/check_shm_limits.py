#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The traced program never dies because of UPTI under small limits:
check_shm_limits.py BUILD CASE. Exit 0 pass, 1 fail, 77 skipped.

The program is many_marks THREADS N (this folder): THREADS threads of N uptx_mark calls
each, one line on stdout, status 0. Each case runs it untraced and under
`upti run --marker-trace`, in the same conditions, and checks that the traced run's exit
status and stdout are the untraced run's, and that every mark made is in the database
exactly once or counted as dropped: marks + metadata records_dropped == THREADS * N, and
the end-of-run line names the same drop count.

  shm_64m        a private mount namespace (unshare -m) with a 64 MiB tmpfs on /dev/shm
                 (Docker's default), 80 x 30,000 marks: the rings are sized to half of it
                 (one "upti:" line says so), every thread has a ring (marks of each).
  shm_2m         the same with a 2 MiB tmpfs: fewer rings than threads; the threads
                 without one have their marks counted as dropped.
  shm_readonly   a read-only /dev/shm: the rings go to the run folder ($TMPDIR), nothing
                 is dropped.
  address_space  RLIMIT_AS of 200,000 KiB (ulimit -v 200000) for upti and the program,
                 8 x 10,000 marks: the rings are sized to fit (one "upti:" line), all
                 80,000 marks are in the database.
  hot_window     a 64 MiB ring that a collector keeps empty (hot_window, which drains its
                 own ring every 1,000 marks), 300,000 marks (about 19 MB of records): the
                 program writes only the ring's first MiB (it goes back to the start while
                 the collector keeps up) and its resident shared memory stays under 2 MiB
                 (before: 18.8 MB, every page it wrote).
  big_ring       `upti run` with 8 rings of 64 MiB, 2 x 200,000 marks: every mark
                 once, none dropped (the collector skips the rest of a ring a producer left
                 early, and reads what came before and after it).
  slot_churn     150 rounds of 8 new threads each on 4 rings (UPTI_TRACE_RING_SLOTS): each
                 round's threads take the rings the last round's left, all at once. Each
                 mark once or counted dropped, and each thread's marks are its last ones, in
                 order: two threads never share a ring (they once could, when both saw the
                 same left ring free). The run is closed (metadata finalized): the main
                 thread's last records wait for a ring rather than be dropped.
The /dev/shm cases need root and unshare; they skip where either is missing.
"""
import os
import re
import resource
import shutil
import sqlite3
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'common', 'python'))
import upti_test  # noqa: E402
from upti_test import SKIP  # noqa: E402

BUILD, CASE = upti_test.build_and_case()
UPTI, APP = upti_test.built(BUILD, 'bin/upti', 'bin/many_marks')
SIZED = re.compile(r'upti: rings of (\d+) KiB for (\d+) threads \(asked: (\d+) KiB for (\d+)\): ')
fail, _ = upti_test.failing('FAIL %s:' % CASE)


def env(tmp, **extra):
    return upti_test.tmpdir_env(tmp, ('UPTI_TOOL', 'UPTI_TRACE', 'UPTI_RING', 'OPENCL_LAYERS'), **extra)


def in_namespace(mount_opts, cmd):
    """cmd in a private mount namespace whose /dev/shm is a new tmpfs mounted with mount_opts."""
    script = 'mount -t tmpfs -o %s tmpfs /dev/shm && exec "$@"' % mount_opts
    return ['unshare', '-m', '--propagation', 'private', 'sh', '-c', script, 'sh'] + cmd


def need_namespace():
    if os.geteuid() != 0:
        print('SKIP: needs root (a tmpfs on /dev/shm in a mount namespace)')
        sys.exit(SKIP)
    if shutil.which('unshare') is None or subprocess.run(
            in_namespace('size=1m', ['true']), capture_output=True).returncode != 0:
        print('SKIP: cannot make a private mount namespace with its own /dev/shm here')
        sys.exit(SKIP)


def run(cmd, tmp, preexec=None, **extra):
    p = subprocess.run(cmd, env=env(tmp, **extra), capture_output=True, text=True,
                       errors='replace', timeout=280, preexec_fn=preexec)
    return p.returncode, p.stdout, p.stderr


def check(tmp, wrap, threads, n, preexec=None, rounds=1, **extra):
    """Runs many_marks untraced and traced through wrap; returns (the marks of each thread,
    by number, as a list of their i; dropped; the upti: lines other than "wrote")."""
    app = [APP, str(threads), str(n)] + ([str(rounds)] if rounds != 1 else [])
    threads *= rounds
    rc0, out0, err0 = run(wrap(app), tmp, preexec)
    if rc0 != 0 or err0 != '':
        fail('untraced: status %d, stderr %r' % (rc0, err0))
    d = os.path.join(tmp, 'out')
    cmd = [UPTI, 'run', '--marker-trace', '-d', d, '-o', 'c', '--'] + app
    rc, out, err = run(wrap(cmd), tmp, preexec, **extra)
    where = '\ncommand: %s\nstdout: %r\nstderr: %s' % (' '.join(wrap(cmd)), out, err)
    if rc != rc0 or out != out0:
        fail('traced: status %d and stdout %r, untraced %d and %r%s' % (rc, out, rc0, out0, where))
    con = sqlite3.connect('file:%s?mode=ro' % os.path.join(d, 'c.db'), uri=True)
    rows = [r[0] for r in con.execute("SELECT message FROM markers WHERE operation = 'uptx_mark'")]
    dropped = con.execute("SELECT value FROM metadata WHERE key = 'records_dropped'").fetchone()
    con.close()
    dropped = int(dropped[0]) if dropped is not None else -1
    if len(rows) + dropped != threads * n:
        fail('%d marks made, %d in the database, %d dropped%s'
             % (threads * n, len(rows), dropped, where))
    if len(set(rows)) != len(rows):
        fail('%d marks are in the database twice%s' % (len(rows) - len(set(rows)), where))
    per_thread = [[] for _ in range(threads)]
    for m in rows:
        t, i = m.split(':')
        per_thread[int(t)].append(int(i))
    lines = [l for l in upti_test.said(err) if not l.startswith('upti: wrote ')]
    # One line per reason (a full ring; no free slot): together, every drop.
    said = [l for l in lines if 'records were dropped' in l]
    counts = [re.match(r'upti: process \d+: (\d+) records were dropped \(', l) for l in said]
    if None in counts or sum(int(m.group(1)) for m in counts) != dropped:
        fail('%d dropped, but the end-of-run lines say %r%s' % (dropped, said, where))
    return per_thread, dropped, [l for l in lines if l not in said], where


def sized_line(lines, where):
    """The one line saying what the rings were sized to: (KiB, threads)."""
    sized = [m for m in map(SIZED.match, lines) if m]
    if len(sized) != 1 or len(lines) != 1:
        fail('expected one "upti: rings of ..." line, got %r%s' % (lines, where))
    return int(sized[0].group(1)), int(sized[0].group(2))


def case_shm(tmp, size, threads, n):
    need_namespace()
    per_thread, dropped, lines, where = check(tmp, lambda c: in_namespace('size=' + size, c),
                                              threads, n)
    kib, slots = sized_line(lines, where)
    # Half of the tmpfs at most for the rings and their control blocks.
    budget = int(size[:-1]) * 1024 * 1024 // 2
    if 4096 + slots * 384 + slots * kib * 1024 > budget:
        fail('rings of %d KiB for %d threads do not fit in %d bytes%s' % (kib, slots, budget, where))
    with_marks = sum(1 for c in per_thread if c)
    if slots >= threads + 1 and with_marks != threads:
        fail('%d rings for %d threads, but only %d threads have marks%s'
             % (slots, threads, with_marks, where))
    # (More threads than rings may have marks: a thread that exited leaves its slot to a
    # later one once the collector emptied it, as under ThreadSanitizer's slow threads.)
    print('%s: rings of %d KiB for %d threads; %d marks written, %d dropped, %d threads with '
          'marks; status and output as untraced' % (CASE, kib, slots, sum(map(len, per_thread)),
                                                   dropped, with_marks))


def case_shm_readonly(tmp):
    need_namespace()
    per_thread, dropped, lines, where = check(tmp, lambda c: in_namespace('ro,size=1m', c), 8, 5000)
    if dropped != 0 or lines:
        fail('%d dropped, lines %r%s' % (dropped, lines, where))
    print('shm_readonly: all %d marks, status and output as untraced' % sum(map(len, per_thread)))


def case_address_space(tmp):
    limit = 200000 * 1024

    def preexec():
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    per_thread, dropped, lines, where = check(tmp, lambda c: c, 8, 10000, preexec)
    kib, slots = sized_line(lines, where)
    if dropped != 0 or list(map(len, per_thread)) != [10000] * 8:
        fail('marks per thread %r, %d dropped%s' % (list(map(len, per_thread)), dropped, where))
    print('address_space: rings of %d KiB for %d threads; all 80,000 marks' % (kib, slots))


def case_hot_window(tmp):
    shm = tempfile.mkdtemp(prefix='upti-hot-window-', dir='/dev/shm')
    try:
        rc, out, err = run([os.path.join(BUILD, 'bin', 'hot_window'), shm, str(64 << 20),
                            '300000'], tmp)
    finally:
        shutil.rmtree(shm, ignore_errors=True)
    m = re.fullmatch(r'rss_shmem_kb=(\d+) max_offset=(\d+)\n', out)
    if rc != 0 or m is None:
        fail('status %d, stdout %r, stderr %r' % (rc, out, err))
    rss, offset = int(m.group(1)), int(m.group(2))
    if offset >= 1 << 20 or rss >= 2048:
        fail('the program wrote up to offset %d of its 64 MiB ring and has %d KiB of shared '
             'memory resident; expected below 1 MiB and 2 MiB' % (offset, rss))
    print('hot_window: 300,000 marks in the first %d bytes of a 64 MiB ring, %d KiB resident'
          % (offset + 1, rss))


def case_big_ring(tmp):
    per_thread, dropped, lines, where = check(tmp, lambda c: c, 2, 200000,
                                              UPTI_TRACE_BUFFER_SIZE='64m', UPTI_TRACE_RING_SLOTS='8')
    if dropped != 0 or list(map(len, per_thread)) != [200000] * 2 or lines:
        fail('marks per thread %r, %d dropped, lines %r%s'
             % (list(map(len, per_thread)), dropped, lines, where))
    print('big_ring: all 400,000 marks once')


def case_slot_churn(tmp):
    threads, n, rounds, slots = 8, 200, 150, 4
    per_thread, dropped, lines, where = check(tmp, lambda c: c, threads, n, rounds=rounds,
                                              UPTI_TRACE_RING_SLOTS=str(slots))
    # A thread that found no free ring at a mark drops it and looks again at the next; once
    # it has one it keeps it: what it wrote is its last marks, in order.
    for t, marks in enumerate(per_thread):
        if marks and sorted(marks) != list(range(n - len(marks), n)):
            fail('thread %d wrote marks %r..., expected its last %d in order%s'
                 % (t, sorted(marks)[:10], len(marks), where))
    # The main thread's records at exit (the bundled tool's "finalized") found a ring: it
    # waits for one the last threads left, rather than drop them (the run was reported
    # "ended: exited with status 0", not closed, and 2 records more than marks were dropped).
    con = sqlite3.connect('file:%s?mode=ro' % os.path.join(tmp, 'out', 'c.db'), uri=True)
    meta = dict(con.execute("SELECT key, value FROM metadata WHERE key IN ('finalized', 'ended')"))
    con.close()
    if meta != {'finalized': '1'}:
        fail('metadata %r, expected finalized=1 and no ended%s' % (meta, where))
    with_marks = sum(1 for m in per_thread if m)
    if with_marks < rounds:
        fail('only %d of %d threads have marks: the rings were not reused%s'
             % (with_marks, threads * rounds, where))
    print('slot_churn: %d rounds of %d threads on %d rings: %d threads with marks, %d marks, '
          '%d dropped' % (rounds, threads, slots, with_marks, sum(map(len, per_thread)), dropped))


CASES = {
    'shm_64m': lambda tmp: case_shm(tmp, '64m', 80, 30000),
    'shm_2m': lambda tmp: case_shm(tmp, '2m', 80, 30000),
    'shm_readonly': case_shm_readonly,
    'address_space': case_address_space,
    'hot_window': case_hot_window,
    'big_ring': case_big_ring,
    'slot_churn': case_slot_churn,
}


if __name__ == '__main__':
    if CASE not in CASES:
        fail('unknown case')
    sys.exit(upti_test.in_temp_folder('upti-shm-limits-', CASES[CASE], needed=(APP,)))
