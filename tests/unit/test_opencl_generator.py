#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Unit tests of the OpenCL generator (src/names/opencl/generate.py), one named case per run:

  test_opencl_generator.py SRC_DIR golden   the committed operation ids equal opencl_api.txt's
  test_opencl_generator.py SRC_DIR table    a small table in, the expected wrappers out
  test_opencl_generator.py SRC_DIR slots    a line without its slot, or out of order, is refused
"""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'common', 'python'))
import upti_test  # noqa: E402

SRC = sys.argv[1]
GEN = os.path.join(SRC, 'src', 'names', 'opencl', 'generate.py')
API = os.path.join(SRC, 'src', 'names', 'opencl', 'opencl_api.txt')
GOLDEN = os.path.join(SRC, 'src', 'names', 'opencl', 'opencl_operations.def')


fail, check = upti_test.failing()


def run_gen(*args):
    return subprocess.run([sys.executable, GEN, *args], capture_output=True, text=True)


def case_golden():
    r = run_gen('--operations', API)
    check(r.returncode == 0, f'generate.py --operations failed: {r.stderr}')
    with open(GOLDEN) as fh:
        golden = fh.read()
    if r.stdout != golden:
        import difflib
        diff = difflib.unified_diff(golden.splitlines(True), r.stdout.splitlines(True),
                                    'src/names/opencl/opencl_operations.def (committed)',
                                    'generated from src/names/opencl/opencl_api.txt')
        sys.stdout.writelines(diff)
        fail('the OPENCL_API operation ids differ from the committed list. Ids are part of the ABI: '
             'an existing entry must keep its slot and id, a new entry goes at the end. If the change '
             'is an intended addition, update the golden copy with\n'
             '  python3 src/names/opencl/generate.py --operations src/names/opencl/opencl_api.txt '
             '> src/names/opencl/opencl_operations.def\nand commit it with the change.')
    ids = [int(line.split('(')[1].split(',')[0]) for line in golden.splitlines()
           if line.startswith('UPTI_OPENCL_OPERATION(')]
    check(ids == list(range(1, len(ids) + 1)), 'golden ids are not 1..N')
    check(len(ids) == 149, f'{len(ids)} operations, the ICD dispatch table of OpenCL 3.0 has 149')


# Three entries: a plain call, a void call and a device command (COMMANDS in generate.py).
SMALL = '''# comment lines and blank lines are skipped

0   cl_int clGetPlatformIDs(cl_uint num_entries, cl_platform_id *platforms, cl_uint *num_platforms)
1   void clSVMFree(cl_context context, void *svm_pointer)
2   cl_int clEnqueueTask(cl_command_queue command_queue, cl_kernel kernel, cl_uint num_events_in_wait_list, const cl_event *event_wait_list, cl_event *event)
'''


def generate(table, tmp):
    src = os.path.join(tmp, 'api.txt')
    with open(src, 'w') as fh:
        fh.write(table)
    outs = [os.path.join(tmp, n) for n in ('api.h', 'wrappers.c', 'kind_info.c', 'impl.h')]
    return run_gen('--subset', src, *outs), outs


def case_table():
    with tempfile.TemporaryDirectory() as tmp:
        r, (h, w, k, i) = generate(SMALL, tmp)
        check(r.returncode == 0, f'generate.py failed: {r.stderr}')
        header, wrappers, kinds, impl = (open(p).read() for p in (h, w, k, i))
    # Public enum: explicit ids, slot + 1.
    for want in ('    UPTI_OPENCL_API_NONE = 0,\n',
                 '    UPTI_OPENCL_API_clGetPlatformIDs = 1, /* slot 0 */\n',
                 '    UPTI_OPENCL_API_clSVMFree = 2, /* slot 1 */\n',
                 '    UPTI_OPENCL_API_clEnqueueTask = 3, /* slot 2 */\n',
                 '    UPTI_OPENCL_API_LAST = 4\n'):
        check(want in header, f'header lacks {want!r}')
    check('        cl_uint num_entries;\n        cl_platform_id *platforms;\n' in header,
          'the argument struct of clGetPlatformIDs')
    check('    cl_int cl_int_retval;\n' in header and 'void_retval' not in header, 'the retval union')
    # Slots checked against the loader's table.
    for name, slot in (('clGetPlatformIDs', 0), ('clSVMFree', 1), ('clEnqueueTask', 2)):
        check(f'_Static_assert(offsetof(struct _cl_icd_dispatch, {name}) == {slot} * sizeof(void *),'
              in wrappers, f'no slot assertion for {name}')
    # A plain entry registers the layer first (REGISTER_FIRST) and takes the fast path untraced.
    check('static cl_int CL_API_CALL w_clGetPlatformIDs(cl_uint num_entries, cl_platform_id *platforms, '
          'cl_uint *num_platforms)\n{\n    uocl_ensure_registered();\n'
          '    const upti_operation_plan_t *p = upti_runtime_plan(uocl_api_plans, UPTI_OPENCL_API_clGetPlatformIDs);\n'
          '    if (__builtin_expect(p == NULL, 1))\n'
          '        return ((uocl_fn_clGetPlatformIDs)uocl_next.clGetPlatformIDs)(num_entries, platforms, num_platforms);\n'
          in wrappers, 'the wrapper of clGetPlatformIDs')
    # A void entry goes through its hand-written impl (IMPL) and returns once.
    check('    if (__builtin_expect(p == NULL, 1)) {\n        uocl_impl_clSVMFree(context, svm_pointer);\n'
          '        return;\n    }\n' in wrappers, 'the void wrapper of clSVMFree')
    check('void uocl_impl_clSVMFree(cl_context context, void *svm_pointer);\n' in impl, 'impl prototype')
    check(impl.count('uocl_impl_') == 1, 'only IMPL entries get an impl prototype')
    # A device command asks both plans and describes the kernel.
    check('upti_runtime_plan(uocl_kernel_plans, UPTI_KERNEL_DISPATCH_TASK)' in wrappers, 'command plan')
    check('uocl_cmd_kernel(c, kernel, 1, NULL, NULL, NULL);' in wrappers, 'command description')
    check('    [UPTI_OPENCL_API_clEnqueueTask] = {UPTI_TRACING_KIND_KERNEL_DISPATCH, '
          'UPTI_KERNEL_DISPATCH_TASK, 0},\n' in wrappers, 'subscriber table row')
    # The result of each traced call: the cl_int returned, none for a void call.
    check('    payload.result = r;\n    upti_runtime_call_exit_result(&call, payload.result);\n'
          in wrappers, 'a cl_int call ends with its result')
    check('    uocl_impl_clSVMFree(context, svm_pointer);\n    upti_runtime_call_exit(&call);\n'
          in wrappers, 'a void call ends without one')
    check(wrappers.count('payload.result = UPTI_API_RESULT_NONE;') == 3, 'none until the call returns')
    check('const unsigned uocl_num_entries = 3;\n' in wrappers, 'entry count')
    # Trampolines and the filled tables, one per entry.
    check(wrappers.count('*(void **)&trampolines->') == 3, 'three trampolines')
    # Argument printers: one row per parameter; names are not generated (the .def names them).
    check('    {"num_entries", "cl_uint", offsetof(upti_opencl_api_args_t, clGetPlatformIDs.num_entries)'
          in kinds, 'the argument description of num_entries')
    check('    {"event_wait_list", "const cl_event *",' in kinds and
          'offsetof(upti_opencl_api_args_t, clEnqueueTask.num_events_in_wait_list)' in kinds,
          'event_wait_list is an array counted by num_events_in_wait_list')
    check('g_names' not in kinds, 'the operation names come from opencl_operations.def')
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, 'api.txt')
        with open(src, 'w') as fh:
            fh.write(SMALL)
        r = run_gen('--operations', src)
    check(r.stdout.endswith('UPTI_OPENCL_OPERATION(1, clGetPlatformIDs)\n'
                            'UPTI_OPENCL_OPERATION(2, clSVMFree)\n'
                            'UPTI_OPENCL_OPERATION(3, clEnqueueTask)\n'), f'--operations: {r.stdout!r}')


def case_slots():
    bad = {
        'missing slot': SMALL.replace('1   void clSVMFree', 'void clSVMFree'),
        'out of order': SMALL.replace('1   void clSVMFree', '5   void clSVMFree'),
    }
    for what, table in bad.items():
        with tempfile.TemporaryDirectory() as tmp:
            r, _ = generate(table, tmp)
        check(r.returncode != 0, f'{what}: accepted')
        check('clSVMFree' in r.stderr or 'void clSVMFree' in r.stderr, f'{what}: unclear error {r.stderr!r}')


CASES = {'golden': case_golden, 'table': case_table, 'slots': case_slots}

if __name__ == '__main__':
    if len(sys.argv) != 3 or sys.argv[2] not in CASES:
        sys.exit(f'usage: {sys.argv[0]} SRC_DIR {"|".join(CASES)}')
    CASES[sys.argv[2]]()
    print(f'ok {sys.argv[2]}')
