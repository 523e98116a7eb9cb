#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Generates UPTI's Vulkan layer code from the Vulkan registry (vk.xml).

usage: generate.py vk.xml vulkan_operations.txt OUT_HEADER OUT_WRAPPERS_C OUT_KIND_INFO_C
       generate.py --operations vk.xml vulkan_operations.txt   (the table, new commands appended)

Which commands: every command that a core version (the <feature> elements)
or a supported, non-platform extension requires, aliases included (each
name is an operation of its own: a program may call either). Extensions of
a window-system platform (xlib, wayland, win32, ...) and provisional ones
need headers of their own and are left out: the layer hands those names
through untouched.

Operation ids: vulkan_operations.txt (committed) gives each traced command
its id, fixed whatever vk.xml the build machine has: UPTI_VULKAN_API_* are
numbered from it alone, and a command of vk.xml it does not list is not
traced (handed through, like the platform ones). A command it lists that
vk.xml lacks fails the build: the registry is older than the table.

Outputs
  vulkan_api.h       public: operation enum, the dispatch table type, argument
                     and return-value unions, the VULKAN_API callback payload
                     (installed as <upti/vulkan_api.h>)
  vulkan_wrappers.c  the layer's wrapper, slow path and trampoline per command
                     (compiled into libupti-vulkan.so, includes layer.h)
  vulkan_kind_info.c operation names (compiled into libupti.so)
