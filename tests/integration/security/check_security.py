#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Shared machines and hostile files (issue 20, sections 2 and 3):
check_security.py BUILD CASE. Exit 0 pass, 1 fail, 77 skipped (a case that needs root).

The traced program is tests/apps/counted_marks (uptx_mark calls), recording only into a
ring folder set by hand (UPTI_TRACE_RING_DIR, no collector): its ring stays for the test.

  shared_folder  root: users upti_victim and upti_attacker (useradd). The attacker makes
                 the docs' ring folder first (mode 0777) and puts a forged ring in it. The
                 victim's program is not traced there (one "upti:" line, its own exit status
                 and output), writes no file there; the victim's `upti recover` and
                 `upti-ring collect --dir` of it exit 2 with one line; nothing forged is
                 converted.
  own_folder_writable  a folder of the caller that others may write: the same refusals.
  recover_links  root: `upti recover` of the attacker's folder holding links recover.spool and
                 recover.lock to root's files: exit 2, nothing created at the links'
                 targets. In a folder of the caller's own, such links are not followed:
                 one line, exit 1, no target created, the ring still there.
  output_name    a ring whose output name is ../../NAME or an absolute one outside the
                 current folder: `upti recover` writes NAME.db in the current folder, says so.
  bad_rings      copies of a real ring with a header that claims more slots than the file
                 holds, a data_offset whose sum with slot_size overflows, slot_size 2^63: one
                 line each, skipped; the real ring's records all collected (upti-ring collect,
                 upti recover); nobody dies of SIGSEGV.
  same_uid       two ring files with the same uid: two processes' databases, each with all
                 its records.
  pid_wait       a ring naming pid 1 with start time 0 is not waited for; one naming pid 1
                 with pid 1's own start time is waited for, named, at most --max-wait.
  many_rings     4,100 ring files: all collected (the collector had room for 4,096).
  output_folder  `upti run -d` under a folder anyone may write (0777): exit 2, one line, the
                 program not run; under a sticky (1777) or group-writable (0775) one: written.
  part_links     NAME.part left in the output folder as a hard link to another file, or
                 a symbolic link: not written through (the run folder on /dev/shm, the
                 output folder elsewhere: the database is copied through c.db.part).
  runpath        every program and library of the build tree (and so what `make install`
                 copies): no RUNPATH or RPATH entry that is empty or relative (not
                 $ORIGIN-based), which the loader would search from the working directory:
                 a libsqlite3.so.0 in the folder `upti` is run from would be loaded. And
                 `upti run` from a folder holding fake libupti.so.0 and .1, libsqlite3.so.0 and
                 libc.so.6 traces its program.
  claims         a FIFO named like a claim (upti-PID-N.upti-pending) beside a ring: not
                 opened for reading (that blocked for ever), said once, not waited for; a
                 claim locked for ever is waited for at most --max-wait, said once, kept.
