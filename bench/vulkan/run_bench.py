#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Overhead of the Vulkan layer on lavapipe, bare and traced in one command:

  run_bench.py BUILD_DIR [N] [REPS] [ROUNDS]

Runs bench_vulkan bare, with the layer and no tool, with a tool that has
nothing configured, with VULKAN_API buffer tracing and with VULKAN_API +
KERNEL_DISPATCH, and prints the cost each adds:
  - per vkCmdDispatch recorded (fastest of REPS repetitions of N);
  - per submission of a command buffer holding one dispatch, waited for
    with its fence (N/100 x REPS samples): the host time of its
    vkQueueSubmit plus, once the device has finished it, its
    vkWaitForFences (where the layer reads the submission's device times
    and emits its records) and vkResetFences; 10th percentile and median;
  - per vkQueueSubmit with up to 64 submissions in flight (stream), median;
  - per vkCmdBindPipeline + vkCmdDispatch pair recorded (bind_dispatch).
The modes run one after the other ROUNDS times (default 5); each keeps its
fastest figures.

lavapipe executes command buffers on threads of its own, on the same cores
as the program: a GPU's work does not take the host's cores, lavapipe's
does. So the submissions are waited for after a pause (bench_vulkan.c),
and lavapipe runs with LP_NUM_THREADS=0 (its device work on its queue
thread, not on rasterizer threads woken on both cores, which preempted the
program's thread inside its calls: medians of the traced submission
ranged 10.7 to 19.5 us against 7.9 to 9.5 us with it, bare 6.1 to 7.5 us
against 4.5 to 7.0 us). The bare program bracketing its own dispatch with
two timestamps (submit_ts) shows what the device's part of timestamps
costs the host calls, printed apart."""
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'tests', 'common', 'python'))
import upti_test  # noqa: E402

B = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else 'build')
N = sys.argv[2] if len(sys.argv) > 2 else '200000'
REPS = sys.argv[3] if len(sys.argv) > 3 else '5'
ROUNDS = int(sys.argv[4]) if len(sys.argv) > 4 else 5
SUBMITS = str(max(1, int(N) // 100))  # per repetition
BIN = os.path.join(B, 'bin', 'bench_vulkan')
# Under LeakSanitizer the Vulkan driver is preloaded (see upti_test.preload_icds).
base = upti_test.preload_icds(upti_test.env_without(('UPTI_', 'VK_')))
base['NODEVICE_SELECT'] = '1'
base['LP_NUM_THREADS'] = '0'  # lavapipe's device work on its queue thread only (above)
layer = dict(base, VK_ADD_LAYER_PATH=os.path.join(B, 'lib'), VK_INSTANCE_LAYERS='VK_LAYER_UPTI_trace')
tool = os.path.join(B, 'lib', 'libbench_vulkan_tool.so')
MODES = [
    ('bare', base),
    ('layer, no tool', layer),
    ('layer, tool, nothing on', dict(layer, UPTI_TOOL_LIBRARIES=tool, UPTI_VK_BENCH_MODE='none')),
    ('VULKAN_API buffer tracing', dict(layer, UPTI_TOOL_LIBRARIES=tool, UPTI_VK_BENCH_MODE='api')),
    ('VULKAN_API + KERNEL_DISPATCH', dict(layer, UPTI_TOOL_LIBRARIES=tool, UPTI_VK_BENCH_MODE='kernel')),
]


def measure(what, count, env):
    p = subprocess.run([BIN, what, count, REPS], env=env, capture_output=True, text=True, timeout=600)
    if p.returncode == 77:
        print('bench_vulkan: no Vulkan device; skipped')
        sys.exit(77)
    if p.returncode != 0:
        print('bench: bench_vulkan %s failed (%d): %s' % (what, p.returncode, p.stderr.strip()))
        sys.exit(1)
    return [float(x) for x in p.stdout.split()[1:]]


def keep_fastest(old, new):
    return new if old is None else [min(a, b) for a, b in zip(old, new)]


results = {}
device_ts = None
for _ in range(max(1, ROUNDS)):
    device_ts = keep_fastest(device_ts, measure('submit_ts', SUBMITS, base))
    for name, env in MODES:
        got = (measure('dispatch', N, env) + measure('submit', SUBMITS, env) + measure('stream', SUBMITS, env) +
               measure('bind_dispatch', N, env))
        results[name] = keep_fastest(results.get(name), got)
# Per mode: dispatch; submission p10, median; its vkQueueSubmit call p10, median; stream p10, median;
# bind + dispatch.
bare = results['bare']
print('%-30s %16s %26s %26s %16s' % ('mode', 'vkCmdDispatch ns', 'submission ns p10 / median',
                                      'vkQueueSubmit p10 / median', 'stream median'))
for name, _ in MODES:
    r = results[name]
    print('%-30s %7.1f (%+6.1f) %7.0f (%+5.0f) / %6.0f (%+5.0f) %6.0f (%+5.0f) / %6.0f (%+5.0f) %6.0f (%+5.0f)' % (
        name, r[0], r[0] - bare[0], r[1], r[1] - bare[1], r[2], r[2] - bare[2], r[3], r[3] - bare[3],
        r[4], r[4] - bare[4], r[6], r[6] - bare[6]))
k = results['VULKAN_API + KERNEL_DISPATCH']
print('added cost per vkCmdDispatch recorded (API + device times): %.1f ns, %.2fx bare (target <= 100 ns)'
      % (k[0] - bare[0], k[0] / bare[0]))
print('added cost per vkQueueSubmit (API + device times): %.0f ns at the 10th percentile, %.2fx bare,'
      ' %.0f ns median (target <= 2000 ns)' % (k[3] - bare[3], k[3] / bare[3], k[4] - bare[4]))
print('  with 64 submissions in flight (the finished ones read in vkQueueSubmit): %.0f ns median'
      % (k[6] - bare[6]))
print('added cost per submission with its reading (vkQueueSubmit, then vkWaitForFences, where the layer'
      ' reads the device times and emits the records, and vkResetFences): %.0f ns at the 10th percentile,'
      ' %.2fx bare, %.0f ns median, %.2fx' % (k[1] - bare[1], k[1] / bare[1], k[2] - bare[2], k[2] / bare[2]))
print('  for comparison, the bare program writing two timestamps itself: %+.0f ns p10, %+.0f ns median'
      % (device_ts[0] - bare[1], device_ts[1] - bare[2]))
print('added cost per vkCmdBindPipeline + vkCmdDispatch pair recorded (API records of both + device times):'
      ' %.1f ns' % (k[7] - bare[7]))
print('idle layer cost per vkCmdDispatch (layer, no tool): %.1f ns (target <= 3)'
      % (results['layer, no tool'][0] - bare[0]))