"""
import os
import re
import sys
import xml.etree.ElementTree as ET

# The shared part lies in src/names; a build writes no bytecode into the source tree.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
sys.dont_write_bytecode = True
from generate_common import gen_header_end, write_outputs

# --- special cases ---------------------------------------------------------

# Handled by hand in layer.c, never wrapped: the loader's interface and the
# pre-instance commands (the loader answers those itself).
NOT_WRAPPED = {
    'vkGetInstanceProcAddr', 'vkGetDeviceProcAddr', 'vkEnumerateInstanceVersion',
    'vkEnumerateInstanceExtensionProperties', 'vkEnumerateInstanceLayerProperties',
}

# Traced like the others, but the call into the next layer goes through a
# hand-written uvk_impl_<name>() (layer.c): chain info, dispatch tables, the
# layer's own answers about itself.
IMPL = {
    'vkCreateInstance', 'vkDestroyInstance', 'vkCreateDevice', 'vkDestroyDevice',
    'vkEnumerateDeviceExtensionProperties', 'vkEnumerateDeviceLayerProperties',
}

# The call into the next layer goes through uvk_dt_<name>(next, ...) (the files devtime.h lists),
# traced or not: dispatches timed with the layer's queries, submissions,
# host synchronisation, command buffers and pipelines followed.
DEVTIME = {
    'vkCreateComputePipelines', 'vkDestroyPipeline', 'vkAllocateCommandBuffers', 'vkFreeCommandBuffers',
    'vkCreateCommandPool', 'vkDestroyCommandPool', 'vkBeginCommandBuffer', 'vkEndCommandBuffer', 'vkCmdBindPipeline', 'vkCmdDispatch',
    'vkCmdDispatchBase', 'vkCmdDispatchBaseKHR', 'vkCmdDispatchIndirect', 'vkQueueSubmit',
    'vkWaitForFences', 'vkGetFenceStatus', 'vkQueueWaitIdle', 'vkDeviceWaitIdle', 'vkResetFences',
    'vkDestroyFence',
    'vkCmdCopyBuffer', 'vkCmdCopyBuffer2', 'vkCmdCopyBuffer2KHR', 'vkCmdFillBuffer', 'vkCmdUpdateBuffer',
    'vkCmdCopyImage', 'vkCmdCopyBufferToImage', 'vkCmdCopyImageToBuffer', 'vkCmdPipelineBarrier',
    'vkAllocateMemory', 'vkFreeMemory',  # memory.c
    'vkQueueSubmit2', 'vkQueueSubmit2KHR', 'vkCmdExecuteCommands',
    'vkCreateShaderModule', 'vkDestroyShaderModule', 'vkSetDebugUtilsObjectNameEXT',  # pipelines.c
    'vkCmdBeginDebugUtilsLabelEXT', 'vkCmdEndDebugUtilsLabelEXT',  # labels.c
    'vkQueueBeginDebugUtilsLabelEXT', 'vkQueueEndDebugUtilsLabelEXT',
    'vkCmdBeginRenderPass', 'vkCmdBeginRenderPass2', 'vkCmdBeginRenderPass2KHR', 'vkCmdBeginRendering',
    'vkCmdBeginRenderingKHR', 'vkCmdEndRenderPass', 'vkCmdEndRenderPass2', 'vkCmdEndRenderPass2KHR',
    'vkCmdEndRendering', 'vkCmdEndRenderingKHR',
    'vkCreateImage', 'vkDestroyImage',  # images.c
    'vkCmdCopyImage2', 'vkCmdCopyImage2KHR', 'vkCmdCopyBufferToImage2', 'vkCmdCopyBufferToImage2KHR',
    'vkCmdCopyImageToBuffer2', 'vkCmdCopyImageToBuffer2KHR',
    # layer.c: the devices the program enumerates become agents
    'vkEnumeratePhysicalDevices', 'vkEnumeratePhysicalDeviceGroups', 'vkEnumeratePhysicalDeviceGroupsKHR',
}

# Of DEVTIME, those defined static inline in devtime.h, which the wrappers
# include: no call between a wrapper and the layer's test of its plans.
INLINE_DEVTIME = {'vkCmdDispatch'}

# vkCmd* that only set state (no work on the device): recorded between two
# operations the layer times, they let the second share the first's end
# timestamp on a CPU device (command_buffers.c). Every other vkCmd* not in
# DEVTIME counts as untimed device work (uvk_cmd_device_work).
STATE_ONLY = {
    'vkCmdBindDescriptorSets', 'vkCmdPushConstants', 'vkCmdPushDescriptorSetKHR',
    'vkCmdPushDescriptorSetWithTemplateKHR', 'vkCmdBindVertexBuffers', 'vkCmdBindIndexBuffer',
}

INSTANCE_HANDLES = ('VkInstance', 'VkPhysicalDevice')
DEVICE_HANDLES = ('VkDevice', 'VkQueue', 'VkCommandBuffer')

# --- parsing ---------------------------------------------------------------


class Param:
    def __init__(self, elem):
        self.name = elem.find('name').text
        text = ''.join(elem.itertext()).strip()
        before, after = text.rsplit(self.name, 1)
        ctype = ' '.join(before.replace('*', ' * ').split())
        # An array parameter (float blendConstants[4]) is a pointer in C.
        if '[' in after:
            ctype += ' *'
        self.type = ctype.replace('* *', '**').strip()
        self.base = elem.find('type').text

    def decl(self):
        sep = '' if self.type.endswith('*') else ' '
        return f'{self.type}{sep}{self.name}'


class Command:
    def __init__(self, name, ret, params):
        self.name = name
        self.ret = ret
        self.params = params
        self.op = f'UPTI_VULKAN_API_{name}'
        first = params[0].base if params else None
        if first in DEVICE_HANDLES:
            self.level = 'device'
        elif first in INSTANCE_HANDLES:
            self.level = 'instance'
        else:
            self.level = 'global'

    def proto(self, fname, static=True):
        ps = ', '.join(p.decl() for p in self.params) or 'void'
        return f'{"static " if static else ""}VKAPI_ATTR {self.ret} VKAPI_CALL {fname}({ps})'

    def argnames(self):
        return ', '.join(p.name for p in self.params)

    def retfield(self):
        return None if self.ret == 'void' else f'{self.ret}_retval'


def load(path):
    root = ET.parse(path).getroot()
    defs, aliases = {}, {}
    for c in root.find('commands').findall('command'):
        if c.get('alias'):
            aliases[c.get('name')] = c.get('alias')
            continue
        proto = c.find('proto')
        name = proto.find('name').text
        ret = proto.find('type').text
        defs[name] = (ret, [Param(p) for p in c.findall('param') if p.get('api') in (None, 'vulkan')])
    wanted = []

    def want(req):
        for r in req.findall('require'):
            for c in r.findall('command'):
                if c.get('name') not in wanted:
                    wanted.append(c.get('name'))

    for f in root.findall('feature'):
        if 'vulkan' in (f.get('api') or 'vulkan').split(','):
            want(f)
    for e in root.find('extensions').findall('extension'):
        if 'vulkan' not in (e.get('supported') or '').split(',') or e.get('platform'):
            continue
        want(e)
    cmds = []
    for name in wanted:
        target = name
        while target in aliases:
            target = aliases[target]
        ret, params = defs[target]
        if name in NOT_WRAPPED:
            continue
        cmds.append(Command(name, ret, params))
    return root, cmds


def read_operations(path):
    """The committed table: [(id, name)] in id order, ids 1, 2, 3... each once."""
    ops = []
    for line in open(path):
        line = line.split('#', 1)[0].split()
        if not line:
            continue
        if len(line) != 2 or not line[0].isdigit() or int(line[0]) != len(ops) + 1:
            sys.exit(f'generate.py: {path}: "{" ".join(line)}": expected "{len(ops) + 1} NAME" '
                     '(ids in order, from 1, each once)')
        ops.append((int(line[0]), line[1]))
    return ops


def pin_ids(cmds, ops, version):
    """The commands of the table, in id order (each c.op_id set); those of vk.xml it lacks are left out."""
    by_name = {c.name: c for c in cmds}
    pinned = []
    for op_id, name in ops:
        c = by_name.get(name)
        if c is None:
            sys.exit(f'generate.py: vk.xml (VK_HEADER_VERSION {version}) lacks {name}, operation {op_id} '
                     'of src/names/vulkan/vulkan_operations.txt: build with a newer Vulkan registry')
        c.op_id = op_id
        pinned.append(c)
    return pinned


def gen_operations(ops, cmds):
    """The table as committed, with vk.xml's commands it lacks appended (next ids, registry order)."""
    known = {name for _, name in ops}
    new = [c.name for c in cmds if c.name not in known]
    return ''.join(f'{i} {n}\n' for i, n in list(ops) + [(len(ops) + 1 + k, n) for k, n in enumerate(new)])