"""
import fcntl
import os
import pwd
import re
import shutil
import sqlite3
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'common', 'python'))
import upti_test  # noqa: E402
from upti_test import SKIP  # noqa: E402

BUILD, CASE = upti_test.build_and_case()
UPTI, RING, APP, TOOL = upti_test.built(BUILD, 'bin/upti', 'bin/upti-ring', 'bin/counted_marks',
                                        'lib/libupti-trace.so')
VICTIM, ATTACKER = 'upti_victim', 'upti_attacker'
# Ring header offsets (include/upti/ring.h).
MAX_SLOTS, SLOT_SIZE, UID, PID, START = 20, 24, 56, 64, 80
SLOTS, SLOT_BYTES, DATA_OFFSET = 4096, 384, 328


fail, _ = upti_test.failing('FAIL %s:' % CASE)


def need_root():
    if os.geteuid() != 0:
        print('skipped: needs root (a second user, useradd)')
        sys.exit(SKIP)


def ensure_user(name):
    """An unprivileged user (made once, idempotent): its uid."""
    try:
        return pwd.getpwnam(name).pw_uid
    except KeyError:
        subprocess.run(['useradd', '--system', '--no-create-home', '--shell',
                        '/usr/sbin/nologin', name], check=True)
        return pwd.getpwnam(name).pw_uid


def as_user(name, args):
    """args run as user name (environment kept)."""
    if name is None:
        return args
    u = pwd.getpwnam(name)
    return ['setpriv', '--reuid=%d' % u.pw_uid, '--regid=%d' % u.pw_gid, '--clear-groups'] + args


def env(tmpdir, **extra):
    e = upti_test.env_without(('UPTI_TOOL', 'UPTI_TRACE', 'UPTI_RING', 'OPENCL_LAYERS'))
    e['UPTI_TOOL_LIBRARIES'] = TOOL
    e['UPTI_TRACE_KINDS'] = 'marker_api'
    e['TMPDIR'] = tmpdir
    e.update(extra)
    return e


def run(args, user=None, timeout=120, **kw):
    return subprocess.run(as_user(user, args), capture_output=True, text=True, timeout=timeout,
                          **kw)


def private_dir(parent, name, user=None, mode=0o700):
    path = os.path.join(parent, name)
    os.mkdir(path)
    os.chmod(path, mode)
    if user is not None:
        u = pwd.getpwnam(user)
        os.chown(path, u.pw_uid, u.pw_gid)
    return path


def record(rings, work, n, user=None, threads=1, **extra):
    """counted_marks traced into the ring folder rings (no collector): (result, ring files)."""
    before = set(os.listdir(rings)) if os.path.isdir(rings) else set()
    r = run([APP, 'run', os.path.join(work, 'counter'), str(n), str(threads)], user,
            env=env(work, UPTI_TRACE_RING_DIR=rings, **extra), cwd=work)
    after = set(os.listdir(rings)) if os.path.isdir(rings) else set()
    return r, sorted(os.path.join(rings, f) for f in after - before if f.endswith('.upti-ring'))


def marks(db):
    con = sqlite3.connect('file:%s?mode=ro' % db, uri=True)
    rows = [r[0] for r in con.execute("SELECT message FROM markers WHERE operation = 'uptx_mark'")]
    con.close()
    return rows


def patch(src, dst, fields):
    """A copy of ring src at dst with fields {offset: (struct format, value)} changed."""
    data = bytearray(open(src, 'rb').read())
    for off, (fmt, value) in fields.items():
        struct.pack_into(fmt, data, off, value)
    with open(dst, 'wb') as f:
        f.write(data)
    os.chmod(dst, 0o600)


def one_ring(tmp, n=100, threads=1, **extra):
    """A real ring of counted_marks (n marks per thread), in a private folder of its own."""
    folder = private_dir(tmp, 'origin')
    r, files = record(folder, folder, n, threads=threads, **extra)
    if r.returncode != 0 or len(files) != 1:
        fail('recording the original ring: exit %d, files %r, %r' % (r.returncode, files, r.stderr))
    return files[0]


def case_shared_folder(tmp):
    need_root()
    if os.stat('/dev/shm').st_mode & 0o1777 != 0o1777:
        # (a chroot whose /dev/shm is a plain folder: the attack needs one all users share)
        print('SKIP: /dev/shm is not a sticky folder every user may write (mode %o)'
              % (os.stat('/dev/shm').st_mode & 0o7777))
        sys.exit(SKIP)
    ensure_user(VICTIM)
    ensure_user(ATTACKER)
    os.chmod(tmp, 0o755)
    # The attacker's own ring, made in a folder of the attacker's, then planted.
    a_home = private_dir(tmp, 'attacker', ATTACKER)
    r, forged = record(os.path.join(a_home, 'rings'), a_home, 5, ATTACKER)
    if r.returncode != 0 or len(forged) != 1:
        fail('the attacker\'s ring: exit %d, %r, %r' % (r.returncode, forged, r.stderr))
    shared = '/dev/shm/upti-security-%d' % os.getpid()
    try:
        r = run(['mkdir', '-m', '0777', shared], ATTACKER)
        if r.returncode != 0:
            fail('mkdir as the attacker: %s' % r.stderr)
        run(['cp', forged[0], os.path.join(shared, 'upti-1-0.upti-ring')], ATTACKER)
        attacker_uid = pwd.getpwnam(ATTACKER).pw_uid
        refused = ('upti: %s is owned by user %s (uid %d), not by you: not used (a folder '
                   'another user owns could hold forged rings or links)' %
                   (shared, ATTACKER, attacker_uid))
        v_home = private_dir(tmp, 'victim', VICTIM)
        r, files = record(shared, v_home, 2000, VICTIM)
        out_lines = r.stdout.splitlines()
        if r.returncode != 0 or out_lines != ['counted: started']:
            fail('the victim\'s program: exit %d, stdout %r' % (r.returncode, r.stdout))
        want = re.escape(refused) + r': pid [0-9]+ not traced\n'
        if not re.fullmatch(want, r.stderr):
            fail('the victim\'s program: stderr %r, expected one line %r' % (r.stderr, want))
        if files:
            fail('the victim\'s program wrote %r into the attacker\'s folder' % files)
        # The victim's recover and upti-ring collect of it: refused, exit 2, nothing converted.
        r = run([UPTI, 'recover', shared], VICTIM, cwd=v_home, env=env(v_home))
        if r.returncode != 2 or r.stderr != refused + '\n':
            fail('upti recover of the attacker\'s folder: exit %d, %r' % (r.returncode, r.stderr))
        r = run([RING, 'collect', os.path.join(v_home, 'spool'), '--dir', shared], VICTIM)
        if r.returncode != 2 or r.stderr != refused + '\n':
            fail('upti-ring collect --dir: exit %d, %r' % (r.returncode, r.stderr))
        left = sorted(f for f in os.listdir(v_home) if f != 'counter')
        if left:
            fail('the victim\'s folder holds %r' % left)
        if os.listdir(shared) != ['upti-1-0.upti-ring']:
            fail('the shared folder holds %r' % os.listdir(shared))
    finally:
        shutil.rmtree(shared, ignore_errors=True)
    print('shared_folder: the attacker\'s folder refused by the program, recover and collect')


def case_own_folder_writable(tmp):
    rings = private_dir(tmp, 'rings', mode=0o777)
    os.chmod(rings, 0o777)  # (the umask is not asked)
    work = private_dir(tmp, 'work')
    refused = ('upti: %s may be written by its group and others: not used (chmod go-w makes it '
               'private)' % rings)
    r, files = record(rings, work, 100)
    if r.returncode != 0 or files or \
            not re.fullmatch(re.escape(refused) + r': pid [0-9]+ not traced\n', r.stderr):
        fail('the program: exit %d, files %r, stderr %r' % (r.returncode, files, r.stderr))
    ring = one_ring(tmp)
    shutil.copy(ring, os.path.join(rings, os.path.basename(ring)))
    r = run([UPTI, 'recover', rings], cwd=work, env=env(work))
    if r.returncode != 2 or r.stderr != refused + '\n':
        fail('upti recover: exit %d, %r' % (r.returncode, r.stderr))
    os.chmod(rings, 0o770)
    r = run([RING, 'collect', os.path.join(work, 'spool'), '--dir', rings])
    want = 'upti: %s may be written by its group: not used (chmod go-w makes it private)\n' % rings
    if r.returncode != 2 or r.stderr != want:
        fail('upti-ring collect --dir: exit %d, %r' % (r.returncode, r.stderr))
    print('own_folder_writable: refused with one line, exit 2')


def case_recover_links(tmp):
    ring = one_ring(tmp)
    targets = [os.path.join(tmp, 'root-file-%d' % i) for i in range(2)]
    if os.geteuid() == 0:
        ensure_user(ATTACKER)
        os.chmod(tmp, 0o755)
        evil = private_dir(tmp, 'evil', ATTACKER, 0o777)
        run(['cp', ring, os.path.join(evil, 'upti-7-0.upti-ring')], ATTACKER)
        run(['ln', '-s', targets[0], os.path.join(evil, 'recover.spool')], ATTACKER)
        run(['ln', '-s', targets[1], os.path.join(evil, 'recover.lock')], ATTACKER)
        r = run([UPTI, 'recover', evil], cwd=tmp, env=env(tmp))
        if r.returncode != 2 or len(upti_test.said(r.stderr)) != 1 or \
                'is owned by user %s' % ATTACKER not in r.stderr:
            fail('recover of the attacker\'s folder: exit %d, %r' % (r.returncode, r.stderr))
        if any(os.path.lexists(t) for t in targets):
            fail('recover created a link\'s target')
    # Links in a folder of the caller's own: not followed either.
    mine = private_dir(tmp, 'mine')
    shutil.copy(ring, os.path.join(mine, os.path.basename(ring)))
    os.symlink(targets[1], os.path.join(mine, 'recover.lock'))
    r = run([UPTI, 'recover', mine], cwd=tmp, env=env(tmp))
    want = 'upti: cannot create %s/recover.lock: Too many levels of symbolic links\n' % mine
    if r.returncode != 1 or r.stderr != want:
        fail('recover with a linked lock: exit %d, %r (expected %r)' % (r.returncode, r.stderr, want))
    os.unlink(os.path.join(mine, 'recover.lock'))
    os.symlink(targets[0], os.path.join(mine, 'recover.spool'))
    r = run([UPTI, 'recover', mine], cwd=tmp, env=env(tmp))
    want = ('upti: cannot open %s/recover.spool: Too many levels of symbolic links: nothing '
            'collected\n' % mine)
    if r.returncode != 1 or r.stderr != want:
        fail('recover with a linked spool: exit %d, %r (expected %r)' % (r.returncode, r.stderr, want))
    if any(os.path.lexists(t) for t in targets):
        fail('recover created a link\'s target')
    if not os.path.exists(os.path.join(mine, os.path.basename(ring))):
        fail('the ring was taken though nothing could be stored')
    print('recover_links: no link followed, nothing created at its target')


def case_output_name(tmp):
    work = private_dir(tmp, 'work')
    cwd = private_dir(work, 'cwd')
    rings = private_dir(tmp, 'rings')
    outside = private_dir(tmp, 'outside')
    r1, f1 = record(rings, work, 50, UPTI_TRACE_OUTPUT='../../escape-%pid%')
    r2, f2 = record(rings, work, 60, UPTI_TRACE_OUTPUT=os.path.join(outside, 'abs-%pid%'))
    r3, f3 = record(rings, work, 70, UPTI_TRACE_OUTPUT=os.path.join(cwd, 'sub', 'in-%pid%'))
    os.mkdir(os.path.join(cwd, 'sub'))
    if len(f1 + f2 + f3) != 3:
        fail('rings %r' % (f1 + f2 + f3))
    pids = [int(os.path.basename(f).split('-')[1]) for f in (f1[0], f2[0], f3[0])]
    r = run([UPTI, 'recover', rings], cwd=cwd, env=env(work))
    want = sorted([
        'upti: pid %d: the output name %s/../../escape-%d its ring gives leaves the current '
        'folder: written as escape-%d instead' % (pids[0], work, pids[0], pids[0]),
        'upti: wrote escape-%d.db' % pids[0],
        'upti: pid %d: the output name %s/abs-%d its ring gives leaves the current folder: '
        'written as abs-%d instead' % (pids[1], outside, pids[1], pids[1]),
        'upti: wrote abs-%d.db' % pids[1],
        'upti: wrote %s/sub/in-%d.db' % (cwd, pids[2])])
    if r.returncode != 0 or sorted(upti_test.said(r.stderr)) != want:
        fail('recover: exit %d, stderr %r, expected %r' % (r.returncode, r.stderr, want))
    for name, n in (('escape-%d.db' % pids[0], 50), ('abs-%d.db' % pids[1], 60),
                    ('sub/in-%d.db' % pids[2], 70)):
        got = len(marks(os.path.join(cwd, name)))
        if got != n:
            fail('%s: %d marks, expected %d' % (name, got, n))
    if os.listdir(outside) or os.path.exists(os.path.join(tmp, '..', 'escape-%d.db' % pids[0])):
        fail('a database left the current folder')
    print('output_name: every database inside the current folder')


def bad_copies(ring, folder):
    """The hostile copies of ring in folder: {path: the reason the collector gives}."""
    size = os.path.getsize(ring)
    slot_size = struct.unpack_from('<Q', open(ring, 'rb').read(32), SLOT_SIZE)[0]
    bad = {
        'slots': ({MAX_SLOTS: ('<I', 65536)},
                  'max_slots 65536 need 25169920 bytes, the file has %d' % size),
        'overflow': ({SLOTS + DATA_OFFSET: ('<Q', 2 ** 64 - 4096)},
                     'slot 0: data_offset 18446744073709547520 + slot_size %d outside the '
                     "file's %d bytes" % (slot_size, size)),
        'huge': ({SLOT_SIZE: ('<Q', 2 ** 63)},
                 'slot_size 9223372036854775808 (a power of two the file holds)'),
    }
    out = {}
    for name, (fields, why) in bad.items():
        path = os.path.join(folder, '%s.upti-ring' % name)
        fields[UID] = ('<Q', 1000 + len(out))
        patch(ring, path, fields)
        out[path] = 'upti: %s is not a ring file this collector reads (%s): skipped' % (path, why)
    return out


def case_bad_rings(tmp):
    ring = one_ring(tmp, 100, 2, UPTI_TRACE_RING_SLOTS='3')
    pid = int(os.path.basename(ring).split('-')[1])
    for tool in ('collect', 'recover'):
        folder = private_dir(tmp, tool)
        good = os.path.join(folder, os.path.basename(ring))
        shutil.copy(ring, good)
        bad = bad_copies(ring, folder)
        if tool == 'collect':
            spool = os.path.join(tmp, 'spool')
            r = run([RING, 'collect', spool, '--dir', folder])
            want = sorted(bad.values())
            if r.returncode != 0 or sorted(upti_test.said(r.stderr)) != want:
                fail('upti-ring collect: exit %d, stderr %r, expected %r' %
                     (r.returncode, r.stderr, want))
            r = run([RING, 'convert', spool, os.path.join(tmp, 'out')])
            db = os.path.join(tmp, 'out-%d.db' % pid)
            if r.returncode != 0 or r.stdout != db + '\n':
                fail('upti-ring convert: exit %d, %r, %r' % (r.returncode, r.stdout, r.stderr))
        else:
            r = run([UPTI, 'recover', folder], cwd=tmp, env=env(tmp))
            # (named as the program would have: in its folder, origin, inside the current one)
            db = os.path.join(os.path.dirname(ring), 'upti-counted_marks-%d.db' % pid)
            want = sorted(list(bad.values()) + ['upti: wrote %s' % db])
            if r.returncode != 0 or sorted(upti_test.said(r.stderr)) != want:
                fail('upti recover: exit %d, stderr %r, expected %r' % (r.returncode, r.stderr, want))
        got = sorted(marks(db))
        if got != sorted('%d:%d' % (t, i) for t in range(2) for i in range(100)):
            fail('%s: %d marks, expected the 200 calls' % (tool, len(got)))
        if sorted(os.listdir(folder)) != sorted(os.path.basename(p) for p in bad):
            fail('%s left %r' % (tool, sorted(os.listdir(folder))))
    print('bad_rings: each hostile header skipped in one line, the real ring collected')


def case_same_uid(tmp):
    ring = one_ring(tmp, 100)
    pid = int(os.path.basename(ring).split('-')[1])
    folder = private_dir(tmp, 'twins')
    first = os.path.join(folder, os.path.basename(ring))
    shutil.copy(ring, first)
    twin = os.path.join(folder, 'twin.upti-ring')
    patch(ring, twin, {PID: ('<q', pid + 1), START: ('<Q', 0)})  # same uid, another process
    spool = os.path.join(tmp, 'spool')
    r = run([RING, 'collect', spool, '--dir', folder])
    names = sorted([first, twin])
    # (the second of the two the folder lists)
    want = ['upti: %s has the ring uid of another file (a copy?): collected as a process of its '
            'own' % name for name in names]
    if r.returncode != 0 or upti_test.said(r.stderr) not in ([want[0]], [want[1]]):
        fail('collect: exit %d, %r, expected %r' % (r.returncode, r.stderr, want))
    r = run([RING, 'convert', spool, os.path.join(tmp, 'out')])
    dbs = sorted(r.stdout.split())
    want_dbs = sorted(os.path.join(tmp, 'out-%d.db' % p) for p in (pid, pid + 1))
    if r.returncode != 0 or dbs != want_dbs:
        fail('convert: exit %d, %r (expected %r), %r' % (r.returncode, dbs, want_dbs, r.stderr))
    for db in dbs:
        if sorted(marks(db)) != sorted('0:%d' % i for i in range(100)):
            fail('%s: %d marks, expected 100 once each' % (db, len(marks(db))))
    print('same_uid: two files of one uid, two databases of 100 marks each')


def start_ticks(pid):
    data = open('/proc/%d/stat' % pid).read()
    return int(data[data.rindex(')') + 2:].split()[19])


def case_pid_wait(tmp):
    ring = one_ring(tmp, 100)
    # pid 1 with start time 0 (unknown): not waited for, collected at once.
    folder = private_dir(tmp, 'zero')
    patch(ring, os.path.join(folder, 'p1.upti-ring'), {PID: ('<q', 1), START: ('<Q', 0)})
    r = run([UPTI, 'recover', folder], cwd=tmp, env=env(tmp))
    db = os.path.join(os.path.dirname(ring), 'upti-counted_marks-1.db')
    if r.returncode != 0 or r.stderr != 'upti: wrote %s\n' % db:
        fail('recover of a ring naming pid 1, start 0: exit %d, %r' % (r.returncode, r.stderr))
    # pid 1 with its own start time: waited for, named, at most --max-wait; the ring stays.
    folder = private_dir(tmp, 'init')
    ticks = start_ticks(1)
    path = os.path.join(folder, 'p1.upti-ring')
    patch(ring, path, {PID: ('<q', 1), START: ('<Q', ticks)})
    command = open('/proc/1/cmdline', 'rb').read().split(b'\0')[0].decode()
    with open(path, 'r+b') as f:  # the command the ring names (header offset 192)
        f.seek(192)
        f.write(command.encode()[:63] + b'\0')
    os.remove(db)
    r = run([UPTI, 'recover', '--max-wait', '1', folder], cwd=tmp, env=env(tmp))
    want = ['upti: waiting for pid 1 (%s, started at tick %d, as its ring says) to end: it '
            'writes to %s (at most 1 s)' % (command[:63], ticks, path),
            'upti: pid 1 still runs after 1 s: %s is kept (upti recover again once it has '
            'ended)' % path,
            'upti: wrote %s' % db]
    if r.returncode != 0 or upti_test.said(r.stderr) != want:
        fail('recover of a ring naming pid 1: exit %d, %r, expected %r' %
             (r.returncode, r.stderr, want))
    if not os.path.exists(path) or len(marks(db)) != 100:
        fail('the ring of a running producer should stay, its 100 records written')
    print('pid_wait: pid 1 waited for only with its start time, at most --max-wait')


def case_many_rings(tmp):
    ring = one_ring(tmp, 3, UPTI_TRACE_BUFFER_SIZE='4096', UPTI_TRACE_RING_SLOTS='1')
    folder = private_dir(tmp, 'many')
    n = 4100
    data = bytearray(open(ring, 'rb').read())
    for i in range(n):
        struct.pack_into('<Q', data, UID, 0x5000 + i)
        with open(os.path.join(folder, 'r%d.upti-ring' % i), 'wb') as f:
            f.write(data)
    spool = os.path.join(tmp, 'spool')
    r = run([RING, 'collect', spool, '--dir', folder])
    if r.returncode != 0 or r.stderr:
        fail('collect: exit %d, %r' % (r.returncode, r.stderr[:500]))
    if os.listdir(folder):
        fail('%d ring files left' % len(os.listdir(folder)))
    # The spool's PROCESS chunks (src/collector/collect/spool.h): one per ring collected, its uid.
    data, off, uids = open(spool, 'rb').read(), 8, []
    while off + 64 <= len(data):
        magic, ctype, nbytes, uid = struct.unpack_from('<IIQQ', data, off)
        if magic != 0x4b4e4843:
            fail('a chunk without its magic at %d' % off)
        if ctype == 1:
            uids.append(uid)
        off += 64 + nbytes
    if sorted(uids) != [0x5000 + i for i in range(n)]:
        fail('%d processes in the spool (%d distinct), expected %d' % (len(uids), len(set(uids)), n))
    print('many_rings: all %d ring files collected' % n)


def case_claims(tmp):
    ring = one_ring(tmp, 100)
    pid = int(os.path.basename(ring).split('-')[1])
    db = os.path.join(os.path.dirname(ring), 'upti-counted_marks-%d.db' % pid)
    # A FIFO: open(O_RDONLY) of it waits for a writer that never comes.
    folder = private_dir(tmp, 'fifo')
    shutil.copy(ring, folder)
    fifo = os.path.join(folder, 'upti-%d-0.upti-pending' % (pid + 1))
    os.mkfifo(fifo, 0o600)
    try:
        r = run([UPTI, 'recover', folder], cwd=tmp, env=env(tmp), timeout=60)
    except subprocess.TimeoutExpired:
        fail('upti recover of a folder with a FIFO claim did not end in 60 s')
    want = ['upti: %s is not a claim (not a regular file of yours): not waited for' % fifo,
            'upti: wrote %s' % db]
    if r.returncode != 0 or upti_test.said(r.stderr) != want:
        fail('recover with a FIFO claim: exit %d, %r, expected %r' % (r.returncode, r.stderr, want))
    if len(marks(db)) != 100:
        fail('%s: %d marks, expected 100' % (db, len(marks(db))))
    os.remove(db)
    # A claim held locked for ever (here by this test): waited for at most --max-wait.
    folder = private_dir(tmp, 'locked')
    shutil.copy(ring, folder)
    claim = os.path.join(folder, 'upti-%d-0.upti-pending' % (pid + 1))
    with open(claim, 'w') as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        try:
            r = run([UPTI, 'recover', '--max-wait', '1', folder], cwd=tmp, env=env(tmp),
                    timeout=60)
        except subprocess.TimeoutExpired:
            fail('upti recover --max-wait 1 with a claim locked for ever did not end in 60 s')
    want = ['upti: %s is still locked after 1 s: the process that may still record holds it '
            '(kept: upti recover again once it has ended)' % claim,
            'upti: wrote %s' % db]
    if r.returncode != 0 or upti_test.said(r.stderr) != want:
        fail('recover with a locked claim: exit %d, %r, expected %r' % (r.returncode, r.stderr, want))
    if len(marks(db)) != 100 or not os.path.exists(claim):
        fail('%s: %d marks (expected 100), claim kept: %s' % (db, len(marks(db)),
                                                                os.path.exists(claim)))
    print('claims: a FIFO claim not waited for, a locked one at most --max-wait')


def case_part_links(tmp):
    """Output names upti writes through NAME.part (a copy across file systems: the run
    folder in $TMPDIR on another one than the output folder): a NAME.part left there that
    is a second name of another file (a hard link) or a symbolic link is not written
    through: the name is removed and made anew. Before, O_TRUNC on c.db.part overwrote
    the linked file with the database, and the config's .part followed the link."""
    shm = tempfile.mkdtemp(prefix='upti-part-links-', dir='/dev/shm')
    try:
        if os.stat(shm).st_dev == os.stat(tmp).st_dev:
            print('SKIP: /dev/shm and %s are one file system: no copy through .part' % tmp)
            sys.exit(SKIP)
        out = private_dir(tmp, 'out')
        precious = os.path.join(tmp, 'precious')
        with open(precious, 'w') as f:
            f.write('precious\n')
        os.link(precious, os.path.join(out, 'c.db.part'))
        os.symlink(precious, os.path.join(out, 'c_config.json.part'))
        e = {k: v for k, v in os.environ.items() if not k.startswith(('UPTI_', 'OPENCL_LAYERS'))}
        e['TMPDIR'] = shm
        cmd = [UPTI, 'run', '--marker-trace', '--output-config', '-d', out, '-o', 'c', '--',
               APP, 'run', os.path.join(tmp, 'counter'), '40', '1']
        r = run(cmd, env=e, cwd=tmp)
        with open(precious) as f:
            kept = f.read()
        said = ['upti: wrote %s/c.db' % out, 'upti: wrote %s/c_config.json' % out]
        if r.returncode != 0 or kept != 'precious\n' or os.stat(precious).st_nlink != 1 or \
                upti_test.said(r.stderr) != said:
            fail('part_links: exit %d, the linked file holds %r (%d names); stderr %r, '
                 'expected %r' % (r.returncode, kept[:20], os.stat(precious).st_nlink,
                                  r.stderr, said))
        if len(marks(os.path.join(out, 'c.db'))) != 40 or \
                sorted(os.listdir(out)) != ['c.db', 'c_config.json']:
            fail('part_links: the output folder holds %s' % sorted(os.listdir(out)))
        print('part_links: the linked file kept; c.db and c_config.json written')
    finally:
        shutil.rmtree(shm, ignore_errors=True)


