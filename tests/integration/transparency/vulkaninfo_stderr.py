#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""vulkaninfo (Debian's vulkan-tools), a Vulkan program we did not write, under `upti run`:
the same exit status and the same standard error as without it (but upti's own "upti:"
lines), with XDG_RUNTIME_DIR unset, where Mesa's device selection layer prints a line at each
vkEnumeratePhysicalDevices: the layer enumerates nothing of its own (it did at
vkCreateInstance: two lines more). Its standard output differs by design (the list of layers
has VK_LAYER_UPTI_trace). The trace has lavapipe as an agent.

  vulkaninfo_stderr.py UPTI WORKDIR      exit 0 pass, 1 fail, 77 skipped
"""
import os
import shutil
import sqlite3
import subprocess
import sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'common', 'python'))
import upti_test  # noqa: E402

UPTI, WORK = sys.argv[1], sys.argv[2]
if shutil.which('vulkaninfo') is None:
    print('SKIP: vulkaninfo not installed (Debian: vulkan-tools)')
    sys.exit(77)
if os.environ.get('UPTI_SANITIZER_PRELOAD'):
    print('SKIP: a sanitizer build: vulkaninfo is not instrumented (the plain build runs this)')
    sys.exit(77)
env = {k: v for k, v in os.environ.items()
       if not k.startswith(('UPTI_', 'VK_')) and k not in ('XDG_RUNTIME_DIR', 'DISPLAY',
                                                          'WAYLAND_DISPLAY', 'LD_PRELOAD')}
cmd = ['vulkaninfo', '--summary']
bare = subprocess.run(cmd, env=env, capture_output=True, text=True, errors='replace', timeout=120)
if bare.returncode != 0 or 'llvmpipe' not in bare.stdout:
    print('SKIP: vulkaninfo finds no lavapipe here (exit %d)' % bare.returncode)
    sys.exit(77)
out = os.path.join(WORK, 'vulkaninfo')
shutil.rmtree(out, ignore_errors=True)
traced = subprocess.run([UPTI, 'run', '--sys-trace', '-d', out, '-o', 'v', '--'] + cmd, env=env,
                        capture_output=True, text=True, errors='replace', timeout=120)
fail = []
if traced.returncode != bare.returncode:
    fail.append('exit %d traced, %d bare' % (traced.returncode, bare.returncode))
ours = [l for l in upti_test.said(traced.stderr) if l.startswith('upti: ')]
theirs = [l for l in traced.stderr.splitlines() if not l.startswith('upti: ')]
if theirs != bare.stderr.splitlines():
    fail.append('standard error differs: %d lines traced (but upti\'s), %d bare:\n%s\n---\n%s'
                % (len(theirs), len(bare.stderr.splitlines()), '\n'.join(theirs[:20]),
                   bare.stderr[:2000]))
if ours != ['upti: wrote %s' % os.path.join(out, 'v.db')]:
    fail.append('upti said %r' % ours)
else:
    db = sqlite3.connect(os.path.join(out, 'v.db'))
    agents = db.execute("SELECT count(*) FROM info_agent WHERE name LIKE 'llvmpipe%'").fetchone()[0]
    if agents != 1:
        fail.append('%d lavapipe agents in the trace, expected 1' % agents)
if fail:
    print('FAIL: ' + '\nFAIL: '.join(fail))
    sys.exit(1)
print('PASS: vulkaninfo --summary: same exit status and standard error (%d lines) under upti run'
      % len(theirs))