def registry_version(root):
    for t in root.find('types').findall('type'):
        n = t.find('name')
        if n is not None and n.text == 'VK_HEADER_VERSION':
            return int(''.join(t.itertext()).split()[-1])
    return 0


GEN_NOTE = '/* generated — do not edit. Made by src/names/vulkan/generate.py from the Vulkan registry (vk.xml). */\n'

# --- vulkan_api.h ----------------------------------------------------------


def gen_header(cmds, version):
    o = [GEN_NOTE, '#ifndef UPTI_VULKAN_API_H\n#define UPTI_VULKAN_API_H\n\n',
         '#include <upti/types.h>\n\n#include <vulkan/vulkan_core.h>\n\n',
         'UPTI_EXTERN_C_BEGIN\n\n',
         f'/** VK_HEADER_VERSION of the registry these declarations come from. */\n'
         f'#define UPTI_VULKAN_REGISTRY_VERSION {version}\n\n',
         '/** Operations of VULKAN_API: one per traced command, ids fixed by src/program/vulkan/vulkan_operations.txt. */\n',
         'typedef enum upti_vulkan_api_operation_t {\n    UPTI_VULKAN_API_NONE = 0,\n']
    for c in cmds:
        o.append(f'    {c.op} = {c.op_id},\n')
    o.append('    UPTI_VULKAN_API_LAST\n} upti_vulkan_api_operation_t;\n\n')
    o.append('/**\n * The layer\'s table (registered with UPTI as "vulkan"): one entry per\n'
             ' * command, in operation order. What the program calls through the layer\n'
             ' * is the entry found here at the time of the call.\n */\n')
    o.append('typedef struct upti_vulkan_dispatch_t {\n')
    for c in cmds:
        o.append(f'    PFN_{c.name} {c.name};\n')
    o.append('} upti_vulkan_dispatch_t;\n\n')
    o.append(gen_header_end(cmds, 'vulkan',
                            '    /** At EXIT, the VkResult a call returned, as its API record\'s result\n'
                            '        (buffer_tracing.h); UPTI_API_RESULT_NONE at ENTER and for calls that\n'
                            '        return no VkResult. Since UPTI 0.2. */\n'))
    return ''.join(o)

# --- vulkan_wrappers.c -----------------------------------------------------


def next_table(c):
    if c.level == 'device':
        return f'uvk_device_table({c.params[0].name})'
    if c.level == 'instance':
        return f'uvk_instance_table({c.params[0].name})'
    return None