def case_output_folder(tmp):
    """An output folder whose path goes through a folder anyone may write, without the
    sticky bit: refused before the program starts (exit 2, one line naming that folder).
    Sticky (like /tmp), or writable by the group only: the trace is written."""
    e = {k: v for k, v in os.environ.items() if not k.startswith(('UPTI_', 'OPENCL_LAYERS'))}
    for mode, refused in ((0o777, True), (0o1777, False), (0o775, False)):
        top = os.path.join(tmp, 'open-%o' % mode)
        os.mkdir(top)
        os.chmod(top, mode)
        for out, cwd in ((os.path.join(top, 'out'), tmp), (top, tmp), (None, top)):
            args = (['-d', out] if out else []) + ['-o', 'c']
            r = run([UPTI, 'run', '--marker-trace'] + args + ['--', APP, 'run',
                    os.path.join(tmp, 'counter'), '5', '1'], env=e, cwd=cwd)
            db = os.path.join(out or top, 'c.db')
            said = ('upti: the output folder\'s path goes through %s, which anyone may write '
                    'and which is not sticky: another user could replace the outputs; choose '
                    'a folder of yours (or chmod +t it)\n' % top)
            if refused and (r.returncode != 2 or r.stderr != said or r.stdout != '' or
                            os.path.exists(db)):
                fail('output_folder %o %s: exit %d, stdout %r, stderr %r, expected exit 2 and %r'
                     % (mode, args, r.returncode, r.stdout, r.stderr, said))
            if not refused and (r.returncode != 0 or len(marks(db)) != 5):
                fail('output_folder %o %s: exit %d, stderr %r' % (mode, args, r.returncode,
                                                                  r.stderr))
            if os.path.exists(db):
                os.unlink(db)
    # Through a link that sits in such a folder (the link can be swapped), and with a
    # placeholder in the first folder of -o: refused too. A folder upti makes under umask
    # 000 is not writable by others (0775): written.
    top = os.path.join(tmp, 'open-777')
    mine = private_dir(tmp, 'mine')
    os.symlink(mine, os.path.join(top, 'link'))
    said = ('upti: the output folder\'s path goes through %s, which anyone may write and which '
            'is not sticky: another user could replace the outputs; choose a folder of yours '
            '(or chmod +t it)\n' % top)
    for args, cwd in ((['-d', os.path.join(top, 'link')], tmp), (['-o', 'x%pid%/c'], top)):
        r = run([UPTI, 'run', '--marker-trace'] + args + ['--', APP, 'run',
                os.path.join(tmp, 'counter'), '5', '1'], env=e, cwd=cwd)
        if r.returncode != 2 or r.stderr != said or os.listdir(mine):
            fail('output_folder %s: exit %d, stderr %r, expected exit 2 and %r'
                 % (args, r.returncode, r.stderr, said))
    new = os.path.join(mine, 'new', 'sub')
    r = run([UPTI, 'run', '--marker-trace', '-o', os.path.join(new, 'c'), '--', APP, 'run',
             os.path.join(tmp, 'counter'), '5', '1'], env=e, cwd=tmp,
            preexec_fn=lambda: os.umask(0))
    modes = [os.stat(d).st_mode & 0o7777 for d in (os.path.dirname(new), new)]
    if r.returncode != 0 or modes != [0o775, 0o775] or len(marks(os.path.join(new, 'c.db'))) != 5:
        fail('output_folder umask 000: exit %d, folders %s, stderr %r'
             % (r.returncode, [oct(m) for m in modes], r.stderr))
    print('output_folder: refused under a folder anyone may write (also through a link, and '
          'with a placeholder); sticky or group: written; made 0775 under umask 000')


