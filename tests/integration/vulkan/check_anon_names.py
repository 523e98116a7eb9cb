#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Runs vk_anon (tests/apps/vk_anon.c: four dispatches of pipelines whose
shaders it stripped of their source names at run time) bare, then twice under
`upti run --kernel-trace`, and asserts on the kernels table of each run: the
two stripped modules give main@HASH names (8 hex digits) that differ from
each other and are the same in both runs; OpSource still names the third
pipeline vk_vadd.comp:main, the object name still names the fourth.
Exit 0: pass, 1: fail, 77: skipped (no Vulkan device).
"""
import os
import re
import sqlite3
import sys

from check_vulkan import SKIP, fail, run, upti_test


def main():
    a = upti_test.driver_options('upti', 'workdir')
    # Mesa's device-select layer off, as in check_vulkan.py.
    env = upti_test.env_without(('UPTI_', 'VK_'))
    env['NODEVICE_SELECT'] = '1'
    upti_test.preload_icds(env)
    rc0, out0, err0 = run([a.app], env)
    if rc0 == SKIP:
        print('SKIP: ' + err0)
        sys.exit(SKIP)
    if rc0 != 0:
        fail(f'vk_anon fails without UPTI ({rc0}): {err0}')
    outdir = os.path.join(a.workdir, 'anon_names')
    runs = []
    for i in range(2):
        db = upti_test.fresh_db(outdir, f'anon{i}')
        rc, out, err = run([a.upti, 'run', '--kernel-trace', '--force-overwrite', '-d', outdir, '-o', f'anon{i}',
                            '--', a.app], env)
        if rc != 0 or out != out0:
            fail(f'upti run {i}: status {rc}, stdout {out!r} (bare {out0!r}), stderr {err}')
        con = sqlite3.connect(db)
        names = [r[0] for r in con.execute('SELECT name FROM kernels ORDER BY correlation_id')]
        con.close()
        runs.append(names)
    names = runs[0]
    if len(names) != 4:
        fail(f'{len(names)} kernels, expected 4: {names}')
    for n in names[:2]:
        if not re.fullmatch(r'main@[0-9a-f]{8}', n):
            fail(f'a stripped module\'s pipeline is named {n!r}, expected main@ and 8 hex digits: {names}')
    if names[0] == names[1]:
        fail(f'two different modules give one name: {names}')
    if names[2:] != ['vk_vadd.comp:main', 'anon_named']:
        fail(f'OpSource and object names no longer win: {names}')
    if runs[1] != names:
        fail(f'names change between runs: {names} then {runs[1]}')
    print('PASS anon_names: %s' % names)


if __name__ == '__main__':
    main()