def call_expr(c):
    if c.name in IMPL:
        return f'uvk_impl_{c.name}({c.argnames()})'
    if c.name in DEVTIME:
        return f'uvk_dt_{c.name}(n, {c.argnames()})'
    return f'n->{c.name}({c.argnames()})'


def gen_command(c):
    o = []
    ps = ', '.join(['const upti_operation_plan_t *p', 'const upti_vulkan_dispatch_t *n'] +
                   [x.decl() for x in c.params])
    # Slow path: traced.
    o.append(f'static __attribute__((noinline)) {c.ret} s_{c.name}({ps})\n{{\n')
    # The callback payload, filled where a callback reads it: a call traced by buffers only
    # stores none of it.
    o.append('    upti_callback_tracing_vulkan_api_data_t payload;\n'
             '    if (upti_runtime_plan_has_callbacks(p)) {\n'
             '        payload.size = sizeof payload;\n'
             '        payload.result = UPTI_API_RESULT_NONE;\n')
    for p in c.params:
        o.append(f'        payload.args.{c.name}.{p.name} = {p.name};\n')
    o.append('    }\n')
    o.append('    upti_runtime_call_t call;\n')
    o.append(f'    upti_runtime_call_enter(&call, p, UPTI_TRACING_KIND_VULKAN_API, {c.op}, &payload);\n')
    if c.name in IMPL:
        o.append('    (void)n;\n')
    if c.ret == 'void':
        o.append(f'    {call_expr(c)};\n')
    else:
        o.append(f'    {c.ret} r = {call_expr(c)};\n    payload.retval.{c.retfield()} = r;\n')
    # A VkResult is the call's result in its API records and EXIT callbacks; the
    # other return types (addresses, counts, functions) are no status: none.
    if c.ret == 'VkResult':
        o.append('    payload.result = r;\n    upti_runtime_call_exit_result(&call, r);\n')
    else:
        o.append('    upti_runtime_call_exit(&call);\n')
    if c.ret != 'void':
        o.append('    return r;\n')
    o.append('}\n\n')
    # Wrapper: one plan load and one branch when nothing is traced.
    nt = next_table(c)
    ret = '' if c.ret == 'void' else 'return '
    # A vkCmd* of the newest device (the common case) finds its table without a call (no
    # registers saved for one); other handles go to m_<name>, the same wrapper with the
    # full look-up.
    split = c.name.startswith('vkCmd') and c.level == 'device'
    for fname, full in ([(f'm_{c.name}', True), (f'w_{c.name}', False)] if split else [(f'w_{c.name}', True)]):
        if fname.startswith('m_'):
            o.append('static __attribute__((noinline)) ' + c.proto(fname)[len('static '):] + '\n{\n')
        else:
            o.append(c.proto(fname) + '\n{\n')
        if c.name == 'vkCreateInstance':
            o.append('    uvk_ensure_registered();\n')
        if full:
            o.append(f'    const upti_vulkan_dispatch_t *n = {nt if nt else "NULL"};\n')
        else:
            o.append(f'    const upti_vulkan_dispatch_t *n = uvk_object_table_newest({c.params[0].name});\n')
            o.append(f'    if (__builtin_expect(n == NULL, 0))\n        {ret}m_{c.name}({c.argnames()});\n')
            if c.ret == 'void':
                o[-1] = f'    if (__builtin_expect(n == NULL, 0)) {{\n        m_{c.name}({c.argnames()});\n        return;\n    }}\n'
        gen_wrapper_rest(o, c)
    # Trampoline: what vk*GetProcAddr hands out; jumps through the registered table.
    o.append(c.proto(f't_{c.name}') + f'\n{{\n    {ret}uvk_registered.{c.name}({c.argnames()});\n}}\n\n')
    return ''.join(o)


def gen_wrapper_rest(o, c):
    if c.name.startswith('vkCmd') and c.name not in DEVTIME and c.name not in STATE_ONLY:
        o.append(f'    uvk_cmd_device_work({c.params[0].name});\n')
    o.append(f'    const upti_operation_plan_t *p = upti_runtime_plan(uvk_api_plans, {c.op});\n')
    ret = '' if c.ret == 'void' else 'return '
    if c.name in IMPL:
        o.append('    (void)n;\n')
    o.append(f'    if (__builtin_expect(p == NULL, 1)) {{\n        {ret}{call_expr(c)};\n')
    if c.ret == 'void':
        o.append('        return;\n')
    o.append('    }\n')
    args = ', '.join(['p', 'n'] + [x.name for x in c.params])
    o.append(f'    {ret}s_{c.name}({args});\n}}\n\n')


