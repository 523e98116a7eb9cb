#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Generates UPTI's OpenCL layer code from opencl_api.txt.

usage: generate.py [--subset] opencl_api.txt OUT_HEADER OUT_WRAPPERS_C OUT_KIND_INFO_C OUT_IMPL_H
       generate.py --operations opencl_api.txt    (prints the operation list, see below)

Outputs
  opencl_api.h      public: operation enum, argument and return-value unions,
                    the OPENCL_API callback payload (installed as <upti/opencl_api.h>)
  opencl_wrappers.c the layer's wrapper and trampoline for each dispatch slot
                    (compiled into libupti-opencl.so, includes layer.h)
  opencl_kind_info.c names and argument printers (compiled into libupti.so)
  opencl_impl.h     prototypes of the hand-written uocl_impl_* functions

Each line of opencl_api.txt names its dispatch slot; the wrappers assert
offsetof(struct _cl_icd_dispatch, <entry>) == slot * sizeof(void *) at compile
time, so a header whose table differs fails the build. Operation ids are
slot + 1 and never change: --operations prints them in the form of the committed
src/names/opencl/opencl_operations.def, which libupti's name table is built from (with
or without OpenCL headers) and which the test unit.opencl_generator.golden compares.

Every special case lives in the tables right below; the rest is uniform.
"""
import os
import re
import sys

# The shared part lies in src/names; a build writes no bytecode into the source tree.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
sys.dont_write_bytecode = True
from generate_common import gen_header_end, write_outputs

# --- special cases ---------------------------------------------------------

# Callback parameter types used by opencl_api.txt (name -> C typedef body).
CALLBACK_TYPEDEFS = {
    'upti_cl_context_notify_fn': 'void (CL_CALLBACK *{})(const char *errinfo, const void *private_info, size_t cb, void *user_data)',
    'upti_cl_program_notify_fn': 'void (CL_CALLBACK *{})(cl_program program, void *user_data)',
    'upti_cl_native_kernel_fn': 'void (CL_CALLBACK *{})(void *args)',
    'upti_cl_event_notify_fn': 'void (CL_CALLBACK *{})(cl_event event, cl_int event_command_status, void *user_data)',
    'upti_cl_mem_notify_fn': 'void (CL_CALLBACK *{})(cl_mem memobj, void *user_data)',
    'upti_cl_svm_free_fn': 'void (CL_CALLBACK *{})(cl_command_queue queue, cl_uint num_svm_pointers, void **svm_pointers, void *user_data)',
    'upti_cl_context_destructor_fn': 'void (CL_CALLBACK *{})(cl_context context, void *user_data)',
}

# Entries that every program calls before it can use a device: the first of
# them registers the layer with UPTI (never inside clInitLayer, see layer.c).
REGISTER_FIRST = {
    'clGetPlatformIDs', 'clGetPlatformInfo', 'clGetDeviceIDs', 'clGetDeviceInfo',
    'clCreateContext', 'clCreateContextFromType', 'clCreateCommandQueue',
    'clCreateCommandQueueWithProperties', 'clGetExtensionFunctionAddress',
    'clGetExtensionFunctionAddressForPlatform',
}

# Entries whose call into the next layer goes through a hand-written
# uocl_impl_<name>() (objects.c): queue properties, event queries, code
# objects, allocations, draining at synchronisation points.
IMPL = {
    'clCreateCommandQueue', 'clCreateCommandQueueWithProperties', 'clGetCommandQueueInfo',
    'clReleaseCommandQueue', 'clFinish', 'clWaitForEvents', 'clGetEventInfo',
    'clGetEventProfilingInfo', 'clCreateKernel', 'clCreateKernelsInProgram', 'clCloneKernel',
    'clReleaseKernel', 'clCreateProgramWithBinary', 'clBuildProgram', 'clLinkProgram',
    'clReleaseProgram', 'clCreateProgramWithSource', 'clCreateProgramWithIL',
    'clCreateProgramWithBuiltInKernels', 'clRetainProgram', 'clRetainKernel', 'clCreateBuffer', 'clCreateBufferWithProperties', 'clCreateSubBuffer',
    'clCreateImage', 'clCreateImage2D', 'clCreateImage3D', 'clCreateImageWithProperties',
    'clCreatePipe', 'clRetainMemObject', 'clReleaseMemObject', 'clSVMAlloc', 'clSVMFree',
    'clEnqueueSVMFree',
    'clGetExtensionFunctionAddress', 'clGetExtensionFunctionAddressForPlatform',
}

H2D, D2H, D2D, NONE = ('UPTI_MEMORY_DIRECTION_HOST_TO_DEVICE', 'UPTI_MEMORY_DIRECTION_DEVICE_TO_HOST',
                       'UPTI_MEMORY_DIRECTION_DEVICE_TO_DEVICE', 'UPTI_MEMORY_DIRECTION_NONE')
VOL = 'region[0] * region[1] * region[2]'

# Device commands: name -> (kind, operation, C statement describing the
# command; `c` is the uocl_cmd_t *, the call's parameters are in scope).
COMMANDS = {
    'clEnqueueNDRangeKernel': ('KERNEL_DISPATCH', 'NDRANGE',
                               'uocl_cmd_kernel(c, kernel, work_dim, global_work_offset, global_work_size, local_work_size);'),
    'clEnqueueTask': ('KERNEL_DISPATCH', 'TASK', 'uocl_cmd_kernel(c, kernel, 1, NULL, NULL, NULL);'),
    'clEnqueueNativeKernel': ('KERNEL_DISPATCH', 'NATIVE', 'uocl_cmd_kernel(c, NULL, 0, NULL, NULL, NULL);'),
    'clEnqueueReadBuffer': ('MEMORY_COPY', 'READ_BUFFER', f'uocl_cmd_copy(c, {D2H}, cb);'),
    'clEnqueueWriteBuffer': ('MEMORY_COPY', 'WRITE_BUFFER', f'uocl_cmd_copy(c, {H2D}, cb);'),
    'clEnqueueCopyBuffer': ('MEMORY_COPY', 'COPY_BUFFER', f'uocl_cmd_copy(c, {D2D}, cb);'),
    'clEnqueueReadBufferRect': ('MEMORY_COPY', 'READ_BUFFER_RECT', f'uocl_cmd_copy(c, {D2H}, {VOL});'),
    'clEnqueueWriteBufferRect': ('MEMORY_COPY', 'WRITE_BUFFER_RECT', f'uocl_cmd_copy(c, {H2D}, {VOL});'),
    'clEnqueueCopyBufferRect': ('MEMORY_COPY', 'COPY_BUFFER_RECT', f'uocl_cmd_copy(c, {D2D}, {VOL});'),
    'clEnqueueReadImage': ('MEMORY_COPY', 'READ_IMAGE', f'uocl_cmd_copy(c, {D2H}, uocl_image_bytes(image, region));'),
    'clEnqueueWriteImage': ('MEMORY_COPY', 'WRITE_IMAGE', f'uocl_cmd_copy(c, {H2D}, uocl_image_bytes(image, region));'),
    'clEnqueueCopyImage': ('MEMORY_COPY', 'COPY_IMAGE', f'uocl_cmd_copy(c, {D2D}, uocl_image_bytes(src_image, region));'),
    'clEnqueueCopyImageToBuffer': ('MEMORY_COPY', 'COPY_IMAGE_TO_BUFFER', f'uocl_cmd_copy(c, {D2D}, uocl_image_bytes(src_image, region));'),
    'clEnqueueCopyBufferToImage': ('MEMORY_COPY', 'COPY_BUFFER_TO_IMAGE', f'uocl_cmd_copy(c, {D2D}, uocl_image_bytes(dst_image, region));'),
    'clEnqueueFillBuffer': ('MEMORY_COPY', 'FILL_BUFFER', f'uocl_cmd_copy(c, {H2D}, cb);'),
    'clEnqueueFillImage': ('MEMORY_COPY', 'FILL_IMAGE', f'uocl_cmd_copy(c, {H2D}, uocl_image_bytes(image, region));'),
    'clEnqueueMapBuffer': ('MEMORY_COPY', 'MAP_BUFFER', f'uocl_cmd_copy(c, {D2H}, cb);'),
    'clEnqueueMapImage': ('MEMORY_COPY', 'MAP_IMAGE', f'uocl_cmd_copy(c, {D2H}, uocl_image_bytes(image, region));'),
    'clEnqueueUnmapMemObject': ('MEMORY_COPY', 'UNMAP', f'uocl_cmd_copy(c, {H2D}, 0);'),
    'clEnqueueMigrateMemObjects': ('MEMORY_COPY', 'MIGRATE', f'uocl_cmd_copy(c, {D2D}, uocl_mems_bytes(num_mem_objects, mem_objects));'),
    'clEnqueueSVMMemcpy': ('MEMORY_COPY', 'SVM_MEMCPY', f'uocl_cmd_copy(c, {D2D}, size);'),
    'clEnqueueSVMMemFill': ('MEMORY_COPY', 'SVM_MEMFILL', f'uocl_cmd_copy(c, {H2D}, size);'),
    'clEnqueueSVMMap': ('MEMORY_COPY', 'SVM_MAP', f'uocl_cmd_copy(c, {D2H}, size);'),
    'clEnqueueSVMUnmap': ('MEMORY_COPY', 'SVM_UNMAP', f'uocl_cmd_copy(c, {H2D}, 0);'),
    'clEnqueueSVMFree': ('MEMORY_COPY', 'SVM_FREE', f'uocl_cmd_copy(c, {NONE}, 0);'),
    'clEnqueueSVMMigrateMem': ('MEMORY_COPY', 'SVM_MIGRATE', f'uocl_cmd_copy(c, {D2D}, uocl_sizes_bytes(num_svm_pointers, sizes));'),
    'clEnqueueMarker': ('MEMORY_COPY', 'MARKER', f'uocl_cmd_copy(c, {NONE}, 0);'),
    'clEnqueueMarkerWithWaitList': ('MEMORY_COPY', 'MARKER', f'uocl_cmd_copy(c, {NONE}, 0);'),
    'clEnqueueBarrierWithWaitList': ('MEMORY_COPY', 'BARRIER', f'uocl_cmd_copy(c, {NONE}, 0);'),
}

# Input arrays printed element by element: parameter -> element count
# (another parameter, candidates in order, or a constant). An array whose
# count is not among the function's parameters prints as an address.
ARRAY_COUNTS = {
    'devices': 'num_devices', 'device_list': 'num_devices', 'event_wait_list': 'num_events_in_wait_list',
    'global_work_offset': 'work_dim', 'global_work_size': 'work_dim', 'local_work_size': 'work_dim',
    'origin': 3, 'region': 3, 'src_origin': 3, 'dst_origin': 3, 'buffer_origin': 3,
    'host_origin': 3, 'mem_objects': ('num_mem_objects', 'num_objects'), 'mem_list': 'num_mem_objects',
    'lengths': ('count', 'num_devices'), 'strings': 'count', 'input_programs': 'num_input_programs',
    'input_headers': 'num_input_headers', 'header_include_names': 'num_input_headers',
    'sizes': 'num_svm_pointers', 'svm_pointers': 'num_svm_pointers', 'binaries': 'num_devices',
    'event_list': 'num_events',
}

# Integer types printed in decimal; other integer typedefs print in hex.
DECIMAL = {'cl_uint', 'cl_int', 'size_t', 'cl_ulong', 'cl_long', 'unsigned int', 'int',
           'cl_bool', 'cl_GLuint', 'cl_GLint', 'cl_ushort', 'cl_short'}
HANDLES = {'cl_platform_id', 'cl_device_id', 'cl_context', 'cl_command_queue', 'cl_mem',
           'cl_program', 'cl_kernel', 'cl_event', 'cl_sampler', 'cl_GLsync', 'CLeglDisplayKHR',
           'CLeglImageKHR', 'CLeglSyncKHR'}

# --- parsing ---------------------------------------------------------------


class Param:
    def __init__(self, text):
        m = re.match(r'^(.*?)(\w+)$', text.strip())
        self.type = ' '.join(m.group(1).replace('*', ' * ').split()).replace('* *', '**')
        self.type = self.type.replace(' *', '*').replace('*', ' *').replace('* *', '**')
        self.type = re.sub(r'\s+\*', ' *', self.type).strip()
        self.name = m.group(2)
        self.stars = self.type.count('*')
        self.base = self.type.replace('*', '').replace('const', '').strip()
        self.base = ' '.join(self.base.split())
        self.const = self.type.startswith('const')

    def decl(self, name=None):
        name = self.name if name is None else name
        if self.type in CALLBACK_TYPEDEFS or not self.type.endswith('*'):
            return f'{self.type} {name}'
        return f'{self.type}{name}'


class Func:
    def __init__(self, line, index):
        m = re.match(r'^(\d+)\s+(.*)$', line)
        if m is None:
            sys.exit(f'generate.py: "{line[:60]}": a line must start with its dispatch slot')
        self.slot = int(m.group(1))
        if self.slot != index:
            sys.exit(f'generate.py: {line.split("(")[0]}: slot {self.slot}, expected {index} '
                     '(entries are listed in slot order, each slot once)')
        line = m.group(2)
        m = re.match(r'^(.*?)\b(cl\w+)\((.*)\)$', line)
        self.ret = ' '.join(m.group(1).split()).replace(' *', '*').replace('*', ' *')
        self.ret = self.ret.strip()
        self.name = m.group(2)
        self.index = index
        ptext = m.group(3).strip()
        self.params = [] if ptext in ('', 'void') else [Param(p) for p in ptext.split(',')]
        self.op = f'UPTI_OPENCL_API_{self.name}'
        self.op_id = self.slot + 1  # 0 is UPTI_OPENCL_API_NONE

    def proto(self, fname):
        ps = ', '.join(p.decl() for p in self.params) or 'void'
        return f'static {self.ret} CL_API_CALL {fname}({ps})'

    def argnames(self):
        return ', '.join(p.name for p in self.params)

    def retfield(self):
        return retval_member(self.ret)


def retval_member(ret):
    if ret == 'void':
        return None
    if ret == 'void *':
        return 'ptr_retval'
    return f'{ret}_retval'


def load(path):
    funcs = []
    for line in open(path):
        line = line.strip()
        if not line or line.startswith('#'):
            continue
        funcs.append(Func(line, len(funcs)))
    return funcs


GEN_NOTE = '/* generated — do not edit. Made by src/names/opencl/generate.py from src/program/opencl/opencl_api.txt. */\n'

# --- opencl_api.h ----------------------------------------------------------


def gen_header(funcs):
    o = [GEN_NOTE, '#ifndef UPTI_OPENCL_API_H\n#define UPTI_OPENCL_API_H\n\n',
         '#include <upti/types.h>\n\n',
         '#ifndef CL_TARGET_OPENCL_VERSION\n#define CL_TARGET_OPENCL_VERSION 300\n#endif\n',
         '#include <CL/cl.h>\n#include <CL/cl_egl.h>\n#include <CL/cl_ext.h>\n#include <CL/cl_gl.h>\n\n',
         'UPTI_EXTERN_C_BEGIN\n\n/* Callback parameter types of the OpenCL API. */\n']
    for name, body in CALLBACK_TYPEDEFS.items():
        o.append(f'typedef {body.format(name)};\n')
    o.append('\n/** Operations of OPENCL_API: one per dispatch slot, in slot order. */\n')
    o.append('typedef enum upti_opencl_api_operation_t {\n    UPTI_OPENCL_API_NONE = 0,\n')
    for f in funcs:
        o.append(f'    {f.op} = {f.op_id}, /* slot {f.slot} */\n')
    o.append(f'    UPTI_OPENCL_API_LAST = {len(funcs) + 1}\n}} upti_opencl_api_operation_t;\n\n')
    o.append(gen_header_end(funcs, 'opencl',
                            '    /** At EXIT, what the call returned as its API record\'s result (buffer_tracing.h):\n'
                            '        the cl_int, or the errcode_ret status even where the program passed NULL;\n'
                            '        UPTI_API_RESULT_NONE at ENTER and for calls without a status. Since UPTI 0.2. */\n'))
    return ''.join(o)

# --- opencl_wrappers.c -----------------------------------------------------


def call_expr(f, args=None):
    args = f.argnames() if args is None else args
    # Through the slot's own function type: a few slots (D3D, DX9) are void * on Linux.
    target = f'uocl_impl_{f.name}' if f.name in IMPL else f'((uocl_fn_{f.name})uocl_next.{f.name})'
    return f'{target}({args})'


def gen_plain_wrapper(f):
    o = [f.proto(f'w_{f.name}') + '\n{\n']
    if f.name in REGISTER_FIRST:
        o.append('    uocl_ensure_registered();\n')
    o.append(f'    const upti_operation_plan_t *p = upti_runtime_plan(uocl_api_plans, {f.op});\n')
    slow = f's_{f.name}({f.argnames()}{", " if f.params else ""}p)'
    if f.ret == 'void':
        # Not traced: the next layer only, once (a void call must not fall through to the slow path).
        o.append(f'    if (__builtin_expect(p == NULL, 1)) {{\n        {call_expr(f)};\n        return;\n    }}\n')
        o.append(f'    {slow};\n}}\n\n')
    else:
        o.append(f'    if (__builtin_expect(p == NULL, 1))\n        return {call_expr(f)};\n')
        o.append(f'    return {slow};\n}}\n\n')
    return ''.join(o)


def slow_head(f):
    # The plan last: the wrapper passes the program's arguments on in the registers they
    # came in, and adds p in the next one (or on the stack), with no moves.
    ps = ', '.join([p.decl() for p in f.params] + ['const upti_operation_plan_t *p'])
    o = [f'static __attribute__((noinline)) {f.ret} {("s_" + f.name)}({ps})\n{{\n']
    return o


def fill_payload(f, indent='    ', cond='upti_runtime_plan_has_callbacks(p)'):
    """The callback payload, filled where a callback reads it (a call traced by buffers
    only stores none of it); cond: whether a callback will."""
    o = [f'{indent}upti_callback_tracing_opencl_api_data_t payload;\n',
         f'{indent}if ({cond}) {{\n',
         f'{indent}    payload.size = sizeof payload;\n',
         f'{indent}    payload.result = UPTI_API_RESULT_NONE;\n']
    for p in f.params:
        o.append(f'{indent}    payload.args.{f.name}.{p.name} = {p.name};\n')
    o.append(f'{indent}}}\n')
    return o


def errcode_local(f):
    """A call that returns an object reports its status through errcode_ret: the
    wrapper passes its own where the program passed NULL, so the status is known."""
    if 'errcode_ret' not in [p.name for p in f.params]:
        return []
    return ['    cl_int err_local = CL_SUCCESS;\n',
            '    cl_int *errp = errcode_ret != NULL ? errcode_ret : &err_local;\n']


def call_args(f):
    """The arguments passed on: errcode_ret replaced by errcode_local's errp."""
    return ', '.join('errp' if p.name == 'errcode_ret' else p.name for p in f.params)


