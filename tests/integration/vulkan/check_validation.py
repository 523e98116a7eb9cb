#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The Vulkan layer's own commands under the Khronos validation layer.

  check_validation.py --layer-dir DIR --tool TOOL --workdir DIR [--sanitizer NAME] -- APP [ARGS...]

Runs APP with VK_LAYER_UPTI_trace above VK_LAYER_KHRONOS_validation (which
then sees every command the layer records), synchronization validation on,
and fails on a validation error that names a query pool or a timestamp:
the test programs use no queries, so those are the layer's (its timestamps,
query resets, vkCmdCopyQueryPoolResults into its results buffers and the
barriers around them). The programs' own hazards (they copy into one buffer
without barriers) are theirs and not counted. Exit 77 without the
validation layer (Debian: vulkan-validationlayers).
"""
import argparse
import glob
import json
import os
import subprocess
import sys

SKIP = 77
VALIDATION = 'VK_LAYER_KHRONOS_validation'


def have_validation():
    for manifest in glob.glob('/usr/share/vulkan/explicit_layer.d/*.json'):
        try:
            if json.load(open(manifest))['layer']['name'] == VALIDATION:
                return True
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return False


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--layer-dir', required=True)
    ap.add_argument('--tool', required=True)
    ap.add_argument('--workdir', required=True)
    ap.add_argument('--sanitizer', default='')
    ap.add_argument('app', nargs=argparse.REMAINDER)
    a = ap.parse_args()
    argv = [x for x in a.app if x != '--']
    if a.sanitizer:
        print('SKIP: a %s build: the validation layer (uninstrumented C++) reads as leaking to '
              'LeakSanitizer; the plain build runs this test' % a.sanitizer)
        sys.exit(SKIP)
    if not have_validation():
        print('SKIP: no %s (Debian package vulkan-validationlayers)' % VALIDATION)
        sys.exit(SKIP)
    env = {k: v for k, v in os.environ.items() if not k.startswith(('UPTI_', 'VK_'))}
    env.update(NODEVICE_SELECT='1', VK_ADD_LAYER_PATH=a.layer_dir,
               VK_INSTANCE_LAYERS='VK_LAYER_UPTI_trace:' + VALIDATION,
               VK_LAYER_ENABLES='VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT',
               UPTI_TOOL_LIBRARIES=a.tool,
               UPTI_VK_TEST_OUT=os.path.join(a.workdir, 'validation.records'))
    p = subprocess.run(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=300)
    out = p.stdout.decode(errors='replace')
    if p.returncode != 0:
        print('FAIL: %s exited %d:\n%s' % (' '.join(argv), p.returncode, out[-4000:]))
        sys.exit(1)
    errors = [line for line in out.splitlines() if 'Validation Error' in line]
    ours = [line for line in errors if 'QueryPool' in line or 'Timestamp' in line]
    if ours:
        print('FAIL: %d validation errors of the layer\'s commands, the first:\n%s' % (len(ours), ours[0][:2000]))
        sys.exit(1)
    print('PASS %s: no validation error of the layer\'s commands (%d of the program\'s own)'
          % (' '.join(os.path.basename(x) for x in argv), len(errors)))


if __name__ == '__main__':
    main()
