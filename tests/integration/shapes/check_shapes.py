#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Process shapes under `upti run`: check_shapes.py BUILD CASE. Exit 0 pass, 1 fail.

  exec    a program that records, then execs itself (same pid), 6 images x 10,000
          marks: one database for the pid with all 60,000 marks, none dropped, and
          each image (command line, start) listed in order (metadata images,
          image.K.command, image.K.start); info_process has the first image's.
  daemon  one mark, then a daemon (double fork, setsid) that records 20,000 marks
          after the program ended: upti run waits for it; both databases hold
          their marks exactly; upti run exits with the program's status (3).
  long_name  a program named with 250 characters: its output name is shortened (said
          once) and written, not kept for a recovery that could never write it.
  kill    upti run and its program SIGKILLed: the run folder alone is left (no empty
          file of upti's in TMPDIR), and nothing once `upti recover` wrote the trace.
  daemon_idle  a daemon that never records nor ends (its claim stays locked), upti run
          SIGKILLed while it waits for it: `upti recover --max-wait 1` of the run folder
          says the claim is kept, writes the program's trace and keeps the ring folder
          (with the claim); once the daemon ended, a second recovery removes both folders.
  daemon_idle_run  the same daemon under upti run, not killed: after 10 s upti run says
          once whom it waits for (the daemon's pid) and how to stop; SIGINT (Ctrl-C) then
          writes the program's trace, keeps the folder for the daemon (said) and exits
          with the program's status (3).
  claims_polled  50 forked children that record nothing, alive while the program runs,
          ended before it: upti run (under strace) opens each claim exactly once, after
          the program ended (it opened them at every pass while the program ran); skipped
          without strace or ptrace.
  daemon_record_only  the same daemon traced without upti run:
          the tool's helper collector waits for it.
  argv    a program that cuts its argument "param=x.param" in place before it
          records: info_process.command is the command line upti run started.
  argv_wrapper  the same program started by a wrapper that execs it (sh -c 'exec APP ...',
          same pid, the wrapper records nothing): info_process.command is the program's
          own command line as /proc shows it when libupti is loaded (after the program's
          edit: "param x.param"), not the wrapper's.
"""
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'common', 'python'))
import upti_test  # noqa: E402

BUILD = os.path.abspath(sys.argv[1])
CASE = sys.argv[2]
UPTI = os.path.join(BUILD, 'bin', 'upti')
APP = os.path.join(BUILD, 'bin', 'process_shapes')


def fail(msg):
    print('FAIL %s: %s' % (CASE, msg))
    sys.exit(1)


def env():
    return {k: v for k, v in os.environ.items()
            if not k.startswith(('UPTI_TOOL', 'UPTI_TRACE', 'OPENCL_LAYERS'))}


def run(tmp, args, expect_rc, app=APP, output=('-o', 'shapes-%pid%'), said=()):
    cmd = [UPTI, 'run', '-d', tmp] + list(output) + ['--', app] + args
    p = subprocess.run(cmd, env=env(), capture_output=True, text=True, errors='replace',
                       timeout=240)
    where = '\ncommand: %s\nstdout: %s\nstderr: %s' % (' '.join(cmd), p.stdout, p.stderr)
    if p.returncode != expect_rc:
        fail('exit status %d, expected %d%s' % (p.returncode, expect_rc, where))
    others = [l for l in upti_test.said(p.stderr)
              if l.startswith('upti:') and not l.startswith('upti: wrote ')]
    if len(others) != len(said) or not all(s in l for s, l in zip(said, others)):
        fail('upti: lines other than %r%s' % (said, where))
    dbs = sorted(os.path.join(tmp, f) for f in os.listdir(tmp) if f.endswith('.db'))
    return dbs, where


def query(path, sql):
    con = sqlite3.connect('file:%s?mode=ro' % path, uri=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def meta(path):
    return dict(query(path, 'SELECT key, value FROM metadata'))


def check_exec(tmp):
    images, marks = 6, 10000
    dbs, where = run(tmp, ['exec', str(images), str(marks)], 0)
    if len(dbs) != 1:
        fail('%d databases, expected 1 (one process)%s' % (len(dbs), where))
    db = dbs[0]
    m = meta(db)
    for k in range(images):
        n = query(db, "SELECT count(*) FROM markers WHERE message LIKE 'img%d:%%'" % k)[0][0]
        if n != marks:
            fail('image %d: %d marks, expected %d' % (k, n, marks))
    if m.get('records_dropped') != '0':
        fail('records_dropped %r' % m.get('records_dropped'))
    if m.get('images') != str(images):
        fail('metadata images %r, expected %d' % (m.get('images'), images))
    starts = []
    for k in range(1, images + 1):
        cmd = m.get('image.%d.command' % k, '')
        want = 'exec %d %d' % (images, marks) + ('' if k == 1 else ' %d' % (k - 1))
        if not cmd.endswith(want):
            fail('image.%d.command %r, expected ... %r' % (k, cmd, want))
        starts.append(int(m.get('image.%d.start' % k, '0')))
    if starts != sorted(starts) or len(set(starts)) != images:
        fail('image starts not in order: %r' % starts)
    command, start = query(db, 'SELECT command, start FROM info_process')[0]
    if command != m['image.1.command'] or start != starts[0]:
        fail('info_process (%r, %d) is not the first image (%r, %d)'
             % (command, start, m['image.1.command'], starts[0]))


def check_daemon(tmp):
    marks = 20000
    dbs, where = run(tmp, ['daemon', str(marks)], 3)
    if 'shapes: daemon started' not in where:
        fail('the daemon was not started%s' % where)
    if len(dbs) != 2:
        fail('%d databases, expected 2 (the program and its daemon)%s' % (len(dbs), where))
    counts = sorted((query(db, "SELECT count(*) FROM markers WHERE message LIKE 'daemon:%'")[0][0],
                     query(db, "SELECT count(*) FROM markers WHERE message = 'top'")[0][0],
                     meta(db).get('records_dropped')) for db in dbs)
    if counts != [(0, 1, '0'), (marks, 0, '0')]:
        fail('(daemon marks, top marks, dropped) per database %r, expected %r'
             % (counts, [(0, 1, '0'), (marks, 0, '0')]))


def check_daemon_record_only(tmp):
    """The same daemon without upti run (the tool's helper
    collector): the helper waits for it, both databases exact."""
    marks = 20000
    out = os.path.join(tmp, 'out')
    os.mkdir(out)
    e = env()
    e.update({'UPTI_TOOL_LIBRARIES': os.path.join(BUILD, 'lib', 'libupti-trace.so'),
              'UPTI_TRACE_KINDS': 'marker_api',
              'UPTI_TRACE_OUTPUT': os.path.join(out, 'd-%pid%'), 'TMPDIR': tmp})
    # The helper's stderr is the program's: the pipe ends once it wrote the databases.
    p = subprocess.run([APP, 'daemon', str(marks)], env=e, capture_output=True, text=True,
                       timeout=240)
    where = '\nstdout: %s\nstderr: %s' % (p.stdout, p.stderr)
    dbs = sorted(os.path.join(out, f) for f in os.listdir(out) if f.endswith('.db'))
    if p.returncode != 3 or len(dbs) != 2:
        fail('exit %d, databases %r, expected 3 and 2%s' % (p.returncode, dbs, where))
    counts = sorted((query(db, "SELECT count(*) FROM markers WHERE message LIKE 'daemon:%'")[0][0],
                     query(db, "SELECT count(*) FROM markers WHERE message = 'top'")[0][0],
                     meta(db).get('records_dropped')) for db in dbs)
    if counts != [(0, 1, '0'), (marks, 0, '0')]:
        fail('(daemon marks, top marks, dropped) per database %r%s' % (counts, where))


def check_argv(tmp):
    dbs, where = run(tmp, ['argv', 'param=x.param'], 0)
    if len(dbs) != 1:
        fail('%d databases, expected 1%s' % (len(dbs), where))
    command = query(dbs[0], 'SELECT command FROM info_process')[0][0]
    if command != '%s argv param=x.param' % APP:
        fail('info_process.command %r, expected %r' % (command, '%s argv param=x.param' % APP))


def check_argv_wrapper(tmp):
    dbs, where = run(tmp, ['-c', 'exec %s argv param=x.param' % APP], 0, app='/bin/sh')
    if len(dbs) != 1:
        fail('%d databases, expected 1%s' % (len(dbs), where))
    want = '%s argv param x.param' % APP
    command = query(dbs[0], 'SELECT command FROM info_process')[0][0]
    if command != want or meta(dbs[0]).get('image.1.command') != want:
        fail('info_process.command %r, image.1.command %r, expected %r'
             % (command, meta(dbs[0]).get('image.1.command'), want))


def check_long_name(tmp):
    """A program named with 250 characters, the default output name (upti-%argv0%-%pid%):
    the name is shortened, said once, and the database written; nothing is kept."""
    bindir = os.path.join(tmp, 'bin')
    os.mkdir(bindir)
    app = os.path.join(bindir, 'p' * 250)
    shutil.copy(APP, app)
    out = os.path.join(tmp, 'out')
    os.environ['TMPDIR'] = tmp
    dbs, where = run(out, ['argv', 'a=b'], 0, app=app, output=(),
                     said=('is longer than a file name may be: shortened to its first',))
    if len(dbs) != 1 or os.path.basename(dbs[0]) != 'upti-' + 'p' * (255 - 48 - 5) + '.db':
        fail('databases %r, expected one of the shortened name%s' % (dbs, where))
    if query(dbs[0], "SELECT count(*) FROM markers WHERE message = 'after the edit'")[0][0] != 1:
        fail('the mark is not in %s' % dbs[0])
    left = [f for f in os.listdir(tmp) if f.startswith('upti-')]
    if left:
        fail('left in TMPDIR: %r%s' % (left, where))


def stop_daemon(p, daemon):
    """Kills the daemon (its pid; 0: none seen) and upti run p where it still runs."""
    if daemon:
        os.kill(daemon, signal.SIGKILL)
    if p.poll() is None:
        p.kill()


def recover(folder, e, timeout):
    """`upti recover FOLDER` with the environment e: its CompletedProcess, output as text."""
    return subprocess.run([UPTI, 'recover', folder], env=e, capture_output=True, text=True,
                          timeout=timeout)


def check_kill(tmp):
    """upti run and its program SIGKILLed: TMPDIR holds the run folder only (no empty
    file of upti's); `upti recover` of it writes the trace and leaves nothing, in TMPDIR
    or beside the rings."""
    tmpdir = os.path.join(tmp, 'tmpdir')
    os.mkdir(tmpdir)
    e = env()
    e['TMPDIR'] = tmpdir
    cmd = [UPTI, 'run', '-d', os.path.join(tmp, 'out'), '-o', 'k', '--', APP, 'forever']
    p = subprocess.Popen(cmd, env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = p.stdout.readline()
    if not line.startswith('shapes: started '):
        p.kill()
        fail('the program did not start: %r' % line)
    os.kill(p.pid, signal.SIGKILL)
    p.wait()
    os.kill(int(line.split()[2]), signal.SIGKILL)
    left = os.listdir(tmpdir)
    if len(left) != 1 or not left[0].startswith('upti-collect-'):
        fail('in TMPDIR after the kill: %r, expected the run folder alone' % left)
    folder = os.path.join(tmpdir, left[0])
    with open(os.path.join(folder, 'run.conf'), 'rb') as f:
        conf = f.read().split(b'\0')
    rings = conf[conf.index(b'rings') + 1].decode()
    r = recover(folder, e, 240)
    if r.returncode != 0 or not os.path.exists(os.path.join(tmp, 'out', 'k.db')):
        fail('recover: exit %d\n%s' % (r.returncode, r.stderr))
    if os.listdir(tmpdir) or os.path.exists(rings):
        fail('left after the recovery: %r, rings folder %s %s' % (
            os.listdir(tmpdir), rings, 'kept' if os.path.exists(rings) else 'removed'))


def start_idle_daemon(tmp):
    """upti run -- process_shapes idle_daemon, TMPDIR tmp/tmpdir, outputs in tmp/out:
    (the upti process, TMPDIR, the environment, the output folder)."""
    tmpdir = os.path.join(tmp, 'tmpdir')
    os.mkdir(tmpdir)
    e = env()
    e['TMPDIR'] = tmpdir
    out = os.path.join(tmp, 'out')
    cmd = [UPTI, 'run', '-d', out, '-o', 'i-%pid%', '--', APP, 'idle_daemon']
    p = subprocess.Popen(cmd, env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return p, tmpdir, e, out


def check_daemon_idle(tmp):
    p, tmpdir, e, out = start_idle_daemon(tmp)
    daemon = 0
    try:
        started = False  # (the program's line and the daemon's come in either order)
        for line in p.stdout:
            if line.startswith('shapes: daemon started'):
                started = True
            elif line.startswith('shapes: daemon '):
                daemon = int(line.split()[2])
            if started and daemon:
                break
        if daemon == 0:
            fail('no daemon pid')
        os.kill(p.pid, signal.SIGKILL)  # (upti run waits for the daemon's claim)
        p.wait()
        left = os.listdir(tmpdir)
        if len(left) != 1:
            fail('in TMPDIR: %r' % left)
        folder = os.path.join(tmpdir, left[0])
        with open(os.path.join(folder, 'run.conf'), 'rb') as f:
            conf = f.read().split(b'\0')
        rings = conf[conf.index(b'rings') + 1].decode()
        # (the middle process's claim, unlocked, may still be there: upti run was killed)
        claim = os.path.join(rings, 'upti-%d-0.upti-pending' % daemon)
        if not os.path.exists(claim):
            fail('claims %r, expected the daemon\'s' % os.listdir(rings))
        r = subprocess.run([UPTI, 'recover', '--max-wait', '1', folder], env=e,
                           capture_output=True, text=True, timeout=120)
        want = ['upti: %s is still locked after 1 s: the process that may still record holds '
                'it (kept: upti recover again once it has ended)' % claim]
        said = [l for l in upti_test.said(r.stderr) if not l.startswith('upti: wrote ')]
        dbs = [f for f in os.listdir(out) if f.endswith('.db')]
        if r.returncode != 0 or said != want or len(dbs) != 1:
            fail('recover: exit %d, databases %r, stderr %r, expected %r'
                 % (r.returncode, dbs, r.stderr, want))
        if not os.path.exists(claim) or not os.path.isdir(folder):
            fail('the claim (%s) or the run folder (%s) was removed though the daemon runs'
                 % (os.path.exists(claim), os.path.isdir(folder)))
    finally:
        stop_daemon(p, daemon)
    r = recover(folder, e, 120)
    if r.returncode != 0 or os.path.exists(folder) or os.path.exists(rings):
        fail('second recover: exit %d, %r; run folder %s, ring folder %s'
             % (r.returncode, r.stderr, os.path.exists(folder), os.path.exists(rings)))


def check_daemon_idle_run(tmp):
    p, tmpdir, e, out = start_idle_daemon(tmp)
    daemon = 0
    try:
        for line in p.stdout:
            if line.startswith('shapes: daemon ') and not line.startswith('shapes: daemon started'):
                daemon = int(line.split()[2])
                break
        first = p.stderr.readline()  # (said after 10 s of waiting; the test's timeout bounds it)
        want = ('upti: the program has ended; waiting for 1 traced process it started (pid %d) '
                'to end: Ctrl-C stops the wait, what they recorded is written and the rest kept '
                'for upti recover\n' % daemon)
        if first != want:
            fail('first line %r, expected %r' % (first, want))
        os.kill(p.pid, signal.SIGINT)
        rest = upti_test.said(p.communicate(timeout=120)[1])
        folder = os.path.join(tmpdir, os.listdir(tmpdir)[0]) if os.listdir(tmpdir) else None
        dbs = [f for f in os.listdir(out) if f.endswith('.db')]
        kept = ('upti: 1 traced process was still running when upti stopped: the rest of their '
                'trace is kept in %s (upti recover %s)' % (folder, folder))
        if p.returncode != 3 or len(dbs) != 1 or \
                rest != [kept, 'upti: wrote %s' % os.path.join(out, dbs[0])]:
            fail('after SIGINT: exit %d, databases %r, stderr %r, expected %r'
                 % (p.returncode, dbs, rest, kept))
    finally:
        stop_daemon(p, daemon)
    r = recover(folder, e, 120)
    if r.returncode != 0 or os.listdir(tmpdir):
        fail('recover: exit %d, %r, left %r' % (r.returncode, r.stderr, os.listdir(tmpdir)))


def check_claims_polled(tmp):
    n = 50
    trace = os.path.join(tmp, 'strace.txt')
    cmd = ['strace', '-f', '-qq', '-e', 'trace=openat', '-o', trace, UPTI, 'run', '-d', tmp,
           '-o', 'f-%pid%', '--', APP, 'forks', str(n)]
    try:
        e = env()
        # LeakSanitizer cannot run under ptrace (a sanitized build): leaks are checked elsewhere.
        if 'ASAN_OPTIONS' in e:
            e['ASAN_OPTIONS'] += ':detect_leaks=0'
        p = subprocess.run(cmd, env=e, capture_output=True, text=True, timeout=240)
    except FileNotFoundError:
        print('skipped: no strace')
        sys.exit(77)
    if p.returncode != 0 and 'ptrace' in p.stderr:
        print('skipped: strace cannot trace here: %s' % p.stderr.strip())
        sys.exit(77)
    dbs = [f for f in os.listdir(tmp) if f.endswith('.db')]
    if p.returncode != 0 or len(dbs) != 1:
        fail('exit %d, databases %r, stderr %r' % (p.returncode, dbs, p.stderr))
    opens = [l for l in open(trace) if '.upti-pending", O_RDONLY' in l]
    claims = set(l.split('"')[1] for l in opens)
    if len(claims) != n or len(opens) != n:
        fail('%d opens of %d claims, expected each of the %d claims opened once'
             % (len(opens), len(claims), n))


def main():
    with tempfile.TemporaryDirectory() as tmp:
        {'exec': check_exec, 'daemon': check_daemon, 'argv': check_argv,
         'argv_wrapper': check_argv_wrapper, 'daemon_idle': check_daemon_idle,
         'daemon_idle_run': check_daemon_idle_run, 'claims_polled': check_claims_polled,
         'long_name': check_long_name, 'kill': check_kill,
         'daemon_record_only': check_daemon_record_only}[CASE](tmp)
    print('PASS %s' % CASE)


if __name__ == '__main__':
    main()