def status_expr(f):
    """The status of a call: its cl_int, its errcode_ret (errp), or None (no status)."""
    if f.ret == 'cl_int':
        return 'r'
    if 'errcode_ret' in [p.name for p in f.params]:
        return '*errp'
    return None


def exit_call(f, indent='    '):
    """Ends the traced call with its status as result (API records, EXIT callbacks)."""
    status = status_expr(f)
    if status is None:
        return f'{indent}upti_runtime_call_exit(&call);\n'
    return (f'{indent}payload.result = {status};\n'
            f'{indent}upti_runtime_call_exit_result(&call, payload.result);\n')


def gen_plain_slow(f):
    o = slow_head(f)
    o += fill_payload(f)
    o += errcode_local(f)
    o.append('    upti_runtime_call_t call;\n')
    o.append(f'    upti_runtime_call_enter(&call, p, UPTI_TRACING_KIND_OPENCL_API, {f.op}, &payload);\n')
    if f.ret == 'void':
        o.append(f'    {call_expr(f)};\n')
    else:
        o.append(f'    {f.ret} r = {call_expr(f, call_args(f))};\n')
        o.append(f'    payload.retval.{f.retfield()} = r;\n')
    o.append(exit_call(f))
    if f.ret != 'void':
        o.append('    return r;\n')
    o.append('}\n\n')
    return ''.join(o)


