#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Runs vk_inflight (many submissions in flight on one queue) without and with
UPTI's Vulkan layer and asserts on what the test tool (vk_tool.c) recorded.
Exit 0: pass, 1: fail, 77: skipped (no Vulkan device).

vk_inflight (tests/apps/vk_inflight.c) allocates 504 command buffers, frees a
third of them, allocates half as many again, records each of the LIVE (420)
then allocated, live[j] with one vkCmdDispatch of (j + 1, 1, 1) groups, submits
each once (the pass: a command buffer the layer's map lost after a removal
gives no record), then submits a ring of 80 of them (ring[i] = live[5 * i]) 400
times in 5 rounds, round r starting at ring[60 * r % 80]; a gate (no dispatch)
after position 39 of each round holds the rest on the device for a while; in
even rounds the program waits for the fence of a submission in the middle of
the unread ones (positions 51, 47, 56 of rounds 0, 2, 4), in odd rounds the
next round's first submit resubmits a command buffer whose last execution is
unread behind the gate (the layer waits for it). Last (but with timeline_off),
behind a gate, live[0] with a fence, live[1] with another, live[2] signalling
the program's timeline semaphore; the program waits for the semaphore (the
layer does not follow that) and resets the second fence: the layer reads
live[1]'s submission then, after live[0]'s.

Cases
  inflight              timeline semaphores on: the layer signals its own
                        timeline semaphore in each submit without a fence
  inflight_pairs        the same with UPTI_VK_TIMESTAMPS=pairs
  inflight_timeline_off the program turns timeline semaphores off: the layer
                        submits a fence of its own after each submit without one

