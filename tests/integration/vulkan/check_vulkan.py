#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Runs vk_compute without and with UPTI's Vulkan layer and asserts on what
the test tool recorded (vk_tool.c writes one line per record or callback),
or on the database `upti run` wrote.
Exit 0: pass, 1: fail, 77: skipped (no Vulkan device).

Cases
  api         vk_compute 3: exact counts of VULKAN_API records per command,
              names, ENTER/EXIT pairing and order, unique correlation ids,
              the agent of lavapipe; one KERNEL_DISPATCH record per
              execution with device times between its submit and the end
              of the fence wait that follows it; MEMORY_COPY records of the
              barrier and the buffer copy (bytes, direction), after it;
              MEMORY_ALLOCATION records of vkAllocateMemory/vkFreeMemory
  submit_100  vk_compute 100: 100 vkQueueSubmit records, 1 vkCmdDispatch,
              100 KERNEL_DISPATCH records
  api_only    KERNEL_DISPATCH not asked for: no KERNEL record
  submit2     vk_compute 3 submit2: the same through vkQueueSubmit2
  secondary   vk_compute 3 secondary: the dispatch, barrier and copy are in a
              secondary command buffer the primary executes: the same
              records (one per execution, device times, correlation with the
              vkCmd* recorded into the secondary)
  secondary_twice
              vk_compute 3 secondary_twice: the primary executes the
              secondary twice: two records per operation per submission, the
              first untimed (its queries are overwritten by the second), one
              upti: line saying so
  many        vk_compute 3 many: one command buffer of 1000 dispatches, 1100
              barriers and 100 copies (2200 operations, 9 of the layer's
              query pools) submitted 3 times, recorded again and submitted
              once, then freed, and a new one (the same handle on lavapipe,
              begun by another thread than the one that records it: the
              layer's per-thread state of the freed one must not be used)
              recorded and submitted once:
              5000 KERNEL_DISPATCH and 6000 MEMORY_COPY records, each with
              device times, start <= end; per execution the records in
              recording order on the queue (each starts at or after the end
              of the one before: lavapipe runs a queue's commands one after
              the other), executions in submit order
  secondary_twice_many
              vk_compute 3 secondary_twice many: a secondary holding those
              2200 operations, executed twice by the primary: per submission
              the first execution's records untimed, the second's timed and in
              recording order, one upti: line
  many_read   the same with UPTI_VK_QUERIES=read: the layer reads its
              queries with vkGetQueryPoolResults (as on a GPU), not from the
              buffers its command buffers copy them into
  many_host   the same with UPTI_VK_QUERIES=host: the layer resets its
              queries from the host at each submission (as for a queue
              family without graphics or compute)
  many_pairs  the same with UPTI_VK_TIMESTAMPS=pairs: every operation writes
              its own start and end timestamps, as on a GPU (in many and the
              others above, on lavapipe, consecutive operations share one:
              each one's start is the end of the one before, exactly, but
              where the layer starts one of its runs of 128 queries)
  many_copies_only
              vk_compute 3 many, MEMORY_COPY wanted but not KERNEL_DISPATCH:
              the dispatches are recorded untimed between the timed barriers
              and copies, so the operation after each one writes its own
              start: it starts after the end of the one before (the
              dispatch ran between them), never at it; the copy that follows
              its barrier with nothing between shares its start
  many_copies_handoff
              the same, each dispatch recorded by a thread of its own (the
              program creates and joins it): work another thread recorded
              between two operations is no more shared across
  many_simultaneous
              the same recorded with SIMULTANEOUS_USE (the layer's query
              resets are recorded into the command buffer either way)
  free_early  vk_compute 3 free_early: after the 3 submits, a command buffer
              submitted in the first of two batches, without a fence, is freed
              once that batch is done while the second waits for the host (the
              layer cannot read the submission then: it waits 5 s for it): its
              3 records come without device times, one upti: line says why;
              the 3 submits' records are timed
  resubmit_early
              the same, the command buffer submitted again (with a fence)
              instead of freed: the first execution's 3 records come without
              device times (its queries are overwritten), the second's timed,
              one upti: line
  labels      vk_compute 3 labels: VK_EXT_debug_utils names the pipeline
              (the kernel records' name) and the command buffer (a range per
              execution, first start to last end), a command-buffer label around the
              dispatch gives one device-time range per execution enclosing
              the kernel, a queue label around the submit loop one host-time
              range enclosing them all
  subscriber  a tool subscribed to every DRIVER_* domain (callback.h):
              DRIVER_API ENTER/EXIT per call (exact counts), CONTEXT_CREATED
              at vkCreateDevice, MODULE_LOADED/UNLOADED of the shader module
              and the pipeline, APPENDED ENTER/EXIT per recorded operation,
              then per execution DISPATCHED and COMPLETED (device times) in
              that order under the vkCmd*'s correlation id; COMPLETED inside
              the fence wait (HOST_SYNCHRONIZATION) that follows its submit
  chain       a tool replaces vkCmdDispatch in the registered table: its
              entry forwards the one call, which is still traced
  no_tool     the layer without a tool: same output, no UPTI message
  plain_nofence, timeline_nofence, timeline_off_nofence
              vk_compute 3 [plain|timeline|timeline_off] nofence: submits
              without a fence, each followed by vkQueueWaitIdle: the layer
              learns completion from the timeline semaphore it signals in the
              program's submit (added to the program's own
              VkTimelineSemaphoreSubmitInfo with timeline), or from a fence
              of its own (timeline_off); every execution has device times
              inside its submit .. wait window
  timeline_semwait
              vk_compute 3 timeline semwait: submits with a fence, waits for
              the program's timeline semaphore (vkWaitSemaphores, which the
              layer does not follow), then resets the fence: the layer reads
              the submission at the reset; device times inside submit .. reset
  upti_run    `upti run --vulkan-trace`: the database's Vulkan API rows
  mixed_subscriber
              vk_ocl_mixed 3 (OpenCL layer and Vulkan layer) under a
              subscriber of every DRIVER_* domain: each runtime reports its
              own modules and operations once (the other's records reach its
              callbacks too)
  opencl_then_vulkan
              vk_ocl_mixed 3 under `upti run --sys-trace`: one thread runs an
              OpenCL kernel (clFinish) then a Vulkan dispatch (fence), three
              times; on the trace the six kernels alternate in that order,
              each ending before the next starts (one clock for both)

Other programs (output bit for bit equal to bare, exact records)
  vadd        vk_vadd: one dispatch of vk_vadd.comp:main (128 groups), a
              barrier and a 32768-byte buffer copy, device times between
              the submit and the end of its fence wait; the clock mapped
              by VK_EXT_calibrated_timestamps (metadata)
  vadd_measured
              the same with UPTI_VK_DISABLE_CALIBRATED=1: the layer measures
              the device's clock; every operation has device times, within
              the recorded error bound of the submit and the wait's end, and
              the metadata names the measured_offset method; with
              UPTI_VK_CLOCK_PROBE_INTERVAL_MS=0 the clock is measured 3
              times (vkCreateDevice, vkQueueWaitIdle, vkDeviceWaitIdle)
  vadd_subscriber
              vk_vadd under a subscriber of every DRIVER_* domain: the three
              host synchronisations (vkWaitForFences, vkQueueWaitIdle,
              vkDeviceWaitIdle), each operation APPENDED, DISPATCHED and
              COMPLETED once, COMPLETED inside the fence wait
  threads     vk_threads 3 4: three threads, each with its own device and
              queue, submit 4 times: 12 dispatches, 4 per queue, ordered on
              each queue, each record on the thread that recorded it
  copies      vk_copies: every copy kind once (fill, update, buffer,
              buffer->image, image, image->buffer) with its bytes and
              direction, and the 5 barriers, correlated with their calls
  copies2     vk_copies copy2: the same through vkCmdCopyBuffer2,
              vkCmdCopyBufferToImage2, vkCmdCopyImage2, vkCmdCopyImageToBuffer2
