#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Fault cases: check_faults.py BUILD CASE. Exit 0 pass, 1 fail, 77 skipped.

Each case runs fault_app (exit status 7, "app: done") or `upti run` on it with
one fault and checks: the exit status is the program's own, stdout is the
program's, and stderr has exactly the expected number of "upti:" lines, each
mentioning what went wrong."""
import glob
import os
import re
import signal
import shutil
import sqlite3
import subprocess
import sys
import tempfile

SKIP = 77
BUILD = os.path.abspath(sys.argv[1])
CASE = sys.argv[2]
BIN, LIB = os.path.join(BUILD, 'bin'), os.path.join(BUILD, 'lib')
APP = os.path.join(BIN, 'fault_app')
UPTI = os.path.join(BIN, 'upti')
TRACE_TOOL = os.path.join(LIB, 'libupti-trace.so')
LAYER = os.path.join(LIB, 'libupti-opencl.so')


def lib(name):
    return os.path.join(LIB, 'lib%s.so' % name)


def fail(msg):
    print('FAIL %s: %s' % (CASE, msg))
    sys.exit(1)


def base_env():
    return {k: v for k, v in os.environ.items()
            if not k.startswith(('UPTI_TOOL', 'UPTI_TRACE', 'UPTI_CLOCK', 'OPENCL_LAYERS'))
            and k != 'LD_PRELOAD'}


def hung_threads(sid):
    """Where each thread of a hung session waits (/proc: comm, state, wchan, syscall)."""
    lines = []
    for pid in sorted(int(d) for d in os.listdir('/proc') if d.isdigit()):
        try:
            with open('/proc/%d/stat' % pid) as f:
                if int(f.read().rsplit(')', 1)[1].split()[3]) != sid:
                    continue
            for tid in sorted(os.listdir('/proc/%d/task' % pid), key=int):
                t = '/proc/%d/task/%s/' % (pid, tid)
                info = []
                for name in ('comm', 'wchan', 'syscall'):
                    try:
                        with open(t + name) as f:
                            info.append(f.read().strip()[:60])
                    except OSError:
                        info.append('?')
                lines.append('  pid %d tid %s: %s' % (pid, tid, ' | '.join(info)))
        except (OSError, IndexError, ValueError):
            continue
    return 'threads at the time:\n' + '\n'.join(lines)


def run(cmd, env=None, expect_rc=7, lines=0, contains=(), stdout_has=('app: done',), timeout=90):
    e = base_env()
    e.update(env or {})
    proc = subprocess.Popen(cmd, env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, errors='replace', start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        where = hung_threads(proc.pid)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        fail('%s: hung (no exit within %d s)\n%s' % (' '.join(cmd), timeout, where))
    p = subprocess.CompletedProcess(cmd, proc.returncode, out, err)
    upti = [l for l in p.stderr.splitlines() if l.startswith('upti:')]
    where = '\ncommand: %s\nstdout: %s\nstderr: %s' % (' '.join(cmd), p.stdout, p.stderr)
    if p.returncode != expect_rc:
        fail('exit status %d, expected %d%s' % (p.returncode, expect_rc, where))
    for s in stdout_has:
        if s not in p.stdout:
            fail('stdout lacks %r%s' % (s, where))
    if lines is not None and len(upti) != lines:
        fail('%d "upti:" line(s), expected %d%s' % (len(upti), lines, where))
    for c in contains:
        if not any(c in l for l in upti):
            fail('no "upti:" line mentions %r%s' % (c, where))
    return p, upti


def db_count(path, sql):
    con = sqlite3.connect('file:%s?mode=ro' % path, uri=True)
    try:
        return con.execute(sql).fetchone()[0]
    finally:
        con.close()


def upti_run(tmp, extra_env=None, args=(), **kw):
    return run([UPTI, 'run', '--marker-trace'] + list(args) + ['--', APP], extra_env, **kw)


def main():
    tmp = tempfile.mkdtemp(prefix='upti-faults-')
    try:
        return CASES[CASE](tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# ---- tool libraries ----
def tool_missing(tmp):
    run([APP], {'UPTI_TOOL_LIBRARIES': tmp + '/libnope.so'}, lines=1, contains=['libnope.so'])


def tool_not_elf(tmp):
    p = tmp + '/libtext.so'
    open(p, 'w').write('not an ELF file\n')
    run([APP], {'UPTI_TOOL_LIBRARIES': p}, lines=1, contains=['libtext.so'])


def tool_no_configure(tmp):
    run([APP], {'UPTI_TOOL_LIBRARIES': lib('fault_tool_no_configure')}, lines=1,
        contains=['upti_configure'])


def tool_null(tmp):
    # Returning NULL is how a tool declines: no line, no tracing.
    p, _ = run([APP], {'UPTI_TOOL_LIBRARIES': lib('fault_tool_null')}, lines=0)
    if 'tool: finalize' in p.stdout:
        fail('a declining tool was finalized')


def tool_init_fail(tmp):
    run([APP], {'UPTI_TOOL_LIBRARIES': lib('fault_tool_init_fail')}, lines=1,
        contains=['initialize'], stdout_has=['app: done', 'tool: finalize enters=0'])


def tool_uptx_in_init(tmp):
    # Calling the runtime being registered from initialize: no deadlock; every
    # one of the program's own marker calls is seen (4,002 enters).
    run([APP], {'UPTI_TOOL_LIBRARIES': lib('fault_tool_uptx_in_init')}, lines=0,
        stdout_has=['app: done', 'tool: finalize enters=4002 opencl=0\n'])


def tool_ocl_in_init(tmp):
    if not os.path.exists(lib('fault_tool_ocl_in_init')) or not os.path.exists(LAYER):
        print('SKIP: no OpenCL')
        sys.exit(SKIP)
    run([APP, '--ocl'], {'UPTI_TOOL_LIBRARIES': lib('fault_tool_ocl_in_init'),
                         'OPENCL_LAYERS': LAYER}, lines=0,
        stdout_has=['app: done', 'app: clGetPlatformIDs 0', 'tool: clGetPlatformIDs in initialize'])


def tool_uptx_in_thread(tmp):
    # initialize starts and joins a thread that calls uptx: the thread's 30
    # calls return at once, untraced (discovery has not finished); every one
    # of the program's 4,002 calls is traced.
    p, _ = run([APP], {'UPTI_TOOL_LIBRARIES': lib('fault_tool_uptx_in_thread')}, lines=0,
               stdout_has=['app: done', "tool: uptx calls in initialize's thread returned"],
               timeout=60)
    if 'tool: finalize enters=4002 opencl=0\n' not in p.stdout:
        fail('expected exactly the program\'s 4002 marker calls traced: %r' % p.stdout)


def thread_during_discovery(tmp):
    # A thread the program starts while another one discovers the tools (a
    # slow initialize) waits for discovery and is traced: all 4,002 calls.
    # (It went untraced before, taken for a thread of the tool's initialize.)
    run([APP, '--threads-during-discovery'], {'UPTI_TOOL_LIBRARIES': lib('fault_tool_slow_init')},
        lines=0, stdout_has=['app: done', 'tool: finalize enters=4002 opencl=0\n'])


def tool_ocl_in_thread(tmp):
    # The same with clGetPlatformIDs: the thread's call returns untraced; the
    # program's own clGetPlatformIDs, the first after discovery, is traced.
    if not os.path.exists(lib('fault_tool_ocl_in_thread')) or not os.path.exists(LAYER):
        print('SKIP: no OpenCL')
        sys.exit(SKIP)
    p, _ = run([APP, '--ocl'], {'UPTI_TOOL_LIBRARIES': lib('fault_tool_ocl_in_thread'),
                                'OPENCL_LAYERS': LAYER}, lines=0,
               stdout_has=['app: done', 'app: clGetPlatformIDs 0',
                           "tool: clGetPlatformIDs in initialize's thread returned 0"],
               timeout=60)
    if 'tool: finalize enters=4002 opencl=1\n' not in p.stdout:
        fail('expected the program\'s 4002 marker calls and its 1 OpenCL call traced: %r'
             % p.stdout)


def tool_libraries_empty_entries(tmp):
    run([APP], {'UPTI_TOOL_LIBRARIES': ':::'}, lines=0)
    run([APP], {'UPTI_TOOL_LIBRARIES': '::%s::' % lib('fault_tool_ok')}, lines=0,
        stdout_has=['app: done', 'tool: finalize'])


# ---- malformed UPTI_* values ----
def clock_bad(tmp):
    for v in ('bogus', 'x' * 5000, '%s%n%s'):
        run([APP], {'UPTI_CLOCK': v, 'UPTI_TOOL_LIBRARIES': lib('fault_tool_ok')}, lines=1,
            contains=['UPTI_CLOCK'], stdout_has=['app: done', 'tool: finalize'])
    run([APP], {'UPTI_CLOCK': 'gettime', 'UPTI_TOOL_LIBRARIES': lib('fault_tool_ok')}, lines=0)


def buffer_size_bad(tmp):
    for i, v in enumerate(('abc', '99999999999999999999999999', '12q', '-5', '1', '64g', '%n')):
        out = '%s/b%d' % (tmp, i)
        run([APP], {'UPTI_TOOL_LIBRARIES': TRACE_TOOL, 'UPTI_TRACE_KINDS': 'marker_api',
                    'UPTI_TRACE_OUTPUT': out, 'UPTI_TRACE_BUFFER_SIZE': v}, lines=1,
            contains=['UPTI_TRACE_BUFFER_SIZE'])
        n = db_count(out + '.db', 'SELECT count(*) FROM regions')
        if n != 2001:
            fail('UPTI_TRACE_BUFFER_SIZE=%s: %d regions, expected 2001' % (v, n))
    out = tmp + '/good'
    run([APP], {'UPTI_TOOL_LIBRARIES': TRACE_TOOL, 'UPTI_TRACE_OUTPUT': out,
                'UPTI_TRACE_BUFFER_SIZE': '64k'}, lines=0)


def kinds_bad(tmp):
    out = tmp + '/k'
    run([APP], {'UPTI_TOOL_LIBRARIES': TRACE_TOOL, 'UPTI_TRACE_OUTPUT': out,
                'UPTI_TRACE_KINDS': 'bogus,,marker_api,%s%n'}, lines=2, contains=['bogus', '%s%n'])
    if db_count(out + '.db', 'SELECT count(*) FROM regions') != 2001:
        fail('marker_api not traced next to unknown kinds')


def formats_bad(tmp):
    out = tmp + '/f'
    run([APP], {'UPTI_TOOL_LIBRARIES': TRACE_TOOL, 'UPTI_TRACE_OUTPUT': out,
                'UPTI_TRACE_FORMATS': 'db,,xml'}, lines=1, contains=['xml'])
    if not os.path.exists(out + '.db'):
        fail('no database')


# ---- output that cannot be written, planted links ----
def output_unwritable(tmp):
    # A path under a regular file can never be created (root included).
    blocker = tmp + '/file'
    open(blocker, 'w').write('x')
    fallback = tmp + '/fallback'
    os.mkdir(fallback)
    # (`upti run -d` checks its directory itself and refuses before starting
    # the program; this is the tool's own fallback, e.g. a directory that
    # became unwritable or a %env{}% pattern naming a bad place.)
    run([APP], {'UPTI_TOOL_LIBRARIES': TRACE_TOOL, 'UPTI_TRACE_OUTPUT': blocker + '/sub/u',
                'TMPDIR': fallback}, lines=1, contains=['cannot create', fallback])
    dbs = glob.glob(fallback + '/u*.db')
    if len(dbs) != 1 or db_count(dbs[0], 'SELECT count(*) FROM regions') != 2001:
        fail('no complete trace in the fallback directory: %s' % dbs)


def output_unwritable_no_fallback(tmp):
    # Nowhere to write the outputs, not even $TMPDIR: the helper collector keeps the
    # trace in its run folder (in /tmp) and says how to finish it, in two lines.
    blocker = tmp + '/file'
    open(blocker, 'w').write('x')
    p, _ = run([APP], {'UPTI_TOOL_LIBRARIES': TRACE_TOOL, 'UPTI_TRACE_OUTPUT': blocker + '/sub/u',
                       'TMPDIR': blocker + '/tmp'}, lines=2,
               contains=['cannot write ' + blocker + '/sub/u.db', 'upti recover'])
    kept = re.search(r'stays in (\S+\.db)', p.stderr)
    if kept is None or db_count(kept.group(1), 'SELECT count(*) FROM regions') != 2001:
        fail('the trace kept is not complete: %r' % p.stderr)
    shutil.rmtree(os.path.dirname(kept.group(1)), ignore_errors=True)


def output_symlink_db(tmp):
    victim = tmp + '/victim'
    open(victim, 'w').write('precious\n')
    os.symlink(victim, tmp + '/t.db')
    run([APP], {'UPTI_TOOL_LIBRARIES': TRACE_TOOL, 'UPTI_TRACE_OUTPUT': tmp + '/t'}, lines=0)
    if open(victim).read() != 'precious\n':
        fail('the planted link was followed: victim overwritten')
    if not os.path.islink(tmp + '/t.db'):
        fail('the planted link was replaced')
    dbs = glob.glob(tmp + '/t-*.db')
    if len(dbs) != 1 or db_count(dbs[0], 'SELECT count(*) FROM regions') != 2001:
        fail('the trace did not go to t-<pid>.db: %s' % os.listdir(tmp))


def output_symlink_json(tmp):
    victim = tmp + '/victim'
    open(victim, 'w').write('precious\n')
    os.symlink(victim, tmp + '/j.json')
    run([APP], {'UPTI_TOOL_LIBRARIES': TRACE_TOOL, 'UPTI_TRACE_OUTPUT': tmp + '/j',
                'UPTI_TRACE_FORMATS': 'db,json'}, lines=1, contains=['j.json'])
    if open(victim).read() != 'precious\n':
        fail('the planted link was followed: victim overwritten')


# ---- setuid ----
def setuid_tool_libraries(tmp):
    if os.geteuid() != 0 or not shutil.which('setpriv'):
        print('SKIP: needs root and setpriv to make a setuid program')
        sys.exit(SKIP)
    d = tempfile.mkdtemp(prefix='upti-setuid-', dir=os.path.join(BUILD, 'tests'))
    try:
        os.chmod(d, 0o755)
        exe = os.path.join(d, 'fault_app_setuid')
        shutil.copy(APP, exe)
        os.chmod(exe, 0o4755)
        # Everything on the way must be readable by nobody.
        probe = subprocess.run(['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups',
                                exe], capture_output=True, text=True, env=base_env())
        if probe.returncode != 7:
            print('SKIP: cannot run a setuid program here (nosuid mount or permissions): %s'
                  % probe.stderr.strip()[:200])
            sys.exit(SKIP)
        run(['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', exe],
            {'UPTI_TOOL_LIBRARIES': lib('fault_tool_ok')}, lines=1,
            contains=['setuid'])
        p, _ = run(['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', exe],
                   {'UPTI_TOOL_LIBRARIES': lib('fault_tool_ok')}, lines=1)
        if 'tool:' in p.stdout:
            fail('the tool was loaded into a setuid process')
    finally:
        shutil.rmtree(d, ignore_errors=True)


# ---- fork without exec ----
FORK = os.path.join(BIN, 'fault_fork_spam')


def skip_if_unsupported():
    p = subprocess.run([FORK, '0', '0'], capture_output=True, text=True, env=base_env())
    if p.returncode == 77:
        print(p.stdout.strip())
        sys.exit(SKIP)


def fork_child_traces(tmp):
    skip_if_unsupported()
    out = tmp + '/fk'
    run([FORK, '3', '1000'], {'UPTI_TOOL_LIBRARIES': TRACE_TOOL, 'UPTI_TRACE_OUTPUT': out,
                              'UPTI_TRACE_KINDS': 'marker_api'}, lines=0,
        stdout_has=['app: 3 forks ok'])
    dbs = sorted(glob.glob(tmp + '/fk*.db'))
    if len(dbs) != 4:
        fail('expected the parent and 3 child traces, got %s' % dbs)
    kids = [d for d in dbs if db_count(d, "SELECT count(*) FROM regions WHERE name = 'child'") == 1000]
    if len(kids) != 3:
        fail('not every child traced its 1000 ranges into its own output: %s' % dbs)


def fork_while_spamming(tmp):
    skip_if_unsupported()
    out = tmp + '/fs'
    run([FORK, '10', '20000'], {'UPTI_TOOL_LIBRARIES': TRACE_TOOL, 'UPTI_TRACE_OUTPUT': out,
                                 'UPTI_TRACE_KINDS': 'marker_api',
                                 'UPTI_TRACE_BUFFER_SIZE': '64k'}, lines=None,
        stdout_has=['app: 10 forks ok'], timeout=110)
    dbs = glob.glob(tmp + '/fs*.db')
    if len(dbs) != 11:
        fail('expected the parent and 10 child traces, got %d' % len(dbs))



# ---- marker texts longer than UPTI_MARKER_TEXT_MAX (1023 bytes) ----
MARKER_TEXT = os.path.join(BIN, 'fault_marker_text')
TEXT_MAX = 1023


def text_of(n):
    return ''.join(chr(ord('a') + i % 26) for i in range(n))


def marker_texts(tmp, name, lengths, cut):
    """Marks texts of these lengths; checks the stderr line, the database's
    count of cut texts and every stored text."""
    out = '%s/%s' % (tmp, name)
    env = {'UPTI_TOOL_LIBRARIES': TRACE_TOOL, 'UPTI_TRACE_OUTPUT': out,
           'UPTI_TRACE_KINDS': 'marker_api'}
    want = ['%d marker text%s longer than 1023 bytes (UPTI_MARKER_TEXT_MAX) %s cut'
            % (cut, '' if cut == 1 else 's', 'was' if cut == 1 else 'were')] if cut else []
    _, lines = run([MARKER_TEXT] + [str(n) for n in lengths], env, lines=len(want),
                   contains=want)
    for w in want:
        if lines != ['upti: ' + w]:
            fail('stderr says %r, expected %r' % (lines, ['upti: ' + w]))
    db = out + '.db'
    v = db_count(db, "SELECT value FROM metadata WHERE key = 'marker_texts_truncated'")
    if v != str(cut):
        fail('metadata marker_texts_truncated = %r, expected %r' % (v, str(cut)))
    con = sqlite3.connect('file:%s?mode=ro' % db, uri=True)
    try:
        got = [r[0] for r in con.execute('SELECT message FROM markers ORDER BY id')]
    finally:
        con.close()
    expected = [text_of(min(n, TEXT_MAX)) for n in lengths]
    if got != expected:
        fail('stored texts have lengths %s, expected %s'
             % ([len(t) for t in got], [len(t) for t in expected]))


def marker_text_cut(tmp):
    marker_texts(tmp, 'cut', [10, 1024, 5000, 1023, 70000, 1025], 4)


def marker_text_at_limit(tmp):
    marker_texts(tmp, 'at', [1022, 1023], 0)   # at the limit: kept whole, nothing said
    marker_texts(tmp, 'over', [1024], 1)       # one byte over: cut to 1023, said once


# ---- fork without exec while a thread enqueues OpenCL work (fork_ocl.c) ----
FORK_OCL = os.path.join(BIN, 'fault_fork_ocl')
FORK_OCL_FORKS = 6


def fork_ocl(tmp, mode, traced_child, kids_expected=FORK_OCL_FORKS):
    """Runs fault_fork_ocl MODE under the trace tool; checks the parent's trace
    exactly and returns (kernels, stdout, child databases). A child that records
    nothing has no ring, so no trace (as under `upti run`): kids_expected 0."""
    if not os.path.exists(FORK_OCL) or not os.path.exists(LAYER):
        print('SKIP: no OpenCL')
        sys.exit(SKIP)
    out = tmp + '/fo'
    env = {'UPTI_TOOL_LIBRARIES': TRACE_TOOL, 'OPENCL_LAYERS': LAYER, 'UPTI_TRACE_OUTPUT': out,
           'UPTI_TRACE_KINDS': 'opencl_api,kernel_dispatch,marker_api'}
    e = base_env()
    e.update(env)
    probe = subprocess.run([FORK_OCL, mode, '0'], env=e, capture_output=True, text=True)
    if probe.returncode == SKIP:
        print(probe.stdout.strip())
        sys.exit(SKIP)
    p, _ = run([FORK_OCL, mode, str(FORK_OCL_FORKS)], env, lines=0,
               stdout_has=['forks ok'], timeout=240)
    words = [l for l in p.stdout.splitlines() if l.startswith('app: ') and 'kernels' in l]
    if len(words) != 1:
        fail('no single "app: N kernels" line: %r' % p.stdout)
    n = int(words[0].split()[1])
    parent = out + '.db'
    if not os.path.exists(parent):
        fail('no parent trace: %s' % os.listdir(tmp))
    got = (db_count(parent, 'SELECT count(*) FROM kernels'),
           db_count(parent, "SELECT count(*) FROM apis WHERE name = 'clEnqueueNDRangeKernel'"),
           db_count(parent, "SELECT count(*) FROM regions WHERE name = 'parent'"),
           db_count(parent, "SELECT count(*) FROM regions WHERE name = 'child'"))
    if got != (n, n, 1, 0):
        fail('parent trace holds (kernels, enqueues, parent ranges, child ranges) = %s, '
             'expected %s' % (got, (n, n, 1, 0)))
    kids = sorted(d for d in glob.glob(out + '-*.db'))
    if len(kids) != kids_expected:
        fail('expected %d child traces, got %s' % (kids_expected, os.listdir(tmp)))
    for d in kids if traced_child else ():
        got = (db_count(d, 'SELECT count(*) FROM kernels'),
               db_count(d, 'SELECT count(*) FROM apis'),
               db_count(d, "SELECT count(*) FROM regions WHERE name = 'parent'"))
        if got != (0, 0, 0):
            fail('child trace %s holds the parent\'s records (kernels, apis, parent ranges) = %s'
                 % (d, got))
    return n, p.stdout, kids


def fork_ocl_exit(tmp):
    fork_ocl(tmp, 'exit', True, kids_expected=0)


def fork_ocl_calls(tmp):
    _, _, kids = fork_ocl(tmp, 'calls', True)
    for d in kids:
        got = (db_count(d, "SELECT count(*) FROM regions WHERE name = 'child'"),
               db_count(d, "SELECT count(*) FROM markers WHERE message = 'child mark'"))
        if got != (100, 100):
            fail('child trace %s holds (child ranges, child marks) = %s, expected (100, 100)'
                 % (d, got))


def fork_ocl_underscore_exit(tmp):
    # _exit runs no exit handler: the child's trace is what its tool thread
    # committed (not checked); the parent's is exact.
    fork_ocl(tmp, '_exit', False)


def fork_ocl_subscriber(tmp):
    n, stdout, _ = fork_ocl(tmp, 'subscriber', True, kids_expected=0)
    if 'app: completed %d\n' % n not in stdout:
        fail('the subscriber did not see %d kernels completed: %r' % (n, stdout))

CASES = {k: v for k, v in globals().items() if callable(v) and k in sys.argv[2:3]}
if CASE not in CASES:
    print('unknown case', CASE)
    sys.exit(2)
sys.exit(main() or 0)