Each asserts: the program's stdout and status as without the layer, no upti:
line; exact API record counts (submits, recordings, fences, waits, events);
exactly one KERNEL_DISPATCH record per submitted dispatch (823; 820 with
timeline_off), each
with device times (0 < start <= end), the group count of the command buffer
its submission ran, the correlation id of that command buffer's vkCmdDispatch,
its queued time inside that call, its submit time inside its vkQueueSubmit
(one record per submit of a dispatch, none for the gates); the records emitted in
submission order, their device times in that order on the queue (each starts
at or after the end of the one submitted before); the three waited
submissions (and all before them) ended before their vkWaitForFences returned.
"""
import argparse
import collections
import os

from check_vulkan import KERNEL_NAME, LAYER, bare_env, expect, parse, run, run_bare

LIVE = 420
RING = 80
ROUNDS = 5
GATE_POSITION = 40
FENCE_EVERY = 13
WAIT_FROM, WAIT_AFTER = 44, 72


def schedule(semwait):
    """vk_inflight's vkQueueSubmit calls in order: the submit's number s (0..819, 822 with the last
    phase, semwait) and the live command buffer it runs, or None for a gate; and the submits whose
    fence the program waits for."""
    calls = [(j, j) for j in range(LIVE)]  # the pass
    waited = []
    for r in range(ROUNDS):
        wait_for = None
        for pos in range(RING):
            if pos == GATE_POSITION:
                calls.append(None)
            t = r * RING + pos  # the fences go by the rounds' numbering
            if (r % 2 == 0 and t % FENCE_EVERY == FENCE_EVERY - 1 and WAIT_FROM <= pos < WAIT_AFTER
                    and wait_for is None):
                wait_for = LIVE + t
            calls.append((LIVE + t, 5 * ((60 * r + pos) % RING)))
        waited.append(wait_for)
    if semwait:  # behind a gate, live[0], live[1] (its fence reset after a semaphore wait), live[2]
        calls += [None] + [(LIVE + ROUNDS * RING + j, j) for j in range(3)]
    return calls, [w for w in waited if w is not None]


def check(recs, semwait):
    expect(any(r['_t'] == 'FINALIZE' for r in recs), 'tool finalize not reached')
    expect(not any(r['_t'] in ('DROPS', 'OTHER') for r in recs), 'records dropped or of another kind')
    api = [r for r in recs if r['_t'] == 'API']
    counts = collections.Counter(r['op'] for r in api)
    calls, waited = schedule(semwait)
    last = 1 if semwait else 0  # the last phase: a gate, 2 fences (one reset), a semaphore wait
    want = {'vkQueueSubmit': len(calls), 'vkCmdDispatch': LIVE, 'vkBeginCommandBuffer': LIVE + 1,
            'vkAllocateCommandBuffers': 3, 'vkFreeCommandBuffers': 504 // 3 + 2, 'vkCreateFence': 30 + 2 * last,
            'vkDestroyFence': 30 + 2 * last, 'vkWaitForFences': len(waited), 'vkResetFences': len(waited) + last,
            'vkQueueWaitIdle': 2 + last, 'vkSetEvent': ROUNDS + last, 'vkResetEvent': ROUNDS - 1 + last,
            'vkWaitSemaphoresKHR': last, 'vkCreateSemaphore': last}
    for name, n in want.items():
        expect(counts[name] == n, f'{name}: {counts[name]} API records, expected {n}')
    expect(waited == [LIVE + 51, LIVE + 207, LIVE + 376], f'waited submits {waited}')
    # The vkCmdDispatch calls, in recording order: live[j] dispatches (j + 1, 1, 1).
    dispatch_cbs = [r for r in recs if r['_t'] == 'CB' and r['op'] == 'vkCmdDispatch' and r['phase'] == 'ENTER']
    expect([r.get('groups') for r in dispatch_cbs] == [f'{j + 1},1,1' for j in range(LIVE)],
           'vkCmdDispatch group counts: %s' % [r.get('groups') for r in dispatch_cbs])
    by_corr = {r['corr']: r for r in api}
    dispatch = [by_corr.get(r['corr']) for r in dispatch_cbs]
    expect(all(d is not None and d['op'] == 'vkCmdDispatch' for d in dispatch),
           'vkCmdDispatch callbacks without their API record')
    main_tid = dispatch[0]['tid']
    submits = sorted((r for r in api if r['op'] == 'vkQueueSubmit'), key=lambda r: int(r['start']))
    expect(all(r['tid'] == main_tid for r in submits), 'a vkQueueSubmit on another thread')
    total = LIVE + RING * ROUNDS + 3 * last
    kernels = [r for r in recs if r['_t'] == 'KERNEL']
    expect(len(kernels) == total, f'{len(kernels)} KERNEL_DISPATCH records, expected {total}')
    seen = {}  # submit number -> its record
    order = []
    for k in kernels:
        expect(k['op'] == 'VK_DISPATCH' and k['name'] == KERNEL_NAME, 'kernel record: ' + k['line'])
        expect(0 < int(k['start']) <= int(k['end']), 'no device times or start > end: ' + k['line'])
        around = [i for i, x in enumerate(submits) if int(x['start']) <= int(k['submit']) <= int(x['end'])]
        expect(len(around) == 1, f'{len(around)} vkQueueSubmit calls around the submit time of ' + k['line'])
        call = calls[around[0]]
        expect(call is not None, 'a record of a gate submission (no dispatch): ' + k['line'])
        s, j = call
        expect(s not in seen, f'two records of submit {s}:\n{seen.get(s, {}).get("line")}\n{k["line"]}')
        seen[s] = k
        order.append(s)
        expect(k['groups'] == f'{j + 1},1,1', f'submit {s} ran live[{j}] ({j + 1} groups): ' + k['line'])
        expect(k['corr'] == dispatch[j]['corr'], f'submit {s}: not correlated with live[{j}]\'s vkCmdDispatch '
               f'(corr {dispatch[j]["corr"]}): ' + k['line'])
        expect(int(dispatch[j]['start']) <= int(k['queued']) <= int(dispatch[j]['end']),
               'queued time outside its vkCmdDispatch: ' + k['line'])
        expect(k['tid'] == main_tid and k['queue'] == kernels[0]['queue'] and k['agent'] != '0',
               'thread, queue or agent: ' + k['line'])
    expect(order == sorted(order), 'records not emitted in submission order: %s' %
           [(a, b) for a, b in zip(order, order[1:]) if a > b][:10])
    prev = None
    for s in range(total):
        k = seen[s]
        if prev is not None:
            expect(int(k['start']) >= int(prev['end']), f'submit {s} starts before submit {s - 1} ended:\n'
                   f'{prev["line"]}\n{k["line"]}')
        prev = k
    waits = sorted((r for r in api if r['op'] == 'vkWaitForFences'), key=lambda r: int(r['start']))
    for s, w in zip(waited, waits):
        expect(int(seen[s]['end']) <= int(w['end']), f'waited submit {s} ended after its wait: ' + seen[s]['line'])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--layer-dir', required=True)
    ap.add_argument('--tool', required=True)
    ap.add_argument('--workdir', required=True)
    ap.add_argument('--case', required=True, choices=('inflight', 'inflight_pairs', 'inflight_timeline_off'))
    ap.add_argument('app')
    a = ap.parse_args()
    base = bare_env()
    argv = [a.app] + (['timeline_off'] if a.case == 'inflight_timeline_off' else [])
    rc0, out0, err0 = run_bare(argv, base, 'vk_inflight')
    out = os.path.join(a.workdir, a.case + '.records')
    if os.path.exists(out):
        os.remove(out)
    env = dict(base, VK_ADD_LAYER_PATH=a.layer_dir, VK_INSTANCE_LAYERS=LAYER, UPTI_TOOL_LIBRARIES=a.tool,
               UPTI_VK_TEST_OUT=out)
    if a.case == 'inflight_pairs':
        env['UPTI_VK_TIMESTAMPS'] = 'pairs'
    rc1, out1, err1 = run(argv, env)
    expect(rc1 == rc0, f'exit status {rc1} with the layer, {rc0} without; stderr: {err1}')
    expect(out1 == out0, 'stdout differs with the layer:\n%s\n---\n%s' % (out0.decode(), out1.decode()))
    expect('upti:' not in err1, 'UPTI messages: ' + err1)
    check(parse(out), semwait=a.case != 'inflight_timeline_off')
    print('PASS ' + a.case)


if __name__ == '__main__':
    main()