"""
import collections
import os
import sqlite3
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'common', 'python'))
import upti_test  # noqa: E402
from upti_test import SKIP  # noqa: E402

LAYER = 'VK_LAYER_UPTI_trace'
fail, expect = upti_test.failing()
run = upti_test.run_status


def parse(path):
    recs = []
    for line, parts, fields in upti_test.tool_lines(path):
        rec = {'_t': parts[0], 'line': line.rstrip('\n')}
        words = [p for p in parts[1:] if '=' not in p]
        if parts[0] in ('CB', 'SUB') and len(words) >= 2 and parts[0] == 'SUB':
            rec['op'], rec['phase'] = words[0], words[1]
        elif parts[0] == 'CB':
            rec['phase'], rec['op'] = words[0], words[1]
        elif words:
            rec['op'] = words[0]
        rec.update(fields)
        recs.append(rec)
    return recs


# What vk_compute calls, once per run whatever SUBMITS (those below scale).
ONCE = {
    'vkCreateInstance': 1, 'vkCreateDevice': 1, 'vkGetDeviceQueue': 1, 'vkCreateShaderModule': 1,
    'vkCreateComputePipelines': 1, 'vkCreateCommandPool': 1, 'vkAllocateCommandBuffers': 1,
    'vkBeginCommandBuffer': 1, 'vkCmdBindPipeline': 1, 'vkCmdBindDescriptorSets': 1,
    'vkCmdPushConstants': 1, 'vkCmdDispatch': 1, 'vkCmdPipelineBarrier': 1, 'vkCmdCopyBuffer': 1,
    'vkEndCommandBuffer': 1, 'vkCreateFence': 1, 'vkUpdateDescriptorSets': 1,
    'vkCreateBuffer': 3, 'vkAllocateMemory': 3, 'vkBindBufferMemory': 3, 'vkDestroyBuffer': 3,
    'vkFreeMemory': 3, 'vkMapMemory': 2, 'vkUnmapMemory': 2, 'vkDestroyDevice': 1,
    'vkDestroyInstance': 1, 'vkDestroyPipeline': 1, 'vkFreeCommandBuffers': 1,
}
PER_SUBMIT = ('vkQueueSubmit', 'vkWaitForFences', 'vkResetFences')
# With a secondary command buffer: one more allocation and recording, and its execution.
LABELS = dict(ONCE, vkSetDebugUtilsObjectNameEXT=2, vkCmdBeginDebugUtilsLabelEXT=1, vkCmdEndDebugUtilsLabelEXT=1,
              vkQueueBeginDebugUtilsLabelEXT=1, vkQueueEndDebugUtilsLabelEXT=1)
# A pipeline is named MODULE:ENTRY, the module after the source file its SPIR-V names.
KERNEL_NAME = 'vk_compute.comp:main'
SECONDARY = dict(ONCE, vkAllocateCommandBuffers=2, vkBeginCommandBuffer=2, vkEndCommandBuffer=2,
                 vkCmdExecuteCommands=1)

# A second device created after the program's (older_device): its calls take the wrappers' full look-up.
OLDER_DEVICE = dict(ONCE, vkCreateDevice=2, vkDestroyDevice=2)

PER_SUBMIT_NOFENCE = ('vkQueueSubmit', 'vkQueueWaitIdle')


def check_tool_records(recs, submits, submit='vkQueueSubmit', once=ONCE, per_submit=PER_SUBMIT):
    expect(any(r['_t'] == 'FINALIZE' for r in recs), 'tool finalize not reached')
    expect(not any(r['_t'] in ('DROPS', 'OTHER') for r in recs), 'records dropped or of another kind')
    api = [r for r in recs if r['_t'] == 'API']
    counts = collections.Counter(r['op'] for r in api)
    for name, n in once.items():
        expect(counts[name] == n, f'{name}: {counts[name]} API records, expected {n}')
    for name in per_submit:
        name = submit if name == 'vkQueueSubmit' else name
        expect(counts[name] == submits, f'{name}: {counts[name]} API records, expected {submits}')
    other = 'vkQueueSubmit2' if submit == 'vkQueueSubmit' else 'vkQueueSubmit'
    expect(counts[other] == 0, f'{other}: {counts[other]} API records, expected none')
    expect(all(r['op'].startswith('vk') for r in api), 'an API record without a Vulkan name')
    corrs = [int(r['corr']) for r in api]
    expect(0 not in corrs and len(set(corrs)) == len(corrs), 'correlation ids not unique and non-zero')
    for r in api:
        expect(int(r['start']) <= int(r['end']), 'API start > end: ' + r['line'])
    # Callbacks: one ENTER and one EXIT per record, nested per thread, the same
    # correlation id; the records come out in the order the calls ended.
    cbs = [r for r in recs if r['_t'] == 'CB']
    stacks = collections.defaultdict(list)
    ended = []
    for r in cbs:
        if r['phase'] == 'ENTER':
            stacks[r['tid']].append(r)
        else:
            expect(stacks[r['tid']], 'EXIT without ENTER: ' + r['line'])
            e = stacks[r['tid']].pop()
            expect((e['op'], e['corr']) == (r['op'], r['corr']), f"EXIT {r['line']} closes {e['line']}")
            ended.append((r['op'], r['corr']))
    expect(all(not s for s in stacks.values()), 'ENTER without EXIT')
    expect(ended == [(r['op'], r['corr']) for r in api],
           'buffer records differ from the callbacks (names, correlation ids or order)')
    # Arguments and return values through the payload.
    disp = [r for r in cbs if r['op'] == 'vkCmdDispatch']
    expect([r.get('groups') for r in disp] == ['64,1,1', '64,1,1'], 'vkCmdDispatch arguments: %s' % disp)
    sub_exit = [r for r in cbs if r['op'] == 'vkQueueSubmit' and r['phase'] == 'EXIT']
    expect(len(sub_exit) == (submits if submit == 'vkQueueSubmit' else 0) and
           all(r.get('submits') == '1' and r.get('cbs') == '1' and r.get('ret') == '0' for r in sub_exit),
           'vkQueueSubmit arguments or result')
    dev = [r for r in cbs if r['op'] == 'vkCreateDevice' and r['phase'] == 'EXIT']
    expect(len(dev) == once['vkCreateDevice'] and all(r.get('ret') == '0' and r.get('device') == 'set' for r in dev),
           'vkCreateDevice result at EXIT')
    # Order within the program: the instance first and last, submits after the recording.
    names = [r['op'] for r in api]
    expect(names[0] == 'vkCreateInstance' and names[-1] == 'vkDestroyInstance',
           'first/last call: %s ... %s' % (names[0], names[-1]))
    expect(names.index('vkEndCommandBuffer') < names.index(submit), 'submit before recording ended')
    return counts


def check_code_objects(recs):
    """The shader module (LOAD, UNLOAD) and the pipeline (KERNEL_SYMBOL LOAD,
    UNLOAD), named from the SPIR-V; the kernel records carry the pipeline."""
    code = [r for r in recs if r['_t'] == 'CODE']
    modules = [r for r in code if r['op'] == 'LOAD']
    symbols = [r for r in code if r['op'] == 'KERNEL_SYMBOL']
    expect([r['phase'] for r in modules] == ['LOAD', 'UNLOAD'] and
           all(r['name'] == 'vk_compute.comp' and r['kernel'] == '0' for r in modules) and
           modules[0]['module'] == modules[1]['module'], 'shader module records: %s' % modules)
    expect([r['phase'] for r in symbols] == ['LOAD', 'UNLOAD'] and symbols[0]['name'] == KERNEL_NAME and
           all(r['module'] == modules[0]['module'] and r['kernel'] == symbols[0]['kernel'] for r in symbols),
           'pipeline records: %s' % symbols)
    kernels = [r for r in recs if r['_t'] == 'KERNEL']
    expect(all(k['kid'] == symbols[0]['kernel'] for k in kernels), 'kernel records do not carry their pipeline')


MANY_DISPATCHES = 1000


def shared_starts(n, host_reset=False):
    """Which of n timed operations recorded one after the other, with nothing between them, share
    the end timestamp of the one before as their start (src/program/vulkan/command_buffers.c): all but the
    first of a recording, of each of the layer's query pools (512 queries) and of each run of 128
    queries the command buffer resets (none: host_reset, reset from the host)."""
    first = 512 if host_reset else 0
    used, reset_to, out = 0, first, []
    for i in range(n):
        if i > 0 and used < reset_to:
            out.append(True)
            used += 1
            continue
        if used + 2 > 512:
            used, reset_to = 0, first
        if used + 2 > reset_to:
            reset_to += 128
        used += 2
        out.append(False)
    return out


def check_many(recs, submits, pairs=False, host_reset=False):
    """vk_compute many: every operation of every execution with device times, in recording order:
    the first recording executed SUBMITS times, the second (the command buffer recorded again)
    and third (a command buffer allocated after it was freed) once each."""
    expect(any(r['_t'] == 'FINALIZE' for r in recs), 'tool finalize not reached')
    expect(not any(r['_t'] in ('DROPS', 'OTHER') for r in recs), 'records dropped or of another kind')
    api = [r for r in recs if r['_t'] == 'API']
    counts = collections.Counter(r['op'] for r in api)
    runs = [submits, 1, 1]  # executions of each recording
    want = {'vkCmdDispatch': 3 * MANY_DISPATCHES, 'vkCmdPipelineBarrier': 3 * (MANY_DISPATCHES + MANY_DISPATCHES // 10),
            'vkCmdCopyBuffer': 3 * (MANY_DISPATCHES // 10), 'vkBeginCommandBuffer': 3, 'vkQueueSubmit': sum(runs),
            'vkWaitForFences': sum(runs), 'vkAllocateCommandBuffers': 2, 'vkFreeCommandBuffers': 2}
    for name, n in want.items():
        expect(counts[name] == n, f'{name}: {counts[name]} API records, expected {n}')
    # The operations in recording order: the vkCmd* calls' correlation ids, one list per recording.
    order = [r['corr'] for r in api if r['op'] in ('vkCmdDispatch', 'vkCmdPipelineBarrier', 'vkCmdCopyBuffer')]
    per = len(order) // 3
    recordings = [order[i * per:(i + 1) * per] for i in range(3)]
    kind = {r['corr']: r['op'] for r in api}
    kernels = [r for r in recs if r['_t'] == 'KERNEL']
    copies = [r for r in recs if r['_t'] == 'COPY']
    expect(len(kernels) == MANY_DISPATCHES * sum(runs), f'{len(kernels)} KERNEL_DISPATCH records, expected '
           f'{MANY_DISPATCHES * sum(runs)}')
    expect(len(copies) == (per - MANY_DISPATCHES) * sum(runs),
           f'{len(copies)} MEMORY_COPY records, expected {(per - MANY_DISPATCHES) * sum(runs)}')
    ops = collections.defaultdict(list)  # correlation id -> its records, one per execution
    for r in kernels + copies:
        expect(0 < int(r['start']) <= int(r['end']), 'operation without device times or start > end: ' + r['line'])
        ops[r['corr']].append(r)
    for r in kernels:
        expect(kind.get(r['corr']) == 'vkCmdDispatch' and r['name'] == KERNEL_NAME and r['groups'] == '64,1,1',
               'kernel record: ' + r['line'])
    for r in copies:
        expect(kind.get(r['corr']) == {'BARRIER': 'vkCmdPipelineBarrier', 'COPY_BUFFER': 'vkCmdCopyBuffer'}.get(r['op']),
               'copy record not correlated with its call: ' + r['line'])
    expect(sorted(ops) == sorted(order), 'not a record per operation')
    # Executions in submit order; in each, its recording's operations in order on the queue.
    executions = []
    for rec, n in zip(recordings, runs):
        expect(all(len(ops[c]) == n for c in rec), f'not {n} records per operation of a recording')
        for s in sorted({int(r['submit']) for c in rec for r in ops[c]}):
            executions.append((s, rec))
    expect(len(executions) == sum(runs), f'{len(executions)} executions, expected {sum(runs)}')
    prev_end = 0
    shares = shared_starts(per, host_reset)
    equal = 0  # operations that start when the one before ended
    for s, rec in sorted(executions, key=lambda e: e[0]):
        for i, c in enumerate(rec):
            r = [x for x in ops[c] if int(x['submit']) == s]
            expect(len(r) == 1, f'operation {kind[c]} corr {c}: {len(r)} records in the execution submitted at {s}')
            expect(int(r[0]['start']) >= prev_end, f'{r[0]["line"]} starts before the operation recorded before it '
                   f'ended ({prev_end})')
            if i > 0 and int(r[0]['start']) == prev_end:
                equal += 1
            if not pairs and shares[i]:
                expect(int(r[0]['start']) == prev_end, f'{r[0]["line"]}: operation {i} of its recording does not start '
                       f'at the end of the one before ({prev_end}): no shared timestamp')
            prev_end = int(r[0]['end'])
    if pairs:
        # Two timestamps per operation: lavapipe reads its clock (ns) for each, one command after
        # the other; an end and the next start that read the same ns are rare, not the rule.
        expect(equal < len(executions) * per // 10, f'UPTI_VK_TIMESTAMPS=pairs: {equal} operations of '
               f'{len(executions) * per} start at the end of the one before, as if shared')
    else:
        expect(sum(shares) == per - (5 if host_reset else 18),
               f'{sum(shares)} shared starts per recording of {per} operations')


def check_many_copies_only(recs, submits):
    """vk_compute many without KERNEL_DISPATCH: per execution, in recording order, barrier, an
    untimed dispatch, every tenth time a barrier and a copy. The record after a dispatch starts
    after the end of the one before; a copy right after its barrier shares the barrier's end."""
    expect(any(r['_t'] == 'FINALIZE' for r in recs), 'tool finalize not reached')
    expect(not any(r['_t'] in ('KERNEL', 'DROPS', 'OTHER') for r in recs), 'kernel records, or records dropped')
    # In call order (the dispatches of many_handoff come from other threads' buffers).
    api = sorted((r for r in recs if r['_t'] == 'API'), key=lambda r: int(r['start']))
    order = [r['corr'] for r in api if r['op'] in ('vkCmdDispatch', 'vkCmdPipelineBarrier', 'vkCmdCopyBuffer')]
    kind = {r['corr']: r['op'] for r in api}
    per = len(order) // 3
    expect(per == 2 * MANY_DISPATCHES + MANY_DISPATCHES // 5, f'{per} operations per recording')
    recordings = [order[i * per:(i + 1) * per] for i in range(3)]
    runs = [submits, 1, 1]
    copies = [r for r in recs if r['_t'] == 'COPY']
    timed_per = per - MANY_DISPATCHES
    expect(len(copies) == timed_per * sum(runs), f'{len(copies)} MEMORY_COPY records, expected {timed_per * sum(runs)}')
    by = collections.defaultdict(list)  # (submit time, correlation id) -> its record
    for r in copies:
        expect(0 < int(r['start']) <= int(r['end']), 'operation without device times or start > end: ' + r['line'])
        by[(int(r['submit']), r['corr'])].append(r)
    executions = sorted({s for s, _ in by})
    expect(len(executions) == sum(runs), f'{len(executions)} executions, expected {sum(runs)}')
    after_dispatch = shared = 0
    for s in executions:
        rec = next(rc for rc in recordings if (s, rc[0]) in by)
        prev_end, untimed_between = None, False
        for c in rec:
            if kind[c] == 'vkCmdDispatch':
                untimed_between = True
                continue
            r = by[(s, c)]
            expect(len(r) == 1, f'operation {kind[c]} corr {c}: {len(r)} records in the execution submitted at {s}')
            start = int(r[0]['start'])
            if prev_end is not None and untimed_between:
                expect(start > prev_end, f'{r[0]["line"]}: starts at the end of the operation before ({prev_end}) '
                       'although an untimed dispatch ran between them: a shared timestamp across it')
                after_dispatch += 1
            elif prev_end is not None:
                expect(start >= prev_end, f'{r[0]["line"]} starts before the operation before it ended ({prev_end})')
                shared += start == prev_end
            prev_end, untimed_between = int(r[0]['end']), False
    expect(after_dispatch == MANY_DISPATCHES * len(executions), f'{after_dispatch} operations after a dispatch')
    # The copies right after their barrier: shared but where the copy begins a reset run of the layer's.
    expect(shared >= (MANY_DISPATCHES // 10) * len(executions) * 9 // 10,
           f'{shared} of {(MANY_DISPATCHES // 10) * len(executions)} copies share their barrier\'s end')


def check_secondary_twice_many(recs, submits):
    """vk_compute secondary_twice many: per submission 2 x 2200 records, the first execution's untimed."""
    expect(any(r['_t'] == 'FINALIZE' for r in recs), 'tool finalize not reached')
    expect(not any(r['_t'] in ('DROPS', 'OTHER') for r in recs), 'records dropped or of another kind')
    api = [r for r in recs if r['_t'] == 'API']
    kind = {r['corr']: r['op'] for r in api}
    order = [r['corr'] for r in api if r['op'] in ('vkCmdDispatch', 'vkCmdPipelineBarrier', 'vkCmdCopyBuffer')]
    expect(len(order) == MANY_DISPATCHES * 2 + MANY_DISPATCHES // 5, f'{len(order)} operations recorded')
    ops = [r for r in recs if r['_t'] in ('KERNEL', 'COPY')]
    expect(len(ops) == 2 * len(order) * submits, f'{len(ops)} records, expected {2 * len(order) * submits}')
    by = collections.defaultdict(list)  # (submit time, correlation id) -> its two records
    for r in ops:
        by[(int(r['submit']), r['corr'])].append(r)
    submit_times = sorted({s for s, _ in by})
    expect(len(submit_times) == submits, f'{len(submit_times)} submit times, expected {submits}')
    prev_end = 0
    for s in submit_times:
        for c in order:
            two = by[(s, c)]
            expect(len(two) == 2, f'{kind[c]} corr {c}: {len(two)} records in the submission at {s}, expected 2')
            # In the order of the executions (records come out in it): the first untimed, the second timed.
            untimed = [r for r in two[:1] if int(r['start']) == int(r['end']) == 0]
            timed = [r for r in two[1:] if 0 < int(r['start']) <= int(r['end'])]
            expect(len(untimed) == len(timed) == 1, f'{kind[c]} corr {c}: not the first execution untimed and '
                   'the second timed')
            expect(int(timed[0]['start']) >= prev_end, timed[0]['line'] + ' starts before the one before it ended')
            prev_end = int(timed[0]['end'])


def check_labels(recs, submits):
    api = [r for r in recs if r['_t'] == 'API']
    marks = [r for r in recs if r['_t'] == 'MARK']
    by_corr = {r['corr']: r['op'] for r in api}
    kernels = sorted((r for r in recs if r['_t'] == 'KERNEL'), key=lambda r: int(r['start']))
    expect(all(k['name'] == 'doubler' for k in kernels), 'kernels not named by the object name: %s' % kernels)
    ranges = collections.defaultdict(dict)
    for m in marks:
        expect(m['op'] not in ranges[m['range']], 'range id %s used twice' % m['range'])
        ranges[m['range']][m['op']] = m
    expect(all(set(r) == {'uptx_range_start', 'uptx_range_stop'} for r in ranges.values()), 'unpaired label ranges: %s' % marks)
    steps = sorted((r for r in ranges.values() if r['uptx_range_start']['msg'] == 'step'),
                   key=lambda r: int(r['uptx_range_start']['ts']))
    loops = [r for r in ranges.values() if r['uptx_range_start']['msg'] == 'loop']
    works = sorted((r for r in ranges.values() if r['uptx_range_start']['msg'] == 'work'),
                   key=lambda r: int(r['uptx_range_start']['ts']))
    expect(len(steps) == len(works) == submits and len(loops) == 1 and len(ranges) == 2 * submits + 1,
           f'{len(steps)} step, {len(works)} work and {len(loops)} loop ranges, expected {submits}, {submits}, 1')
    # The named command buffer: one range per execution, from its first operation's start to its
    # last one's end, opened and closed by its vkQueueSubmit.
    copies = sorted((r for r in recs if r['_t'] == 'COPY'), key=lambda r: int(r['start']))
    for w, k, c in zip(works, kernels, copies[1::2]):
        a, b = w['uptx_range_start'], w['uptx_range_stop']
        expect(by_corr.get(a['corr']) == by_corr.get(b['corr']) == 'vkQueueSubmit', 'work range not linked to its submit')
        expect(a['ts'] == k['start'] and b['ts'] == c['end'] and c['op'] == 'COPY_BUFFER',
               'work range %s..%s is not kernel start %s .. copy end %s' % (a['ts'], b['ts'], k['start'], c['end']))
    for st, k in zip(steps, kernels):
        a, b = st['uptx_range_start'], st['uptx_range_stop']
        expect(by_corr.get(a['corr']) == 'vkCmdBeginDebugUtilsLabelEXT' and
               by_corr.get(b['corr']) == 'vkCmdEndDebugUtilsLabelEXT', 'step range not linked to its calls')
        expect(0 < int(a['ts']) <= int(k['start']) <= int(k['end']) <= int(b['ts']),
               'kernel %s..%s outside its step range %s..%s' % (k['start'], k['end'], a['ts'], b['ts']))
    lo, hi = int(loops[0]['uptx_range_start']['ts']), int(loops[0]['uptx_range_stop']['ts'])
    expect(all(lo <= int(st['uptx_range_start']['ts']) and int(st['uptx_range_stop']['ts']) <= hi for st in steps),
           'the step ranges are not inside the loop range')
    expect(by_corr.get(loops[0]['uptx_range_start']['corr']) == 'vkQueueBeginDebugUtilsLabelEXT' and
           by_corr.get(loops[0]['uptx_range_stop']['corr']) == 'vkQueueEndDebugUtilsLabelEXT', 'loop range not linked')


def check_subscriber(recs, submits):
    subs = [r for r in recs if r['_t'] == 'SUB']
    expect(any(r['_t'] == 'FINALIZE' for r in recs), 'tool finalize not reached')
    expect(len(subs) == len(recs) - 1, 'lines other than notifications')
    def of(domain, phase=None):
        return [r for r in subs if r['op'] == domain and (phase is None or r['phase'] == phase)]
    # DRIVER_API: one ENTER and one EXIT per call, paired by correlation id, nested.
    enters = collections.Counter(r['api'] for r in of('DRIVER_API', 'API_ENTER'))
    exits = collections.Counter(r['api'] for r in of('DRIVER_API', 'API_EXIT'))
    expect(enters == exits, 'DRIVER_API ENTER and EXIT differ')
    for name, n in list(ONCE.items()) + [(x, submits) for x in PER_SUBMIT]:
        expect(enters[name] == n, f'DRIVER_API {name}: {enters[name]}, expected {n}')
    stack = []
    for r in of('DRIVER_API'):
        if r['phase'] == 'API_ENTER':
            stack.append(r['corr'])
        else:
            expect(stack and stack.pop() == r['corr'], 'DRIVER_API EXIT does not close its ENTER: ' + r['line'])
    api_corr = {r['corr']: r['api'] for r in of('DRIVER_API', 'API_ENTER')}
    ctx = of('DRIVER_CONTEXT_CREATED')
    expect(len(ctx) == 1 and ctx[0]['api'] == 'vkCreateDevice' and ctx[0]['ctx'] != '0' and ctx[0]['dev'] != '0'
           and api_corr.get(ctx[0]['corr']) == 'vkCreateDevice', 'CONTEXT_CREATED: %s' % ctx)
    device = ctx[0]['ctx']
    for dom, calls in (('DRIVER_MODULE_LOADED', ('vkCreateShaderModule', 'vkCreateComputePipelines')),
                       ('DRIVER_MODULE_UNLOADED', ('vkDestroyPipeline', 'vkDestroyShaderModule'))):
        got = [(r['api'], r['name'], api_corr.get(r['corr'])) for r in of(dom)]
        names = ('vk_compute.comp', KERNEL_NAME) if dom.endswith('LOADED') and 'UN' not in dom else (KERNEL_NAME, 'vk_compute.comp')
        expect(got == [(c, n, c) for c, n in zip(calls, names)], f'{dom}: {got}')
    # GPU operations: APPENDED at recording, then DISPATCHED and COMPLETED per execution.
    appended = of('DRIVER_GPU_OPERATION_APPENDED')
    expect([(r['phase'], r['api'], r['name']) for r in appended] ==
           [(p, a, n) for a, n in (('vkCmdDispatch', KERNEL_NAME), ('vkCmdPipelineBarrier', 'BARRIER'),
                                   ('vkCmdCopyBuffer', 'COPY_BUFFER')) for p in ('API_ENTER', 'API_EXIT')],
           'APPENDED: %s' % [r['line'] for r in appended])
    ops = [r['corr'] for r in appended if r['phase'] == 'API_ENTER']
    expect([api_corr.get(c) for c in ops] == ['vkCmdDispatch', 'vkCmdPipelineBarrier', 'vkCmdCopyBuffer'],
           'APPENDED correlation ids are not those of the vkCmd* calls')
    dispatched, completed = of('DRIVER_GPU_OPERATION_DISPATCHED'), of('DRIVER_GPU_OPERATION_COMPLETED')
    expect(len(dispatched) == len(completed) == 3 * submits, f'{len(dispatched)} DISPATCHED, {len(completed)} '
           f'COMPLETED, expected {3 * submits} each')
    pos = {id(r): i for i, r in enumerate(subs)}
    last_appended = pos[id(appended[-1])]
    for c in ops:
        ds = [r for r in dispatched if r['corr'] == c]
        cs = [r for r in completed if r['corr'] == c]
        expect(len(ds) == len(cs) == submits, f'operation {c}: {len(ds)} DISPATCHED, {len(cs)} COMPLETED')
        for d, k in zip(ds, cs):
            expect(last_appended < pos[id(d)] < pos[id(k)], 'DISPATCHED/COMPLETED out of order: ' + k['line'])
            expect(d['submit'] == k['submit'] != '0' and 0 < int(k['start']) <= int(k['end']) and
                   int(k['submit']) <= int(k['start']) and k['ctx'] == device and k['queue'] == d['queue'],
                   'COMPLETED: ' + k['line'])
    # A fence-waited execution completes inside the wait that follows its submit.
    syncs = of('DRIVER_HOST_SYNCHRONIZATION')
    expect([(r['phase'], r['api']) for r in syncs] == [('API_ENTER', 'vkWaitForFences'),
                                                       ('API_EXIT', 'vkWaitForFences')] * submits,
           'HOST_SYNCHRONIZATION: %s' % [r['line'] for r in syncs])
    for i in range(submits):
        lo, hi = pos[id(syncs[2 * i])], pos[id(syncs[2 * i + 1])]
        inside = [r for r in completed if lo < pos[id(r)] < hi]
        expect(len(inside) == 3, f'wait {i}: {len(inside)} COMPLETED inside it, expected 3')


def device_records(recs, kind):
    return sorted((r for r in recs if r['_t'] == kind), key=lambda r: int(r['queued']))


def check_window(recs, r, bound=0):
    """r ran after its submit began and ended before the fence wait that followed it returned
    (give or take bound ns, the uncertainty of a measured clock).
    The test programs submit on the thread that recorded: submits of other threads may overlap."""
    api = [x for x in recs if x['_t'] == 'API']
    sub = [x for x in api if x['op'] == 'vkQueueSubmit' and x['tid'] == r['tid'] and
           int(x['start']) <= int(r['submit']) <= int(x['end'])]
    expect(len(sub) == 1, 'no vkQueueSubmit around the submit time of ' + r['line'])
    waits = [x for x in api if x['op'] == 'vkWaitForFences' and x['tid'] == sub[0]['tid'] and
             int(x['start']) >= int(sub[0]['end'])]
    wait = min(waits, key=lambda x: int(x['start']))
    expect(int(sub[0]['start']) - bound <= int(r['start']) <= int(r['end']) <= int(wait['end']) + bound,
           'device times outside submit .. wait end (bound %d ns): %s' % (bound, r['line']))
    expect(int(r['start']) >= int(r['submit']) - bound,
           'device start before its submit timestamp (bound %d ns): %s' % (bound, r['line']))


def metadata(recs):
    """The runtimes' metadata the test tool wrote at finalize (META lines)."""
    return {k: v for r in recs if r['_t'] == 'META' for k, v in r.items() if k not in ('_t', 'line')}


def check_clock(recs, method):
    """The clock mapping's metadata: the method, the number of mappings (one per
    submission read) and the largest uncertainty, in ns; returns that."""
    meta = metadata(recs)
    keys = {'vulkan.calibration_method', 'vulkan.calibrations', 'vulkan.calibration_max_deviation_ns'}
    if method == 'measured_offset':
        # Measured at vkCreateDevice, then again at vkQueueWaitIdle and vkDeviceWaitIdle
        # (UPTI_VK_CLOCK_PROBE_INTERVAL_MS=0: at every one).
        keys.add('vulkan.clock_measurements')
        expect(meta.get('vulkan.clock_measurements') == '3', 'clock measurements: %s' % meta)
    expect(set(meta) == keys, 'clock metadata: %s' % meta)
    expect(meta['vulkan.calibration_method'] == method, 'calibration method %s, expected %s' %
           (meta['vulkan.calibration_method'], method))
    expect(meta['vulkan.calibrations'] == '1' and meta['vulkan.calibration_max_deviation_ns'].isdigit(),
           'clock metadata: %s' % meta)
    return int(meta['vulkan.calibration_max_deviation_ns'])


def check_program(case, recs):
    expect(any(r['_t'] == 'FINALIZE' for r in recs), 'tool finalize not reached')
    expect(not any(r['_t'] in ('DROPS', 'OTHER') for r in recs), 'records dropped or of another kind')
    api = [r for r in recs if r['_t'] == 'API']
    by_corr = {r['corr']: r for r in api}
    kernels, copies = device_records(recs, 'KERNEL'), device_records(recs, 'COPY')
    # vadd_measured: the device's clock measured by the layer, not calibrated: device times
    # within the measurement's error bound of the host calls around them.
    bound = 0
    if case in ('vadd', 'vadd_measured'):
        bound = check_clock(recs, 'measured_offset' if case == 'vadd_measured' else 'calibrated_timestamps')
        expect(case == 'vadd_measured' or bound < 1000000, 'calibrated clock uncertain by %d ns' % bound)
        bound = bound if case == 'vadd_measured' else 0
    for r in kernels + copies:
        expect(by_corr.get(r['corr'], {}).get('tid') == r['tid'], 'record not on its recording thread: ' + r['line'])
        expect(0 < int(r['start']) <= int(r['end']), 'no device times: ' + r['line'])
        check_window(recs, r, bound)
    if case in ('vadd', 'vadd_measured'):
        expect([(k['op'], k['name'], k['groups'], by_corr[k['corr']]['op']) for k in kernels] ==
               [('VK_DISPATCH', 'vk_vadd.comp:main', '128,1,1', 'vkCmdDispatch')], 'kernels: %s' % kernels)
        expect([(c['op'], c['bytes'], c['dir']) for c in copies] == [('BARRIER', '0', '0'),
                                                                      ('COPY_BUFFER', '32768', '3')],
               'copies: %s' % [c['line'] for c in copies])
    elif case == 'threads':
        expect(len(kernels) == 12 and all(k['name'] == 'vk_vadd.comp:main' and k['groups'] == '16,1,1'
                                          for k in kernels), f'{len(kernels)} kernels, expected 12 of vk_vadd')
        queues = collections.defaultdict(list)
        for k in kernels:
            queues[k['queue']].append(k)
        expect(sorted(len(q) for q in queues.values()) == [4, 4, 4], 'kernels per queue: %s' %
               {q: len(v) for q, v in queues.items()})
        expect(len({q[0]['tid'] for q in queues.values()}) == 3 and
               all(len({k['tid'] for k in q}) == 1 for q in queues.values()), 'one recording thread per queue')
        for q in queues.values():
            q.sort(key=lambda k: int(k['start']))
            for a, b in zip(q, q[1:]):
                expect(int(a['end']) <= int(b['start']) and int(a['submit']) < int(b['submit']),
                       'executions overlap or reorder on one queue: %s / %s' % (a['line'], b['line']))
        expect(sum(1 for r in api if r['op'] == 'vkQueueSubmit') == 12 and
               sum(1 for r in api if r['op'] == 'vkCreateDevice') == 3, 'submit or device counts')
    elif case in ('copies', 'copies2'):
        expect(not kernels, 'kernel records from a program without dispatches')
        want = [('FILL_BUFFER', '16384', '1', 'vkCmdFillBuffer'), ('WRITE_BUFFER', '256', '1', 'vkCmdUpdateBuffer'),
                ('COPY_BUFFER', '8192', '3', 'vkCmdCopyBuffer'), ('BARRIER', '0', '0', 'vkCmdPipelineBarrier'),
                ('BARRIER', '0', '0', 'vkCmdPipelineBarrier'),
                ('COPY_BUFFER_TO_IMAGE', '16384', '3', 'vkCmdCopyBufferToImage'),
                ('BARRIER', '0', '0', 'vkCmdPipelineBarrier'), ('COPY_IMAGE', '16384', '3', 'vkCmdCopyImage'),
                ('BARRIER', '0', '0', 'vkCmdPipelineBarrier'),
                ('COPY_IMAGE_TO_BUFFER', '16384', '3', 'vkCmdCopyImageToBuffer'),
                ('BARRIER', '0', '0', 'vkCmdPipelineBarrier'), ('COPY_BUFFER', '16384', '3', 'vkCmdCopyBuffer')]
        if case == 'copies2':  # the Vulkan 1.3 forms of the copies
            want = [(o, b, d, n + '2' if n.startswith('vkCmdCopy') else n) for o, b, d, n in want]
        got = [(c['op'], c['bytes'], c['dir'], by_corr[c['corr']]['op']) for c in copies]
        expect(got == want, 'copies in recording order:\n%s' % '\n'.join(map(str, got)))
        agent = copies[0]['dst'] if copies else None
        expect(agent not in (None, '0'), 'copies without a device agent')
        expect(all((c['dst'] == agent) and (c['src'] == (agent if c['dir'] == '3' else '0'))
                   for c in copies if c['dir'] != '0'), 'source/destination agents')


def check_vadd_subscriber(recs):
    subs = [r for r in recs if r['_t'] == 'SUB']
    def of(domain):
        return [r for r in subs if r['op'] == domain]
    syncs = [(r['phase'], r['api']) for r in of('DRIVER_HOST_SYNCHRONIZATION')]
    expect(syncs == [(p, a) for a in ('vkWaitForFences', 'vkQueueWaitIdle', 'vkDeviceWaitIdle')
                     for p in ('API_ENTER', 'API_EXIT')], 'HOST_SYNCHRONIZATION: %s' % syncs)
    qwait = [r for r in of('DRIVER_HOST_SYNCHRONIZATION') if r['api'] == 'vkQueueWaitIdle']
    dwait = [r for r in of('DRIVER_HOST_SYNCHRONIZATION') if r['api'] == 'vkDeviceWaitIdle']
    ctx = of('DRIVER_CONTEXT_CREATED')
    expect(len(ctx) == 1 and all(r['queue'] != '0' for r in qwait) and all(r['ctx'] == ctx[0]['ctx'] for r in dwait),
           'host synchronisations do not name their queue or device')
    ops = [(r['phase'], r['api']) for r in of('DRIVER_GPU_OPERATION_APPENDED')]
    expect(ops == [(p, a) for a in ('vkCmdDispatch', 'vkCmdPipelineBarrier', 'vkCmdCopyBuffer')
                   for p in ('API_ENTER', 'API_EXIT')], 'APPENDED: %s' % ops)
    pos = {id(r): i for i, r in enumerate(subs)}
    fence = [r for r in of('DRIVER_HOST_SYNCHRONIZATION') if r['api'] == 'vkWaitForFences']
    completed = of('DRIVER_GPU_OPERATION_COMPLETED')
    expect(len(of('DRIVER_GPU_OPERATION_DISPATCHED')) == 3 and len(completed) == 3 and
           all(pos[id(fence[0])] < pos[id(c)] < pos[id(fence[1])] for c in completed),
           'DISPATCHED/COMPLETED: not 3 each, or COMPLETED outside the fence wait')


def check_mixed_subscriber(recs, submits):
    subs = [r for r in recs if r['_t'] == 'SUB']
    loaded = sorted((r['api'], r['name']) for r in subs if r['op'] == 'DRIVER_MODULE_LOADED')
    expect(loaded == sorted([('clBuildProgram', 'ocl_step'), ('vkCreateShaderModule', 'vk_compute.comp'),
                             ('vkCreateComputePipelines', KERNEL_NAME)]), 'MODULE_LOADED: %s' % loaded)
    unloaded = sorted(r['api'] for r in subs if r['op'] == 'DRIVER_MODULE_UNLOADED' and r['api'].startswith('vk'))
    expect(unloaded == ['vkDestroyPipeline', 'vkDestroyShaderModule'], 'Vulkan MODULE_UNLOADED: %s' % unloaded)
    done = collections.Counter(r['api'] for r in subs if r['op'] == 'DRIVER_GPU_OPERATION_COMPLETED')
    expect(done['vkCmdDispatch'] == done['vkCmdPipelineBarrier'] == done['vkCmdCopyBuffer'] == submits and
           done['clEnqueueNDRangeKernel'] == submits, 'COMPLETED per command: %s' % dict(done))
    dispatched = collections.Counter(r['api'] for r in subs if r['op'] == 'DRIVER_GPU_OPERATION_DISPATCHED')
    expect(dispatched['vkCmdDispatch'] == dispatched['clEnqueueNDRangeKernel'] == submits,
           'DISPATCHED per command: %s' % dict(dispatched))


def check_kernels(recs, submits, submit='vkQueueSubmit', name=KERNEL_NAME, wait='vkWaitForFences'):
    """One record per execution of the recorded vkCmdDispatch, on UPTI's clock:
    after its vkQueueSubmit began, before the wait after it (vkWaitForFences,
    or vkQueueWaitIdle for a submit without a fence) returned."""
    api = [r for r in recs if r['_t'] == 'API']
    kernels = sorted((r for r in recs if r['_t'] == 'KERNEL'), key=lambda r: int(r['submit']))
    expect(len(kernels) == submits, f'{len(kernels)} KERNEL_DISPATCH records, expected {submits}')
    dispatch = [r for r in api if r['op'] == 'vkCmdDispatch'][0]
    subs = [r for r in api if r['op'] == submit]
    waits = [r for r in api if r['op'] == wait]
    for k, s, w in zip(kernels, subs, waits):
        expect(k['op'] == 'VK_DISPATCH' and k['name'] == name and k['groups'] == '64,1,1',
               'kernel record: ' + k['line'])
        expect(k['corr'] == dispatch['corr'], 'kernel record not correlated with its vkCmdDispatch: ' + k['line'])
        expect(k['agent'] != '0', 'kernel record without an agent: ' + k['line'])
        t = {x: int(k[x]) for x in ('queued', 'submit', 'start', 'end')}
        expect(int(dispatch['start']) <= t['queued'] <= int(dispatch['end']), 'queued outside vkCmdDispatch')
        expect(int(s['start']) <= t['submit'] <= int(s['end']), 'submit time outside its vkQueueSubmit')
        expect(int(s['start']) <= t['start'] <= t['end'] <= int(w['end']),
               'device times %d..%d outside submit %s .. wait end %s' % (t['start'], t['end'], s['start'], w['end']))
    # The barrier and the copy recorded after the dispatch: one each per execution,
    # after the dispatch on the queue, inside the same window.
    copies = sorted((r for r in recs if r['_t'] == 'COPY'), key=lambda r: (int(r['submit']), int(r['start'])))
    expect(len(copies) == 2 * submits, f'{len(copies)} MEMORY_COPY records, expected {2 * submits}')
    by_corr = {r['corr']: r['op'] for r in api}
    for i, (k, s, w) in enumerate(zip(kernels, subs, waits)):
        barrier, copy = copies[2 * i], copies[2 * i + 1]
        expect(barrier['op'] == 'BARRIER' and by_corr.get(barrier['corr']) == 'vkCmdPipelineBarrier'
               and barrier['bytes'] == '0' and barrier['dir'] == '0', 'barrier record: ' + barrier['line'])
        expect(copy['op'] == 'COPY_BUFFER' and by_corr.get(copy['corr']) == 'vkCmdCopyBuffer'
               and copy['bytes'] == '16384' and copy['dir'] == '3' and copy['src'] == k['agent']
               and copy['dst'] == k['agent'], 'copy record: ' + copy['line'])
        for c in (barrier, copy):
            expect(c['queue'] == k['queue'] and c['submit'] == k['submit'], 'copy not in its submission: ' + c['line'])
            expect(int(k['start']) <= int(c['start']) <= int(c['end']) <= int(w['end']),
                   'copy/barrier not after the dispatch within the wait: ' + c['line'])
        expect(int(barrier['start']) <= int(copy['start']), 'copy before the barrier on the queue')
    # Device memory: 3 allocations, each freed with the size it had, at its API call.
    allocs = [r for r in recs if r['_t'] == 'ALLOC']
    live = {}
    for r in allocs:
        expect(r['type'] == '9' and r['agent'] == kernels[0]['agent'], 'allocation record: ' + r['line'])
        if r['op'] == 'ALLOCATE':
            expect(by_corr.get(r['corr']) == 'vkAllocateMemory' and int(r['bytes']) >= 16384,
                   'ALLOCATE record: ' + r['line'])
            live[r['handle']] = r['bytes']
        else:
            expect(r['op'] == 'FREE' and by_corr.get(r['corr']) == 'vkFreeMemory'
                   and live.pop(r['handle'], None) == r['bytes'], 'FREE record: ' + r['line'])
    expect(len(allocs) == 6 and not live, f'{len(allocs)} allocation records, expected 3 ALLOCATE + 3 FREE')


def bare_env():
    """The caller's environment without UPTI's, Vulkan's and the OpenCL layers' variables."""
    # Mesa's implicit device-select layer sits above ours and makes calls of
    # its own: off, so the counts are the program's.
    base = upti_test.env_without(('UPTI_', 'VK_', 'OPENCL_LAYERS'))
    base['NODEVICE_SELECT'] = '1'
    return upti_test.preload_icds(base)


def run_bare(argv, env, name):
    """Runs the program without the layer: its status, stdout and stderr. Exits SKIP where it
    finds no device; fails unless it exits 0."""
    rc, out, err = run(argv, env)
    if rc == SKIP:
        print('SKIP: ' + err)
        sys.exit(SKIP)
    expect(rc == 0, f'{name} fails without the layer ({rc}): {err}')
    return rc, out, err


def main():
    a = upti_test.driver_options('layer-dir', 'tool', 'chain-tool', 'sub-tool', 'upti', 'workdir', 'case')
    base = bare_env()
    layered = dict(base, VK_ADD_LAYER_PATH=a.layer_dir, VK_INSTANCE_LAYERS=LAYER)
    traced = dict(layered, UPTI_TOOL_LIBRARIES=a.tool)
    submits = 100 if a.case == 'submit_100' else 3
    argv = [a.app, str(submits)] + ([a.case] if a.case in ('submit2', 'secondary', 'secondary_twice', 'labels',
                                                            'timeline', 'timeline_off', 'many', 'many_simultaneous',
                                                            'older_device', 'free_early', 'resubmit_early')
                                    else [])
    if a.case in ('many_read', 'many_host', 'many_pairs', 'many_copies_only'):
        argv = [a.app, str(submits), 'many']
    nofence = a.case.endswith('nofence')
    if nofence:  # plain_nofence, timeline_nofence, timeline_off_nofence
        argv = [a.app, str(submits), a.case[:-len('_nofence')], 'nofence']
    if a.case == 'timeline_semwait':
        argv = [a.app, str(submits), 'timeline', 'semwait']
    if a.case == 'secondary_twice_many':
        argv = [a.app, str(submits), 'secondary_twice', 'many']
    if a.case == 'many_copies_handoff':
        argv = [a.app, str(submits), 'many_handoff']
    if a.case in ('vadd', 'vadd_measured', 'threads', 'copies', 'copies2', 'vadd_subscriber'):
        argv = [a.app] + {'threads': ['3', '4'], 'copies2': ['copy2']}.get(a.case, [])
    submit = 'vkQueueSubmit2' if a.case == 'submit2' else 'vkQueueSubmit'
    rc0, out0, err0 = run_bare(argv, base, 'vk_compute')

    if a.case == 'opencl_then_vulkan':
        outdir = os.path.join(a.workdir, 'mixed')
        db = upti_test.fresh_db(outdir, 'mixed')
        rc1, out1, err1 = run([a.upti, 'run', '--sys-trace', '--force-overwrite', '-d', outdir, '-o', 'mixed',
                               '--'] + argv, base)
        expect(rc1 == 0 and out1 == out0, f'upti run: status {rc1}, stdout {out1!r} (bare {out0!r}), stderr {err1}')
        con = sqlite3.connect(db)
        rows = con.execute("SELECT name, start, \"end\" FROM kernels ORDER BY start").fetchall()
        names = [r[0] for r in rows]
        expect(names == ['ocl_step', KERNEL_NAME] * submits, f'kernels in start order: {names}')
        for prev, cur in zip(rows, rows[1:]):
            expect(0 < prev[1] <= prev[2] <= cur[1], f'{prev} does not end before {cur} starts')
        print('PASS opencl_then_vulkan')
        return

    if a.case == 'upti_run':
        outdir = os.path.join(a.workdir, 'upti_run')
        db = upti_test.fresh_db(outdir, 'vk')
        rc1, out1, err1 = run([a.upti, 'run', '--vulkan-trace', '--kernel-trace', '--memory-copy-trace',
                               '--memory-alloc-trace',
                               '--force-overwrite', '-d', outdir, '-o', 'vk',
                               '--'] + argv, dict(base, UPTI_VK_CALIBRATE_INTERVAL_MS='0'))
        expect(rc1 == 0 and out1 == out0, f'upti run: status {rc1}, stdout {out1!r}, stderr {err1}')
        con = sqlite3.connect(db)
        rows = dict(con.execute("SELECT name, count(*) FROM apis WHERE domain = 'VULKAN_API' GROUP BY name"))
        other = con.execute("SELECT count(*) FROM apis WHERE domain != 'VULKAN_API'").fetchone()[0]
        expect(other == 0, f'{other} API rows of another domain')
        for name, n in list(ONCE.items()) + [(x, submits) for x in PER_SUBMIT]:
            expect(rows.get(name) == n, f'database: {name} has {rows.get(name)} rows, expected {n}')
        bad = con.execute("SELECT count(*) FROM apis WHERE domain = 'VULKAN_API' AND"
                          " (start > \"end\" OR correlation_id = 0)").fetchone()[0]
        expect(bad == 0, f'{bad} Vulkan API rows with start > end or no correlation id')
        dup = con.execute("SELECT count(*) - count(DISTINCT correlation_id) FROM apis").fetchone()[0]
        expect(dup == 0, 'correlation ids repeat in the database')
        kernels = con.execute("SELECT name, operation, count(*), sum(start <= \"end\" AND start > 0) FROM kernels"
                              " GROUP BY 1, 2").fetchall()
        expect(kernels == [(KERNEL_NAME, 'VK_DISPATCH', submits, submits)],
               f'kernels table: {kernels}, expected {submits} timed VK_DISPATCH of {KERNEL_NAME}')
        linked = con.execute("SELECT count(*) FROM kernels k JOIN apis a ON a.correlation_id = k.correlation_id"
                             " WHERE a.name = 'vkCmdDispatch'").fetchone()[0]
        expect(linked == submits, f'{linked} kernels linked to their vkCmdDispatch, expected {submits}')
        copies = con.execute("SELECT operation, direction, bytes, count(*), sum(start <= \"end\" AND start > 0)"
                             " FROM memory_copies GROUP BY 1, 2, 3 ORDER BY 1").fetchall()
        expect(copies == [('BARRIER', 'NONE', 0, submits, submits),
                          ('COPY_BUFFER', 'DEVICE_TO_DEVICE', 16384, submits, submits)],
               f'memory_copies table: {copies}')
        allocs = con.execute("SELECT operation, type, count(*) FROM memory_allocations GROUP BY 1, 2"
                             " ORDER BY 1").fetchall()
        expect(allocs == [('ALLOCATE', 'DEVICE_MEMORY', 3), ('FREE', 'DEVICE_MEMORY', 3)],
               f'memory_allocations table: {allocs}')
        # Code objects: the shader module and the pipeline, which the kernels name by kernel_id.
        symbols = con.execute("SELECT count(*) FROM kernel_dispatch k JOIN info_kernel_symbol s"
                              " ON s.kernel_id = k.kernel_id JOIN string t ON t.id = s.name_id"
                              " WHERE t.string = ? AND s.unload IS NOT NULL", (KERNEL_NAME,)).fetchone()[0]
        modules = con.execute("SELECT t.string FROM info_code_object c JOIN string t ON t.id = c.name_id").fetchall()
        expect(symbols == submits and modules == [('vk_compute.comp',)],
               f'{symbols} kernels joined to their pipeline symbol, modules {modules}')
        # One clock: a calibration per submission read (UPTI_VK_CALIBRATE_INTERVAL_MS=0),
        # the largest deviation kept.
        meta = dict(con.execute("SELECT key, value FROM metadata WHERE key LIKE 'vulkan.%'"))
        expect(set(meta) == {'vulkan.calibrations', 'vulkan.calibration_max_deviation_ns',
                             'vulkan.calibration_method'} and
               meta['vulkan.calibrations'] == str(submits) and meta['vulkan.calibration_max_deviation_ns'].isdigit()
               and meta['vulkan.calibration_method'] == 'calibrated_timestamps',
               f'calibration metadata: {meta}')
        print('PASS upti_run (%d Vulkan API rows)' % sum(rows.values()))
        return

    out = os.path.join(a.workdir, a.case + '.records')
    if os.path.exists(out):
        os.remove(out)
    env = layered if a.case == 'no_tool' else dict(traced, UPTI_VK_TEST_OUT=out)
    if a.case == 'chain':
        env['UPTI_TOOL_LIBRARIES'] = a.chain_tool
    if a.case == 'api_only':
        env['UPTI_VK_TEST_NO_KERNELS'] = '1'
    if a.case == 'submit_100':
        env['UPTI_VK_CALIBRATE_INTERVAL_MS'] = '86400s'  # one calibration, reused by every read
    if a.case in ('free_early', 'resubmit_early'):
        env['UPTI_VK_COMPLETION_WAIT_MS'] = '300'  # the layer gives up on the waiting submission sooner than 5 s
    if a.case == 'vadd_measured':
        env['UPTI_VK_DISABLE_CALIBRATED'] = '1'
        env['UPTI_VK_CLOCK_PROBE_INTERVAL_MS'] = '0'
    if a.case in ('many_read', 'many_host'):
        env['UPTI_VK_QUERIES'] = a.case[len('many_'):]
    if a.case == 'many_pairs':
        env['UPTI_VK_TIMESTAMPS'] = 'pairs'
    if a.case in ('many_copies_only', 'many_copies_handoff'):
        env['UPTI_VK_TEST_NO_DISPATCHES'] = '1'

    if a.case in ('subscriber', 'vadd_subscriber', 'mixed_subscriber'):
        env['UPTI_TOOL_LIBRARIES'] = a.sub_tool
    if a.case == 'mixed_subscriber':
        env['OPENCL_LAYERS'] = os.path.join(a.layer_dir, 'libupti-opencl.so')
    rc1, out1, err1 = run(argv, env)
    expect(rc1 == rc0, f'exit status {rc1} with the layer, {rc0} without; stderr: {err1}')
    expect(out1 == out0, 'stdout differs with the layer:\n%s\n---\n%s' % (out0.decode(), out1.decode()))
    if a.case in ('free_early', 'resubmit_early'):
        lines = [x for x in err1.splitlines() if x.startswith('upti:')]
        expect(len(lines) == 1 and 'freed or submitted again while' in lines[0],
               'expected one upti: line about the command buffer freed early, got: ' + err1)
    elif a.case in ('secondary_twice', 'secondary_twice_many'):
        lines = [x for x in err1.splitlines() if x.startswith('upti:')]
        expect(len(lines) == 1 and 'executed more than once in one submission' in lines[0],
               'expected one upti: line about the repeated secondary, got: ' + err1)
    else:
        expect('upti:' not in err1, 'UPTI messages: ' + err1)
    upti_test.end_if_no_tool(a.case, out)
    recs = parse(out)
    if a.case == 'secondary_twice':
        check_tool_records(recs, submits, 'vkQueueSubmit', SECONDARY)
        api = {r['corr']: r['op'] for r in recs if r['_t'] == 'API'}
        for t, name in (('KERNEL', 'vkCmdDispatch'), ('COPY', None)):
            got = [r for r in recs if r['_t'] == t]
            expect(len(got) == (1 if t == 'KERNEL' else 2) * 2 * submits, f'{len(got)} {t} records')
            timed = [r for r in got if int(r['start']) > 0]
            expect(len(timed) == len(got) // 2 and all(int(r['start']) == int(r['end']) == 0
                                                       for r in got if r not in timed),
                   f'{t}: {len(timed)} of {len(got)} timed, expected half (the second executions)')
            expect(name is None or all(api.get(r['corr']) == name for r in got), 'kernel records not correlated')
        print('PASS secondary_twice')
        return
    if a.case in ('many', 'many_read', 'many_host', 'many_simultaneous', 'many_pairs'):
        check_many(recs, submits, pairs=a.case == 'many_pairs', host_reset=a.case == 'many_host')
        print('PASS ' + a.case)
        return
    if a.case in ('many_copies_only', 'many_copies_handoff'):
        check_many_copies_only(recs, submits)
        print('PASS ' + a.case)
        return
    if a.case == 'secondary_twice_many':
        check_secondary_twice_many(recs, submits)
        print('PASS ' + a.case)
        return
    if a.case in ('free_early', 'resubmit_early'):
        # In submit order, then recording order: the 3 submits' operations timed, then the early
        # command buffer's first execution untimed, its second (resubmit_early) timed.
        api = {r['corr']: r['op'] for r in recs if r['_t'] == 'API'}
        runs = 1 if a.case == 'free_early' else 2
        for kind, per in (('KERNEL', 1), ('COPY', 2)):
            got = sorted(device_records(recs, kind), key=lambda r: (int(r['submit']), int(r['queued'])))
            expect(len(got) == per * (submits + runs), f'{len(got)} {kind} records, expected {per * (submits + runs)}')
            timed = [0 < int(r['start']) <= int(r['end']) for r in got]
            untimed = [int(r['start']) == int(r['end']) == 0 for r in got]
            want = [True] * (per * submits) + [False] * per + [True] * (per * (runs - 1))
            expect(timed == want and all(u != t for u, t in zip(untimed, timed)),
                   f'{kind} records timed {timed}, expected {want}: %s' % [r['line'] for r in got])
            early = got[per * submits:]
            expect([(r['op'], api.get(r['corr'])) for r in early] ==
                   ([('VK_DISPATCH', 'vkCmdDispatch')] if kind == 'KERNEL' else
                    [('BARRIER', 'vkCmdPipelineBarrier'), ('COPY_BUFFER', 'vkCmdCopyBuffer')]) * runs,
                   'the early command buffer\'s records: %s' % [r['line'] for r in early])
        print('PASS ' + a.case)
        return
    checks = {'mixed_subscriber': lambda: check_mixed_subscriber(recs, submits),
              'vadd_subscriber': lambda: check_vadd_subscriber(recs),
              'subscriber': lambda: check_subscriber(recs, submits)}
    checks.update(dict.fromkeys(('vadd', 'vadd_measured', 'threads', 'copies', 'copies2'),
                                lambda: check_program(a.case, recs)))
    if a.case in checks:
        checks[a.case]()
        print('PASS ' + a.case)
        return
    if nofence:
        # No fence: vkQueueWaitIdle after each submit (the layer learns completion from its
        # timeline semaphore, or from a fence of its own where timeline semaphores are off).
        check_tool_records(recs, submits, submit, ONCE, PER_SUBMIT_NOFENCE)
        expect(not any(r['op'] in ('vkWaitForFences', 'vkResetFences') for r in recs if r['_t'] == 'API'),
               'fence calls in a run without fences')
        check_kernels(recs, submits, submit, KERNEL_NAME, 'vkQueueWaitIdle')
        check_code_objects(recs)
        print('PASS ' + a.case)
        return
    if a.case == 'timeline_semwait':
        # The fence is reset without a fence wait: the layer reads the submission it marks then.
        check_tool_records(recs, submits, submit, ONCE, ('vkQueueSubmit', 'vkResetFences'))
        expect(not any(r['op'] == 'vkWaitForFences' for r in recs if r['_t'] == 'API'), 'a fence wait')
        check_kernels(recs, submits, submit, KERNEL_NAME, 'vkResetFences')
        check_code_objects(recs)
        print('PASS ' + a.case)
        return
    check_tool_records(recs, submits, submit, {'secondary': SECONDARY, 'labels': LABELS,
                                               'older_device': OLDER_DEVICE}.get(a.case, ONCE))
    if a.case == 'api_only':
        expect(not any(r['_t'] in ('KERNEL', 'COPY', 'ALLOC', 'CODE', 'MARK') for r in recs),
               'KERNEL_DISPATCH or MEMORY_COPY records although not asked for')
    else:
        check_kernels(recs, submits, submit, 'doubler' if a.case == 'labels' else KERNEL_NAME)
        check_code_objects(recs)
    if a.case == 'submit_100':
        meta = metadata(recs)
        expect(meta.get('vulkan.calibrations') == '1', f'calibrations with a 1-day interval: {meta}')
    if a.case == 'labels':
        check_labels(recs, submits)
    elif a.case != 'api_only':
        expect(not any(r['_t'] == 'MARK' for r in recs), 'marker records without labels')
    if a.case == 'api':
        agents = [r for r in recs if r['_t'] == 'AGENT']
        expect(len(agents) >= 1 and any(r['type'] == '1' and 'llvmpipe' in r['line'] for r in agents),
               'lavapipe is not among the agents: %s' % agents)
    if a.case == 'chain':
        table = [r for r in recs if r['_t'] == 'TABLE']
        expect(len(table) == 1, 'the tool did not receive the Vulkan table once')
        chain = [r for r in recs if r['_t'] == 'CHAIN']
        expect(chain and chain[0]['forwarded'] == '1', 'chained vkCmdDispatch forwarded %s calls, expected 1'
               % (chain[0]['forwarded'] if chain else None))
    print('PASS ' + a.case)


if __name__ == '__main__':
    main()
