#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Runs an OpenCL test program without and with the UPTI layer and asserts on
what the test tool recorded (tool.c writes one line per record).
Exit 0: pass, 1: fail, 77: skipped."""
import collections
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'common', 'python'))
import upti_test  # noqa: E402
from upti_test import SKIP  # noqa: E402

fail, expect = upti_test.failing()


def run(cmd, env, timeout=60):
    return upti_test.run_status(cmd, env, timeout)


def parse(path):
    return [{'_t': parts[0], 'op': parts[1] if len(parts) > 1 and '=' not in parts[1] else '', 'line': line,
             **fields} for line, parts, fields in upti_test.tool_lines(path, exclude='(')]


def count(recs, type_, op=None, **fields):
    return sum(1 for r in recs if r['_t'] == type_ and (op is None or r['op'] == op)
               and all(r.get(k) == str(v) for k, v in fields.items()))


def check_common(recs, slack=0):
    expect(any(r['_t'] == 'FINALIZE' for r in recs), 'tool finalize not reached')
    expect(not any(r['_t'] == 'DROPS' for r in recs), 'records dropped')
    api = {int(r['corr']): r for r in recs if r['_t'] == 'API'}
    for r in recs:
        if r['_t'] == 'API':
            expect(int(r['start']) <= int(r['end']), 'API start > end: ' + r['line'])
        if r['_t'] in ('KERNEL', 'COPY'):
            t = [int(r[k]) for k in ('queued', 'submit', 'start', 'end')]
            if r['status'] == '0':
                expect(0 < t[0] <= t[1] <= t[2] <= t[3], 'device times out of order: ' + r['line'])
            else:
                # A command that never ran (a failed event in its wait list) has no times:
                # clGetEventProfilingInfo answers CL_PROFILING_INFO_NOT_AVAILABLE.
                expect(int(r['status']) < 0 and t == [0, 0, 0, 0], 'failed command with times: ' + r['line'])
            corr = int(r['corr'])
            if api:
                expect(corr in api and api[corr]['op'].startswith('clEnqueue'),
                       'device record not correlated with its enqueue: ' + r['line'])
                if r['status'] == '0':
                    expect(int(api[corr]['start']) - slack <= t[0] <= int(api[corr]['end']) + slack,
                           'queued time outside its enqueue call: ' + r['line'])
    # Within one (in-order) queue, commands run in enqueue order.
    by_queue = collections.defaultdict(list)
    for r in recs:
        if r['_t'] in ('KERNEL', 'COPY') and r['status'] == '0':
            by_queue[r['queue']].append((int(r['corr']), int(r['start']), int(r['end'])))
    for q, items in by_queue.items():
        items.sort()
        for a, b in zip(items, items[1:]):
            expect(a[2] <= b[1], f'queue {q}: command {b[0]} started before {a[0]} ended')
    # A blocking clFinish returns after the commands it waited for ended.
    finishes = [r for r in recs if r['_t'] == 'API' and r['op'] == 'clFinish']
    if len(by_queue) != 1:
        finishes = []  # API records do not say which queue a clFinish waited for
    for r in recs:
        if r['_t'] in ('KERNEL', 'COPY') and r['status'] == '0':
            later = [f for f in finishes if int(f['corr']) > int(r['corr']) and f['tid'] == api.get(int(r['corr']), {}).get('tid')]
            if later:
                f = min(later, key=lambda f: int(f['corr']))
                expect(int(r['end']) <= int(f['end']), 'a command ends after the clFinish that waited for it')


def case_vadd(recs):
    for op, n in (('clEnqueueNDRangeKernel', 1), ('clEnqueueWriteBuffer', 2), ('clEnqueueReadBuffer', 1),
                  ('clSetKernelArg', 3), ('clCreateBuffer', 3), ('clFinish', 1), ('clGetPlatformIDs', 1)):
        expect(count(recs, 'API', op) == n, f'{op}: {count(recs, "API", op)} API records, expected {n}')
    expect(count(recs, 'KERNEL') == 1, 'kernel records')
    k = [r for r in recs if r['_t'] == 'KERNEL'][0]
    expect(k['name'] == 'vadd' and k['dim'] == '1' and k['global'] == '1024,1,1' and k['local'] == '64',
           'kernel record: ' + k['line'])
    expect(count(recs, 'COPY', 'WRITE_BUFFER', bytes=4096, dir=1) == 2, 'write records')
    expect(count(recs, 'COPY', 'READ_BUFFER', bytes=4096, dir=2) == 1, 'read records')
    expect(count(recs, 'COPY') == 3, 'copy records')
    expect(count(recs, 'ALLOC', 'ALLOCATE', type=1, bytes=4096) == 3, 'allocations')
    expect(count(recs, 'ALLOC', 'FREE', type=1, bytes=4096) == 3, 'frees')
    expect(count(recs, 'CODE', 'LOAD', phase='LOAD', name='vadd') == 1, 'program load')
    expect(count(recs, 'CODE', 'LOAD', phase='UNLOAD') == 1, 'program unload')
    expect(count(recs, 'CODE', 'KERNEL_SYMBOL', phase='LOAD', name='vadd') == 1, 'kernel symbol load')
    expect(count(recs, 'CODE', 'KERNEL_SYMBOL', phase='UNLOAD', name='vadd') == 1, 'kernel symbol unload')
    expect(count(recs, 'AGENT') >= 1 and count(recs, 'AGENT', handle='yes') >= 1, 'agents')
    args = [r['line'] for r in recs if r['_t'] == 'ARGS' and r['op'] == 'clEnqueueNDRangeKernel']
    expect(len(args) == 1 and 'global_work_size(const size_t *)=[1024]' in args[0] and
           'local_work_size(const size_t *)=[64]' in args[0] and 'ret=0' in args[0], 'arguments: %s' % args)
    expect(any('kernel_name(const char *)=vadd' in r['line'] for r in recs if r['_t'] == 'ARGS'),
           'string argument')


def case_threads(recs):
    expect(count(recs, 'API', 'clEnqueueNDRangeKernel') == 40, 'enqueue API records')
    expect(count(recs, 'KERNEL', 'NDRANGE', name='inc') == 40, 'kernel records')
    expect(count(recs, 'COPY', 'WRITE_BUFFER', bytes=1024) == 8, 'write records')
    expect(count(recs, 'COPY', 'READ_BUFFER', bytes=1024) == 8, 'read records')
    queues = collections.Counter(r['queue'] for r in recs if r['_t'] == 'KERNEL')
    expect(len(queues) == 8 and set(queues.values()) == {5}, 'kernels per queue: %s' % queues)
    tids = {r['tid'] for r in recs if r['_t'] == 'API' and r['op'] == 'clEnqueueNDRangeKernel'}
    expect(len(tids) == 4, 'enqueueing threads: %d' % len(tids))


COPIES = [('WRITE_BUFFER', 4096, 1), ('COPY_BUFFER', 4096, 1), ('READ_BUFFER', 4096, 1),
          ('WRITE_BUFFER_RECT', 128, 1), ('COPY_BUFFER_RECT', 128, 1), ('READ_BUFFER_RECT', 128, 1),
          ('FILL_BUFFER', 4096, 1), ('MAP_BUFFER', 4096, 1), ('UNMAP', 0, 2), ('MIGRATE', 4096, 1),
          ('MARKER', 0, 1), ('BARRIER', 0, 1), ('WRITE_IMAGE', 1024, 1), ('COPY_IMAGE', 1024, 1),
          ('READ_IMAGE', 1024, 1), ('COPY_IMAGE_TO_BUFFER', 1024, 1), ('COPY_BUFFER_TO_IMAGE', 1024, 1),
          ('FILL_IMAGE', 1024, 1), ('MAP_IMAGE', 1024, 1), ('SVM_MEMFILL', 4096, 1),
          ('SVM_MEMCPY', 4096, 1), ('SVM_MAP', 4096, 1), ('SVM_UNMAP', 0, 1)]


def case_copies(recs):
    for op, nbytes, n in COPIES:
        expect(count(recs, 'COPY', op, bytes=nbytes) == n,
               f'{op}: {count(recs, "COPY", op)} records ({[r["line"] for r in recs if r["op"] == op]}), expected {n} of {nbytes} bytes')
    expect(count(recs, 'COPY') == sum(n for _, _, n in COPIES), 'copy records in all')
    expect(count(recs, 'ALLOC', 'ALLOCATE') == 6 and count(recs, 'ALLOC', 'FREE') == 6, 'allocations')
    expect(count(recs, 'ALLOC', 'ALLOCATE', type=3, bytes=1024) == 2, 'image allocations')
    expect(count(recs, 'ALLOC', 'ALLOCATE', type=5, bytes=4096) == 2, 'SVM allocations')


def case_two_platforms(recs):
    """ocl_platforms: vector add on PoCL and on oclgrind, each traced with its own agent."""
    agents = {r['id']: r['line'] for r in recs if r['_t'] == 'AGENT'}
    expect(len(agents) >= 2, 'two platforms: agents %s' % agents)
    kernels = [r for r in recs if r['_t'] == 'KERNEL']
    expect(len(kernels) == 2 and all(k['name'] == 'vadd' and k['global'] == '1024,1,1' for k in kernels),
           'kernel records: %s' % [k['line'] for k in kernels])
    expect(len({k['agent'] for k in kernels}) == 2 and all(k['agent'] in agents for k in kernels),
           'kernels on two agents: %s' % [k['line'] for k in kernels])
    names = sorted(agents[k['agent']] for k in kernels)
    expect(any('Oclgrind' in n for n in names), 'no kernel on the oclgrind device: %s' % names)
    expect(count(recs, 'COPY', 'WRITE_BUFFER', bytes=4096) == 4 and count(recs, 'COPY', 'READ_BUFFER', bytes=4096) == 2,
           'copy records')
    for k in kernels:
        expect(count(recs, 'COPY', 'READ_BUFFER', src=k['agent']) == 1, 'read from agent ' + k['agent'])
    for op, n in (('clEnqueueNDRangeKernel', 2), ('clEnqueueWriteBuffer', 4), ('clCreateCommandQueue', 1),
                  ('clCreateCommandQueueWithProperties', 1), ('clFinish', 2)):
        expect(count(recs, 'API', op) == n, f'{op}: {count(recs, "API", op)} API records, expected {n}')


def case_errors(recs):
    expect(count(recs, 'API', 'clEnqueueNDRangeKernel') == 3, 'enqueue API records')
    expect(count(recs, 'KERNEL', 'NDRANGE', name='two', status=0) == 2, 'kernel records (failed enqueue has none)')
    expect(count(recs, 'COPY', 'READ_BUFFER') == 1, 'read records (failed enqueue has none)')
    rets = [r['line'].split('ret=')[1].strip() for r in recs if r['_t'] == 'ARGS' and r['op'] == 'clEnqueueNDRangeKernel']
    expect(rets == ['-52', '0', '0'], 'enqueue return codes at EXIT: %s' % rets)
    expect(any(r['op'] == 'clCreateKernel' and 'errcode_ret(cl_int *)=CL_INVALID_KERNEL_NAME' in r['line']
               for r in recs if r['_t'] == 'ARGS'), 'errcode_ret at EXIT')


def case_events(recs):
    """ocl_events: callbacks, a failed wait-list chain, and clean-up in an exit handler."""
    kernels = [r for r in recs if r['_t'] == 'KERNEL']
    expect(len(kernels) == 5 and all(k['name'] == 'inc' and k['global'] == '1024,1,1' for k in kernels),
           'kernel records: %s' % [k['line'] for k in kernels])
    failed = [r for r in recs if r['_t'] in ('KERNEL', 'COPY') and r['status'] != '0']
    expect(len(failed) == 2 and {r['_t'] for r in failed} == {'KERNEL', 'COPY'} and
           all(int(r['status']) < 0 for r in failed), 'failed commands: %s' % [r['line'] for r in failed])
    expect(count(recs, 'COPY', 'READ_BUFFER', bytes=4, status=0) == 2, 'completed reads')
    expect(count(recs, 'COPY', 'FILL_BUFFER', bytes=4096, status=0) == 1, 'fill')
    expect(count(recs, 'COPY') == 4, 'copy records in all')
    # The kernels that ran are the first, the one after the failure and the two of the exit handler.
    ran = sorted(int(k['corr']) for k in kernels if k['status'] == '0')
    enq = sorted(int(r['corr']) for r in recs if r['_t'] == 'API' and r['op'] == 'clEnqueueNDRangeKernel')
    failed_kernel = [int(k['corr']) for k in kernels if k['status'] != '0']
    expect(len(enq) == 5 and failed_kernel == [enq[1]] and ran == enq[:1] + enq[2:],
           'kernels by enqueue: ran %s, failed %s, enqueued %s' % (ran, failed_kernel, enq))
    for op, n in (('clSetEventCallback', 9), ('clCreateUserEvent', 1), ('clSetUserEventStatus', 1),
                  ('clWaitForEvents', 1), ('clReleaseEvent', 4), ('clFinish', 3), ('clEnqueueReadBuffer', 3),
                  ('clReleaseKernel', 1), ('clReleaseProgram', 1), ('clReleaseMemObject', 1),
                  ('clReleaseCommandQueue', 1), ('clReleaseContext', 1)):
        expect(count(recs, 'API', op) == n, f'{op}: {count(recs, "API", op)} API records, expected {n}')
    expect(count(recs, 'ALLOC', 'ALLOCATE', type=1, bytes=4096) == 1 and
           count(recs, 'ALLOC', 'FREE', type=1, bytes=4096) == 1, 'allocation and its release at exit')
    expect(count(recs, 'CODE', 'LOAD', phase='UNLOAD') == 1, 'program unloaded at exit')


def main():
    a = upti_test.driver_options('layer', 'tool', 'chain-tool', 'workdir', 'case')
    base = upti_test.env_without(('UPTI_', 'OPENCL_LAYERS'))
    traced = dict(base, OPENCL_LAYERS=a.layer, UPTI_TOOL_LIBRARIES=a.tool)
    if a.case == 'two_platforms':
        icd = '/usr/lib/oclgrind/liboclgrind-rt-icd.so'
        pocl = '/etc/OpenCL/vendors/pocl.icd'
        if not os.path.exists(icd) or not os.path.exists(pocl):
            print('SKIP: oclgrind ICD (%s) or PoCL ICD not installed' % icd)
            sys.exit(SKIP)
        vendors = tempfile.mkdtemp(dir=a.workdir)
        open(os.path.join(vendors, 'a_pocl.icd'), 'w').write(open(pocl).read())
        open(os.path.join(vendors, 'b_oclgrind.icd'), 'w').write(icd + '\n')
        base['OCL_ICD_VENDORS'] = vendors
        traced['OCL_ICD_VENDORS'] = vendors
    if a.case == 'no_tool':
        traced.pop('UPTI_TOOL_LIBRARIES')
    if a.case == 'chain':
        traced['UPTI_TOOL_LIBRARIES'] = a.chain_tool
        traced['UPTI_OCL_TEST_KINDS'] = 'kernel,api'
    if a.case == 'kernel_only':
        traced['UPTI_OCL_TEST_KINDS'] = 'kernel'
    out = os.path.join(a.workdir, a.case + '.records')
    if os.path.exists(out):
        os.remove(out)
    traced['UPTI_OCL_TEST_OUT'] = out
    try:
        rc0, out0, err0 = run([a.app], base, 5 if a.case == 'two_platforms' else 60)
    except subprocess.TimeoutExpired:
        if a.case == 'two_platforms':
            # oclgrind 21.10's 2.0+ dispatch slots point back into the loader:
            # a program that calls one of them on its platform loops forever.
            print('SKIP: the two-platform program did not finish in 5 s without the layer '
                  '(oclgrind ICD looping in a 2.0+ entry?)')
            sys.exit(SKIP)
        raise
    if a.case == 'two_platforms' and b'platforms: 2' not in out0:
        print('SKIP: the loader did not offer both platforms: ' + out0.decode(errors='replace'))
        sys.exit(SKIP)
    rc1, out1, err1 = run([a.app], traced)
    expect(rc0 == rc1, f'exit status {rc1} with the layer, {rc0} without; stderr: {err1}')
    expect(out0 == out1, 'stdout differs with the layer:\n%s\n---\n%s' % (out0.decode(), out1.decode()))
    expect('upti:' not in err1, 'UPTI warnings: ' + err1)
    upti_test.end_if_no_tool(a.case, out)
    recs = parse(out)
    # oclgrind stamps with CLOCK_REALTIME at microsecond jitter, mapped by measured offset.
    check_common(recs, 20000 if a.case == 'two_platforms' else 0)
    per_case = {'ocl_vadd': case_vadd, 'two_platforms': case_two_platforms, 'ocl_threads': case_threads,
                'ocl_copies': case_copies, 'ocl_errors': case_errors, 'ocl_events': case_events}
    if a.case in per_case:
        per_case[a.case](recs)
    if a.case == 'extension':
        expect(b'called' in out1, 'clRetainDeviceEXT / clReleaseDeviceEXT not found: ' + out1.decode())
        for op in ('clGetExtensionFunctionAddressForPlatform', 'clRetainDeviceEXT', 'clReleaseDeviceEXT'):
            n = 2 if op == 'clGetExtensionFunctionAddressForPlatform' else 1
            expect(count(recs, 'API', op) == n, f'{op}: {count(recs, "API", op)} API records, expected {n}')
    if a.case == 'chain':
        expect(count(recs, 'CHAIN', forwarded=1) == 1, 'chained entry not called once')
        expect(count(recs, 'KERNEL') == 1 and count(recs, 'API', 'clEnqueueNDRangeKernel') == 1,
               'tracing beneath the chained entry')
    if a.case == 'kernel_only':
        expect(count(recs, 'KERNEL') == 1 and count(recs, 'API') == 0 and count(recs, 'COPY') == 0,
               'kernel records without API tracing')
    print('PASS')


if __name__ == '__main__':
    main()
