#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Info values: check_info_values.py BUILD CASE. Exit 0 pass, 1 fail.

tests/apps/ocl_info creates every kind of OpenCL object in each way (NULL,
empty and full property lists; the 1.x and 2.x+ entry points; events of
commands with and without the program's own event, user events) and prints
every value clGet*Info gives back for it (size asked first, value, a buffer
one byte short). Whatever UPTI does to the objects it creates, wraps or
changes, the program must read the same values as without UPTI: the output
of each CASE must equal the bare run's, line for line, and the exit status 0.

  layer      OPENCL_LAYERS only (no tool)
  tool       OPENCL_LAYERS + UPTI_TOOL_LIBRARIES=libupti-trace.so (all kinds)
  sys        upti run --sys-trace
  args       upti run --sys-trace --args
"""
import difflib
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'common', 'python'))
import upti_test  # noqa: E402

BUILD, CASE = upti_test.build_and_case()
UPTI, APP, LAYER, TOOL = upti_test.built(BUILD, 'bin/upti', 'bin/ocl_info', 'lib/libupti-opencl.so',
                                         'lib/libupti-trace.so')
fail, _ = upti_test.failing('FAIL %s:' % CASE)


def run(cmd, extra_env, cwd):
    e = upti_test.env_without(('UPTI_', 'OPENCL_LAYERS', 'LD_PRELOAD'), extra_env)
    p = subprocess.run(cmd, env=e, cwd=cwd, capture_output=True, text=True, errors='replace',
                       timeout=600)
    if p.returncode != 0:
        fail('%s exited %d\nstdout: %s\nstderr: %s' % (' '.join(cmd), p.returncode,
                                                       p.stdout[-3000:], p.stderr[-3000:]))
    said = [l for l in upti_test.said(p.stderr) if l.startswith('upti:') and
            not l.startswith('upti: wrote ')]
    if said:
        fail('upti printed: %s' % '\n'.join(said))
    return p.stdout


def main():
    with tempfile.TemporaryDirectory(prefix='upti-info-') as work:
        bare = run([APP], {}, work)
        if CASE == 'layer':
            traced = run([APP], {'OPENCL_LAYERS': LAYER}, work)
        elif CASE == 'tool':
            traced = run([APP], {'OPENCL_LAYERS': LAYER, 'UPTI_TOOL_LIBRARIES': TOOL,
                                 'UPTI_TRACE_KINDS': 'all',
                                 'UPTI_TRACE_OUTPUT': os.path.join(work, 'tool')}, work)
        elif CASE in ('sys', 'args'):
            extra = ['--args'] if CASE == 'args' else []
            traced = run([UPTI, 'run', '--sys-trace'] + extra + ['-d', work, '-o', 'run', '--', APP],
                         {}, work)
            if not os.path.exists(os.path.join(work, 'run.db')):
                fail('upti run wrote no run.db')
        else:
            fail('unknown case')
    lines = bare.splitlines()
    if len(lines) < 500 or lines[-1] != 'done':
        fail('the bare run printed %d lines, last %r: expected 500 or more, ending "done"'
             % (len(lines), lines[-1] if lines else ''))
    diff = list(difflib.unified_diff(lines, traced.splitlines(), 'bare', CASE, lineterm='', n=0))
    if diff:
        fail('values read back differ from bare (%d lines):\n%s'
             % (sum(1 for d in diff if d[:1] in '+-') - 2, '\n'.join(diff[:60])))
    print('PASS %s: %d values read back as bare' % (CASE, len(lines) - 1))


if __name__ == '__main__':
    main()