def case_runpath(tmp):
    bad = []
    files = [os.path.join(BUILD, 'bin', f) for f in sorted(os.listdir(os.path.join(BUILD, 'bin')))]
    files += [os.path.join(BUILD, 'lib', f) for f in sorted(os.listdir(os.path.join(BUILD, 'lib')))
              if '.so' in f]
    checked = 0
    for f in files:
        if not os.path.isfile(f) or os.path.islink(f) or open(f, 'rb').read(4) != b'\x7fELF':
            continue
        out = subprocess.run(['readelf', '-d', f], capture_output=True, text=True).stdout
        checked += 1
        for m in re.finditer(r'\((?:RUNPATH|RPATH)\)\s+Library r(?:un)?path: \[(.*)\]', out):
            for entry in m.group(1).split(':'):
                if entry == '' or not (entry.startswith('/') or entry.startswith('$ORIGIN')):
                    bad.append('%s: %r in %r' % (os.path.relpath(f, BUILD), entry, m.group(1)))
                    break
    # Fake libraries in the working folder are not what upti or the traced program load.
    for name in ('libupti.so.0', 'libupti.so.1', 'libsqlite3.so.0', 'libc.so.6'):
        with open(os.path.join(tmp, name), 'wb') as f:
            f.write(b'not a library')
    e = {k: v for k, v in os.environ.items() if not k.startswith(('UPTI_', 'OPENCL_LAYERS'))}
    r = run([UPTI, 'run', '--marker-trace', '-d', tmp, '-o', 'r', '--', APP, 'run',
             os.path.join(tmp, 'counter'), '3', '1'], env=e, cwd=tmp)
    if r.returncode != 0 or len(marks(os.path.join(tmp, 'r.db'))) != 3:
        bad.append('upti run from a folder with fake libraries: exit %d, stderr %r'
                   % (r.returncode, r.stderr))
    if bad:
        fail('runpath: %d files search a relative folder (the working directory):\n  %s'
             % (len(bad), '\n  '.join(bad[:20])))
    print('runpath: %d files, no relative RUNPATH entry; fake libraries in the working '
          'folder are not loaded' % checked)


def main():
    cases = {'runpath': case_runpath, 'output_folder': case_output_folder, 'part_links': case_part_links, 'claims': case_claims, 'shared_folder': case_shared_folder, 'own_folder_writable': case_own_folder_writable,
             'recover_links': case_recover_links, 'output_name': case_output_name,
             'bad_rings': case_bad_rings, 'same_uid': case_same_uid, 'pid_wait': case_pid_wait,
             'many_rings': case_many_rings}
    if CASE not in cases:
        print('unknown case ' + CASE)
        return 2
    return upti_test.in_temp_folder('upti-security-', lambda tmp: cases[CASE](os.path.realpath(tmp)))


if __name__ == '__main__':
    sys.exit(main())
