#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Release order: check_release_order.py BUILD CASE. Exit 0 pass, 1 fail.

tests/apps/ocl_release_order releases OpenCL objects in every legal order
(each parent before or after each child, and a seeded random order with many
objects alive at once). Whatever is traced, the program must exit 0 with the
same output as bare, and the trace must pair every release with its
allocation: per memory type, as many ALLOCATE as FREE records as the program
made objects, each FREE after the ALLOCATE of its handle with the same size,
agent and context; each program and kernel object loaded and unloaded once.

  opencl, args, kernel, memory-copy, marker, memory-alloc, sys
                 `upti run --CASE-trace` (args: --args) on every chain
  random-SEED    `upti run --sys-trace` on the random order of that seed
  layer          the layer without any tool (OPENCL_LAYERS only), every chain
  subscriber     the program as its own subscriber tool (every callback
                 domain), every chain: one MODULE_LOADED and one
                 MODULE_UNLOADED per program
  completed_after_release
                 a kernel that runs after its queue, kernel, program, buffer
                 and context were released: its record (sys-trace) and its
                 COMPLETED callback (subscriber) still come, once, naming its device
"""
import os
import re
import sqlite3
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'common', 'python'))
import upti_test  # noqa: E402

BUILD, CASE = upti_test.build_and_case()
UPTI, APP, SUB_APP, LAYER = upti_test.built(BUILD, 'bin/upti', 'bin/ocl_release_order',
                                            'bin/ocl_release_order_subscriber', 'lib/libupti-opencl.so')

TRACE_CASES = ('opencl', 'args', 'kernel', 'memory-copy', 'marker', 'memory-alloc', 'sys')
ALLOC_TYPES = {'BUFFER': ('buffer',), 'SUB_BUFFER': ('sub_buffer',), 'IMAGE': ('image',),
               'SVM': ('svm', 'svm_enqueued')}


fail, _ = upti_test.failing('FAIL %s:' % CASE)


def run(cmd, extra_env=None):
    e = upti_test.env_without(('UPTI_', 'OPENCL_LAYERS', 'LD_PRELOAD'), extra_env)
    p = subprocess.run(cmd, env=e, capture_output=True, text=True, errors='replace', timeout=600)
    where = '\ncommand: %s\nexit: %d\nstdout: %s\nstderr: %s' % (' '.join(cmd), p.returncode,
                                                                 p.stdout[-3000:], p.stderr[-3000:])
    if p.returncode != 0:
        fail('exit status %d, expected 0%s' % (p.returncode, where))
    if not p.stdout.endswith('ok\n'):
        fail('the program did not finish%s' % where)
    return p.stdout, where


def made(stdout):
    m = re.search(r'^made: (.*)$', stdout, re.M)
    return {k: int(v) for k, v in (kv.split('=') for kv in m.group(1).split())}


def check_allocations(db, counts, where, every_type=True):
    rows = db.execute('SELECT o.string, t.string, a.handle, a.size, a.agent_handle, a.runtime_context, '
                      'a.timestamp FROM memory_allocate a LEFT JOIN string o ON o.id = a.operation_id '
                      'LEFT JOIN string t ON t.id = a.type_id ORDER BY a.timestamp, a.id').fetchall()
    for t, kinds in ALLOC_TYPES.items():
        want = sum(counts[k] for k in kinds)
        if want == 0 and t != 'SVM' and every_type:
            fail('the program made no %s' % t)
        n_alloc = sum(1 for r in rows if r[0] == 'ALLOCATE' and r[1] == t)
        n_free = sum(1 for r in rows if r[0] == 'FREE' and r[1] == t)
        if (n_alloc, n_free) != (want, want):
            fail('%s: %d ALLOCATE and %d FREE records, expected %d of each%s'
                 % (t, n_alloc, n_free, want, where))
    if len(rows) != 2 * sum(sum(counts[k] for k in ks) for ks in ALLOC_TYPES.values()):
        fail('%d allocation records of other types%s' % (len(rows), where))
    live = {}
    for op, t, handle, size, agent, context, _ in rows:
        if op == 'ALLOCATE':
            if handle in live:
                fail('handle %#x allocated twice without a FREE' % handle)
            live[handle] = (t, size, agent, context)
        elif op == 'FREE':
            if handle not in live:
                fail('FREE of handle %#x that is not allocated' % handle)
            a = live.pop(handle)
            if a != (t, size, agent, context):
                fail('FREE of %#x says (type, size, agent, context) %s, its ALLOCATE %s'
                     % (handle, (t, size, agent, context), a))
            if agent == 0 or size == 0:
                fail('FREE of %#x: agent %d, size %d' % (handle, agent, size))
        else:
            fail('operation %r' % op)
    if live:
        fail('%d allocations never freed' % len(live))


def check_code_objects(db, counts, where):
    for table, kind in (('info_code_object', 'program'), ('info_kernel_symbol', 'kernel')):
        n, unloaded = db.execute('SELECT count(*), count(NULLIF(unload, 0)) FROM %s' % table).fetchone()
        if (n, unloaded) != (counts[kind], counts[kind]):
            fail('%s: %d rows, %d unloaded; expected %d of each%s' % (table, n, unloaded, counts[kind], where))


def traced(args, app_args, tmp):
    bare, _ = run([APP] + app_args)
    out, where = run([UPTI, 'run'] + args + ['-d', tmp, '-o', 'trace', '--', APP] + app_args)
    if out != bare:
        fail('output differs from the bare run:\n%s\nbare:\n%s' % (out, bare))
    return sqlite3.connect(os.path.join(tmp, 'trace.db')), made(out), where


def main():
    with tempfile.TemporaryDirectory() as tmp:
        if CASE in TRACE_CASES or CASE.startswith('random-'):
            if CASE.startswith('random-'):
                args, app_args = ['--sys-trace'], ['random', CASE[len('random-'):]]
            else:
                args = ['--args'] if CASE == 'args' else ['--%s-trace' % CASE]
                app_args = ['pairs']
            db, counts, where = traced(args, app_args, tmp)
            if CASE in ('memory-alloc', 'sys') or CASE.startswith('random-'):
                check_allocations(db, counts, where)
            if CASE in ('kernel', 'sys') or CASE.startswith('random-'):
                check_code_objects(db, counts, where)
        elif CASE == 'layer':
            bare, _ = run([APP, 'pairs'])
            out, _ = run([APP, 'pairs'], {'OPENCL_LAYERS': LAYER})
            if out != bare:
                fail('output differs from the bare run:\n%s\nbare:\n%s' % (out, bare))
        elif CASE == 'subscriber':
            out, where = run([SUB_APP, 'pairs'], {'OPENCL_LAYERS': LAYER})
            counts = made(out)
            want = 'seen: loaded=%d unloaded=%d' % (counts['program'], counts['program'])
            if want not in out:
                fail('expected "%s"%s' % (want, where))
        elif CASE == 'completed_after_release':
            db, counts, where = traced(['--sys-trace'], ['completed'], tmp)
            rows = db.execute('SELECT status, start, end FROM kernel_dispatch').fetchall()
            if len(rows) != 1 or rows[0][0] != 0 or not 0 < rows[0][1] <= rows[0][2]:
                fail('kernel records %s, expected one complete record%s' % (rows, where))
            check_allocations(db, counts, where, every_type=False)
            check_code_objects(db, counts, where)
            out, where = run([SUB_APP, 'completed'], {'OPENCL_LAYERS': LAYER})
            if 'kernel status 0\n' not in out or 'completed=1 on_device=1\n' not in out:
                fail('expected the kernel to complete, seen once by the subscriber%s' % where)
        else:
            fail('unknown case')
    print('PASS %s' % CASE)


main()