def gen_command_wrapper(f):
    kind, op, _ = COMMANDS[f.name]
    plans = {'KERNEL_DISPATCH': 'uocl_kernel_plans', 'MEMORY_COPY': 'uocl_copy_plans'}[kind]
    dop = f'UPTI_{kind}_{op}'
    o = [f.proto(f'w_{f.name}') + '\n{\n']
    o.append(f'    const upti_operation_plan_t *p = upti_runtime_plan(uocl_api_plans, {f.op});\n')
    o.append(f'    const upti_operation_plan_t *d = upti_runtime_plan({plans}, {dop});\n')
    o.append('    if (__builtin_expect(((uintptr_t)p | (uintptr_t)d) == 0, 1))\n')
    o.append(f'        return {call_expr(f)};\n')
    o.append(f'    return s_{f.name}({f.argnames()}, p, d);\n}}\n\n')
    return ''.join(o)


def gen_command_slow(f):
    kind, op, describe = COMMANDS[f.name]
    dop = f'UPTI_{kind}_{op}'
    ps = ', '.join([x.decl() for x in f.params] +
                   ['const upti_operation_plan_t *p', 'const upti_operation_plan_t *d'])
    o = [f'static __attribute__((noinline)) {f.ret} s_{f.name}({ps})\n{{\n']
    o += fill_payload(f, cond='p != NULL && upti_runtime_plan_has_callbacks(p)')
    o.append('    upti_runtime_call_t call;\n')
    o.append('    if (p != NULL)\n')
    o.append(f'        upti_runtime_call_enter(&call, p, UPTI_TRACING_KIND_OPENCL_API, {f.op}, &payload);\n')
    names = [x.name for x in f.params]
    o += errcode_local(f)
    o.append('    uocl_cmd_t *c = NULL;\n')
    o.append('    cl_event *evp = event;\n')
    o.append('    if (d != NULL) {\n')
    o.append(f'        c = uocl_cmd_begin(p != NULL ? &call : NULL, UPTI_TRACING_KIND_{kind}, {dop}, command_queue, &evp);\n')
    o.append(f'        if (c != NULL) {{\n            {describe}\n        }}\n    }}\n')
    args = ', '.join('evp' if n == 'event' else ('errp' if n == 'errcode_ret' else n) for n in names)
    o.append(f'    {f.ret} r = {call_expr(f, args)};\n')
    status = status_expr(f)
    # Subscribers of GPU_OPERATION_DISPATCHED get the event (subscriber_hooks.c).
    o.append(f'    if (c != NULL && __builtin_expect(uocl_sub_want_events, 0) && {status} == CL_SUCCESS)\n')
    o.append('        uocl_sub_enqueued(*evp);\n')
    o.append('    if (c != NULL)\n')
    o.append(f'        uocl_cmd_end(c, {status});\n')
    o.append('    if (p != NULL) {\n')
    o.append(f'        payload.retval.{f.retfield()} = r;\n')
    o.append(exit_call(f, '        ') + '    }\n')
    o.append('    return r;\n}\n\n')
    return ''.join(o)


