#!/usr/bin/env python3
"""Overhead of the Vulkan layer on lavapipe, bare and traced in one command:

  run_bench.py BUILD_DIR [N] [REPS] [ROUNDS]

Runs bench_vulkan (fastest of REPS repetitions of N calls) bare, with the
layer and no tool, with a tool that has nothing configured, with VULKAN_API
buffer tracing and with VULKAN_API + KERNEL_DISPATCH, and prints the cost
each adds per vkCmdDispatch recorded and per vkQueueSubmit. The modes run
one after the other ROUNDS times (default 5) and each keeps its fastest: on
a shared VM one process's calls can run 50% slower than the next one's (bare
dispatches measured 30.8 and 48.7 ns in two runs a minute apart), so a
single round can show a traced mode faster than bare.

lavapipe (Mesa 22.3) executes a command buffer on a queue thread of its own,
beside the program's: on a busy machine that thread's work, more with the
layer's two timestamps, gets in the submit's way. The bare program
bracketing its own dispatch with two timestamps (submit_ts) measures that
device cost, printed apart, and the layer's own host cost per submit is what
is left."""
import os
import subprocess
import sys

B = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else 'build')
N = sys.argv[2] if len(sys.argv) > 2 else '200000'
REPS = sys.argv[3] if len(sys.argv) > 3 else '5'
ROUNDS = int(sys.argv[4]) if len(sys.argv) > 4 else 5
SUBMITS = str(max(1, int(N) // 100))
BIN = os.path.join(B, 'bin', 'bench_vulkan')
base = {k: v for k, v in os.environ.items() if not k.startswith(('UPTI_', 'VK_'))}
if 'detect_leaks=1' in os.environ.get('ASAN_OPTIONS', ''):
    # Alike on purpose (duplicates): tests/integration/vulkan/check_vulkan.py does the same.
    # The loader unloads the driver at vkDestroyInstance; a block only the driver's
    # globals point to then looks leaked. Preloaded, the driver stays mapped.
    import glob
    import json
    icds = []
    for manifest in sorted(glob.glob('/usr/share/vulkan/icd.d/*.json')):
        try:
            lib = json.load(open(manifest))['ICD']['library_path']
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if os.path.isabs(lib) and os.path.exists(lib):
            icds.append(lib)
    base['LD_PRELOAD'] = ' '.join(filter(None, [os.environ.get('LD_PRELOAD')] + icds))
base['NODEVICE_SELECT'] = '1'
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
    return float(p.stdout.split()[1])


results = {}
device_ts = float('inf')
for _ in range(max(1, ROUNDS)):
    device_ts = min(device_ts, measure('submit_ts', SUBMITS, base))
    for name, env in MODES:
        d, s = measure('dispatch', N, env), measure('submit', SUBMITS, env)
        old = results.get(name, (d, s))
        results[name] = (min(d, old[0]), min(s, old[1]))
bare = results['bare']
print('%-32s %22s %22s' % ('mode', 'vkCmdDispatch ns (+)', 'vkQueueSubmit ns (+)'))
for name, _ in MODES:
    d, s = results[name]
    print('%-32s %12.1f (%+7.1f) %12.1f (%+7.1f)' % (name, d, d - bare[0], s, s - bare[1]))
print('added cost per vkCmdDispatch recorded (API + device times): %.1f ns (target <= 100)'
      % (results['VULKAN_API + KERNEL_DISPATCH'][0] - bare[0]))
added = results['VULKAN_API + KERNEL_DISPATCH'][1] - bare[1]
print('added cost per vkQueueSubmit (API + device times): %.1f ns (target <= 2000)' % added)
print('  of which the device executing two timestamps (bare, the program writing them): %.1f ns;'
      ' the layer on the host: %.1f ns' % (device_ts - bare[1], added - (device_ts - bare[1])))
print('idle layer cost per vkCmdDispatch (layer, no tool): %.1f ns (target <= 3)'
      % (results['layer, no tool'][0] - bare[0]))