def gen_wrappers(cmds):
    o = [GEN_NOTE, '#include "devtime.h"\n#include "layer.h"\n\n#include <string.h>\n\n']
    for c in cmds:
        if c.name in IMPL:
            o.append(c.proto(f'uvk_impl_{c.name}', static=False) + ';\n')
        if c.name in DEVTIME and c.name not in INLINE_DEVTIME:
            ps = ', '.join(['const upti_vulkan_dispatch_t *n'] + [p.decl() for p in c.params])
            o.append(f'{c.ret} uvk_dt_{c.name}({ps});\n')
    o.append('\n')
    for c in cmds:
        o.append(gen_command(c))
    o.append('const unsigned char uvk_returns_result[UPTI_VULKAN_API_LAST] = {\n')
    for c in cmds:
        if c.ret == 'VkResult':
            o.append(f'    [{c.op}] = 1,\n')
    o.append('};\n\n')
    o.append('void uvk_fill_wrappers(upti_vulkan_dispatch_t *t)\n{\n')
    for c in cmds:
        o.append(f'    t->{c.name} = w_{c.name};\n')
    o.append('}\n\n')
    # Name lookup: a sorted table, searched by bisection.
    o.append('static const uvk_command_t g_commands[] = {\n')
    for c in sorted(cmds, key=lambda c: c.name):
        lvl = {'global': 'UVK_GLOBAL', 'instance': 'UVK_INSTANCE', 'device': 'UVK_DEVICE'}[c.level]
        o.append(f'    {{"{c.name}", {c.op}, {lvl}, offsetof(upti_vulkan_dispatch_t, {c.name}), '
                 f'(PFN_vkVoidFunction)t_{c.name}}},\n')
    o.append('};\n\n')
    o.append('const uvk_command_t *uvk_command_find(const char *name)\n{\n'
             '    size_t lo = 0, hi = sizeof g_commands / sizeof g_commands[0];\n'
             '    while (lo < hi) {\n'
             '        size_t mid = (lo + hi) / 2;\n'
             '        int cmp = strcmp(name, g_commands[mid].name);\n'
             '        if (cmp == 0)\n            return &g_commands[mid];\n'
             '        if (cmp < 0)\n            hi = mid;\n        else\n            lo = mid + 1;\n'
             '    }\n    return NULL;\n}\n\n')
    o.append('const uvk_command_t *uvk_command_at(size_t i)\n{\n'
             '    return i < sizeof g_commands / sizeof g_commands[0] ? &g_commands[i] : NULL;\n}\n')
    return ''.join(o)

# --- vulkan_kind_info.c ----------------------------------------------------


def gen_kind_info(cmds):
    o = [GEN_NOTE, '#include "kind_info.h"\n\n#include <upti/vulkan_api.h>\n\n']
    o.append('static const char *const g_names[] = {\n    "NONE",\n')
    for c in cmds:
        o.append(f'    "{c.name}",\n')
    o.append('};\n\n')
    o.append('const upti_kind_info_t upti_vulkan_api_kind_info = {\n'
             '    "VULKAN_API", UPTI_VULKAN_API_LAST, g_names, NULL,\n};\n')
    return ''.join(o)


def main():
    if len(sys.argv) == 4 and sys.argv[1] == '--operations':
        sys.stdout.write(gen_operations(read_operations(sys.argv[3]), load(sys.argv[2])[1]))
        return
    src, table, out_h, out_w, out_k = sys.argv[1:6]
    root, cmds = load(src)
    cmds = pin_ids(cmds, read_operations(table), registry_version(root))
    names = {c.name for c in cmds}
    for name in IMPL | DEVTIME | STATE_ONLY:
        assert name in names, name
    write_outputs(((out_h, gen_header(cmds, registry_version(root))), (out_w, gen_wrappers(cmds)),
                   (out_k, gen_kind_info(cmds))))


if __name__ == '__main__':
    main()