def gen_impl_decls(funcs):
    o = [GEN_NOTE, '/* The hand-written calls into the next layer (objects.c). */\n',
         '#ifndef UPTI_OPENCL_IMPL_H\n#define UPTI_OPENCL_IMPL_H\n\n#include "layer.h"\n\n']
    for f in funcs:
        if f.name in IMPL:
            ps = ', '.join(p.decl() for p in f.params) or 'void'
            o.append(f'{f.ret} uocl_impl_{f.name}({ps});\n')
    o.append('\n#endif\n')
    return ''.join(o)


def gen_wrappers(funcs):
    o = [GEN_NOTE, '#include "layer.h"\n#include "opencl_impl.h"\n#include "subscriber_hooks.h"\n\n#include <stddef.h>\n#include <stdint.h>\n\n']
    o.append('/* The function type of each slot. */\n')
    for f in funcs:
        ps = ', '.join(p.decl() for p in f.params) or 'void'
        o.append(f'typedef {f.ret} (CL_API_CALL *uocl_fn_{f.name})({ps});\n')
    o.append('\n/* Each entry sits in the slot opencl_api.txt names, in the loader\'s own table. */\n')
    for f in funcs:
        o.append(f'_Static_assert(offsetof(struct _cl_icd_dispatch, {f.name}) == {f.slot} * sizeof(void *),\n'
                 f'               "{f.name}: not in dispatch slot {f.slot} of CL/cl_icd.h; fix src/names/opencl/opencl_api.txt");\n')
    o.append('\n')
    for f in funcs:
        if f.name in COMMANDS:
            o.append(gen_command_slow(f))
            o.append(gen_command_wrapper(f))
        else:
            o.append(gen_plain_slow(f))
            o.append(gen_plain_wrapper(f))
    # Trampolines: the loader copies a layer's table when it loads it, so the
    # table it copies holds these; they call whatever the registered table
    # (the one tools may modify) holds now.
    o.append('/* Trampolines: the loader keeps a copy of the table the layer returns, so\n'
             '   that copy points here and each entry jumps through uocl_registered. */\n')
    for f in funcs:
        ret = '' if f.ret == 'void' else 'return '
        o.append(f.proto(f't_{f.name}') +
                 f'\n{{\n    {ret}((uocl_fn_{f.name})uocl_registered.{f.name})({f.argnames()});\n}}\n\n')
    o.append('void uocl_fill_tables(struct _cl_icd_dispatch *wrappers, struct _cl_icd_dispatch *trampolines)\n{\n')
    for f in funcs:
        o.append(f'    *(void **)&wrappers->{f.name} = (void *)w_{f.name};\n')
        o.append(f'    *(void **)&trampolines->{f.name} = (void *)t_{f.name};\n')
    o.append('}\n\n')
    o.append(f'const unsigned uocl_num_entries = {len(funcs)};\n')
    o.append(gen_subscriber_tables(funcs))
    return ''.join(o)


