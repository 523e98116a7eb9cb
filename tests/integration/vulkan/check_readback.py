#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""What a Vulkan program reads back is what it reads without the layer.

  check_readback.py --upti UPTI --workdir DIR [--validation] [--sanitizer NAME] -- VK_READBACK API

Runs vk_readback API (1.0, 1.1 or 1.3; it prints every value it reads of
the instance, the physical device, its device, queue, query pools, fences,
events and semaphores) bare, then under `upti run --sys-trace`
(device times wanted: the layer enables extensions and chains features for
itself) and `upti run --vulkan-trace` (VULKAN_API only: the layer enables
nothing), and fails unless standard output and exit status are the same.
The --sys-trace trace must hold the program's 3 dispatches with device
times, by calibrated timestamps, or by a measured offset on a Vulkan 1.0
instance (whose devices cannot have VK_EXT_calibrated_timestamps); the
--vulkan-trace one no dispatch and no clock metadata (no device set-up).

--validation: the three runs under the Khronos validation layer (below
UPTI's), each with no validation error at all. Exit 77 without it, or in
a sanitizer build (the validation layer is uninstrumented C++).
"""
import argparse
import os
import sqlite3
import subprocess
import sys

from check_validation import VALIDATION, have_validation
from check_vulkan import SKIP, upti_test


def run(cmd, env):
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
    return p.returncode, p.stdout.decode(errors='replace'), p.stderr.decode(errors='replace')


def first_difference(a, b):
    for i, (x, y) in enumerate(zip(a.splitlines(), b.splitlines())):
        if x != y:
            return 'line %d: bare %r, traced %r' % (i + 1, x, y)
    return 'bare %d lines, traced %d' % (len(a.splitlines()), len(b.splitlines()))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--upti', required=True)
    ap.add_argument('--workdir', required=True)
    ap.add_argument('--validation', action='store_true')
    ap.add_argument('--sanitizer', default='')
    ap.add_argument('app', nargs=argparse.REMAINDER)
    a = ap.parse_args()
    argv = [x for x in a.app if x != '--']
    api = argv[1]
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(('UPTI_', 'VK_')) and k not in ('DISPLAY', 'WAYLAND_DISPLAY')}
    env['NODEVICE_SELECT'] = '1'  # Mesa's device-select layer: out of the way
    upti_test.preload_icds(env)
    if a.validation:
        if a.sanitizer:
            print('SKIP: a %s build: the validation layer (uninstrumented C++) reads as leaking' % a.sanitizer)
            sys.exit(SKIP)
        if not have_validation():
            print('SKIP: no %s (Debian package vulkan-validationlayers)' % VALIDATION)
            sys.exit(SKIP)
        env['VK_INSTANCE_LAYERS'] = VALIDATION
    fails = []
    rc0, out0, err0 = run(argv, env)
    if rc0 == SKIP:
        print('SKIP: ' + err0.strip())
        sys.exit(SKIP)
    if rc0 != 0:
        print('FAIL: %s exits %d bare:\n%s' % (' '.join(argv), rc0, (out0 + err0)[-3000:]))
        sys.exit(1)
    runs = {'bare': out0 + err0}
    for option in ('--sys-trace', '--vulkan-trace'):
        name = '%sreadback_%s_%s' % ('validation_' if a.validation else '', api, option.strip('-'))
        outdir = os.path.join(a.workdir, name)
        db = os.path.join(outdir, 'r.db')
        if os.path.exists(db):
            os.remove(db)
        rc, out, err = run([a.upti, 'run', option, '-d', outdir, '-o', 'r', '--'] + argv, env)
        runs[option] = out + err
        if rc != rc0:
            fails.append('%s: exit %d, bare %d: %s' % (option, rc, rc0, err[-2000:]))
            continue
        if out != out0:
            fails.append('%s: standard output differs from the bare run\'s: %s' % (option, first_difference(out0, out)))
        if a.validation or not os.path.exists(db):
            continue
        con = sqlite3.connect(db)
        kernels = con.execute('SELECT count(*), coalesce(sum(start > 0 AND start <= "end"), 0) FROM kernels').fetchone()
        meta = dict(con.execute("SELECT key, value FROM metadata WHERE key LIKE 'vulkan.%'"))
        if option == '--sys-trace':
            method = 'measured_offset' if api == '1.0' else 'calibrated_timestamps'
            if kernels != (3, 3):
                fails.append('%s: %r kernels (count, with device times), expected 3 timed' % (option, kernels))
            if meta.get('vulkan.calibration_method') != method:
                fails.append('%s: clock metadata %r, expected the method %s' % (option, meta, method))
        else:
            if kernels[0] != 0 or meta:
                fails.append('%s: %d kernels and clock metadata %r: the layer set the device up for device times'
                             % (option, kernels[0], meta))
    if a.validation:
        for what, text in runs.items():
            errors = [line for line in text.splitlines() if 'Validation Error' in line]
            if errors:
                fails.append('%s: %d validation errors, the first: %s' % (what, len(errors), errors[0][:1500]))
    if fails:
        print('FAIL: ' + '\nFAIL: '.join(fails))
        sys.exit(1)
    print('PASS vk_readback %s%s: the same %d lines bare, under upti run --sys-trace and --vulkan-trace'
          % (api, ' under the validation layer, no validation error' if a.validation else '',
             len(out0.splitlines())))


if __name__ == '__main__':
    main()