BLOCKING = ('blocking_read', 'blocking_write', 'blocking_map', 'blocking_copy')


def gen_subscriber_tables(funcs):
    """What subscriber_hooks.c needs to know of each call: uocl_api_info[] and uocl_sub_describe()."""
    st = 'upti_opencl_api_args_t'
    o = ['\n/* For subscribers (subscriber_hooks.c): command kind/operation, where its\n'
         '   blocking flag is (the status comes in the payload\'s result). */\n',
         'const uocl_api_info_t uocl_api_info[UPTI_OPENCL_API_LAST] = {\n']
    for f in funcs:
        names = [p.name for p in f.params]
        kind = op = '0'
        if f.name in COMMANDS:
            k, dop, _ = COMMANDS[f.name]
            kind, op = f'UPTI_TRACING_KIND_{k}', f'UPTI_{k}_{dop}'
        blk = next((f'offsetof({st}, {f.name}.{b})' for b in BLOCKING if b in names), '0')
        o.append(f'    [{f.op}] = {{{kind}, {op}, {blk}}},\n')
    o.append('};\n\n')
    o.append('void uocl_sub_describe(uint32_t op, const upti_opencl_api_args_t *a, upti_gpu_op_details_t *d)\n{\n'
             '    switch (op) {\n')
    for f in funcs:
        if f.name not in COMMANDS:
            continue
        _, _, describe = COMMANDS[f.name]
        o.append(f'    case {f.op}: {{\n')
        for p in f.params:
            o.append(f'        {p.decl()} = a->{f.name}.{p.name};\n        (void){p.name};\n')
        if describe.startswith('uocl_cmd_kernel('):
            o.append('        ' + describe.replace('uocl_cmd_kernel(c,', 'uocl_sub_kernel(d,') + '\n')
        else:
            inner = describe[len('uocl_cmd_copy(c, '):-2]
            direction, nbytes = inner.split(', ', 1)
            o.append(f'        d->bytes = {nbytes};\n')
        o.append('        break;\n    }\n')
    o.append('    default:\n        break;\n    }\n}\n')
    return ''.join(o)

# --- opencl_kind_info.c ----------------------------------------------------


def array_count(p, names):
    cands = ARRAY_COUNTS.get(p.name)
    if isinstance(cands, int) or cands is None:
        return cands
    for c in (cands if isinstance(cands, tuple) else (cands,)):
        if c in names:
            return c
    return None


def fmt_of(p, names):
    """How to print a parameter: (format, element type, count)."""
    t, base = p.type, p.base
    if t in CALLBACK_TYPEDEFS or base == 'void':
        return ('UOCL_F_PTR', None, None)
    if p.stars == 0:
        return (scalar_fmt(base, p.name), None, None)
    if base == 'char' and p.stars == 1:
        return ('UOCL_F_STR', None, None)
    count = array_count(p, names)
    if base == 'char' and p.stars == 2:
        return ('UOCL_F_STRARR', None, count) if count else ('UOCL_F_PTR', None, None)
    if p.stars > 1 or base in ('unsigned char',):
        return ('UOCL_F_PTR', None, None)
    if base.endswith('_properties') or base.endswith('_properties_khr') or base.endswith('property_ext') \
            or base == 'cl_device_partition_property':
        return ('UOCL_F_PROPS', base, None)
    efmt = scalar_fmt(base, p.name)
    if count is not None:
        return ('UOCL_F_ARRAY', base, count)
    return ('UOCL_F_DEREF', base, efmt)


def scalar_fmt(base, name):
    if base in HANDLES:
        return 'UOCL_F_HANDLE'
    if name == 'errcode_ret' or name in ('execution_status',):
        return 'UOCL_F_ERROR'
    if base in ('cl_int', 'int', 'cl_long', 'cl_short'):
        return 'UOCL_F_SIGNED'
    if base in DECIMAL:
        return 'UOCL_F_UNSIGNED'
    return 'UOCL_F_HEX'


def gen_kind_info(funcs):
    o = [GEN_NOTE, '#include "kind_info.h"\n#include "opencl_kind_info_impl.h"\n\n#include <stddef.h>\n\n']
    for f in funcs:
        if not f.params:
            continue
        st = f'upti_opencl_api_args_t'
        o.append(f'static const uocl_arg_desc_t a_{f.name}[] = {{\n')
        for p in f.params:
            fmt, elem, extra = fmt_of(p, [x.name for x in f.params])
            member = f'(({st} *)0)->{f.name}.{p.name}'
            off = f'offsetof({st}, {f.name}.{p.name})'
            esize, efmt, cnt_off, cnt_size, cnt_const = '0', 'UOCL_F_NONE', '0', '0', '0'
            if fmt == 'UOCL_F_DEREF':
                esize, efmt = f'sizeof({elem})', extra
            elif fmt == 'UOCL_F_ARRAY':
                esize, efmt = f'sizeof({elem})', scalar_fmt(elem, p.name)
            elif fmt == 'UOCL_F_PROPS':
                esize, efmt = f'sizeof({elem})', 'UOCL_F_HEX'
            if fmt in ('UOCL_F_ARRAY', 'UOCL_F_STRARR'):
                cnt = extra if fmt == 'UOCL_F_STRARR' else extra
                if isinstance(cnt, int):
                    cnt_const = str(cnt)
                else:
                    cnt_off = f'offsetof({st}, {f.name}.{cnt})'
                    cnt_size = f'sizeof((({st} *)0)->{f.name}.{cnt})'
            output = 1 if (p.stars >= 1 and not p.const and p.base != 'void') else 0
            o.append(f'    {{"{p.name}", "{p.type}", {off}, sizeof({member}), {fmt}, {p.stars}, {output}, '
                     f'{esize}, {efmt}, {cnt_off}, {cnt_size}, {cnt_const}}},\n')
        o.append('};\n')
    o.append('\nconst uocl_func_desc_t uocl_func_descs[] = {\n    {NULL, 0},\n')
    for f in funcs:
        if f.params:
            o.append(f'    {{a_{f.name}, {len(f.params)}}},\n')
        else:
            o.append('    {NULL, 0},\n')
    o.append('};\n')
    return ''.join(o)


def gen_operations(funcs):
    """The committed golden list (src/names/opencl/opencl_operations.def)."""
    o = ['/* SPDX-License-Identifier: MIT */\n',
         '/* Operation ids of OPENCL_API, fixed forever: UPTI_OPENCL_OPERATION(id, name).\n',
         ' * Made by `python3 src/names/opencl/generate.py --operations src/names/opencl/opencl_api.txt`;\n',
         ' * the test unit.opencl_generator.golden fails when this file and opencl_api.txt differ.\n',
         ' * libupti names OPENCL_API operations from this list (src/names/names.c), with or\n',
         ' * without OpenCL headers on the build machine. */\n']
    for f in funcs:
        o.append(f'UPTI_OPENCL_OPERATION({f.op_id}, {f.name})\n')
    return ''.join(o)


def main():
    if len(sys.argv) == 3 and sys.argv[1] == '--operations':
        sys.stdout.write(gen_operations(load(sys.argv[2])))
        return
    args = sys.argv[1:]
    # --subset: a table with only some entries (the unit test's); the special
    # cases above need not all be in it.
    subset = args[:1] == ['--subset']
    src, out_h, out_w, out_k, out_i = args[subset:subset + 5]
    funcs = load(src)
    for name in list(REGISTER_FIRST) + list(IMPL) + list(COMMANDS):
        if not subset and not any(f.name == name for f in funcs):
            sys.exit(f'generate.py: {name} has a special case but is not in {src}')
    write_outputs(((out_h, gen_header(funcs)), (out_w, gen_wrappers(funcs)),
                   (out_k, gen_kind_info(funcs)), (out_i, gen_impl_decls(funcs))))


if __name__ == '__main__':
    main()
