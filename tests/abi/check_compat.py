#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""UPTI 0.1's names are declared by <upti/compat.h> and by no other header.

  check_compat.py CC INCLUDE_DIR LIBRARY_DIR WORK_DIR

- compat.h declares exactly the names of NAMES (four enumerator macros,
  five functions);
- each of them, used in a file that includes every other public header
  (<upti/upti.h>, the runtime headers, <uptx/uptx.h>…), does not compile:
  upti.h no longer declares it;
- a program that includes <upti/upti.h> and <upti/compat.h>, linked
  against libupti, gets the values and answers of 0.1: the _MAX macros are
  11, 6, 3 and 11, and each function gives what its 1.0 name gives.
"""
import glob
import os
import re
import subprocess
import sys

CC, INCLUDE, LIBDIR, WORK = sys.argv[1:5]
# The build's sanitizers (UPTI_SANITIZE, "" when none): a program linked against a
# sanitized libupti is built with them too.
SANITIZE = ["-fsanitize=" + sys.argv[5], "-fno-omit-frame-pointer"] if len(sys.argv) > 5 and sys.argv[5] else []
INCLUDE = os.path.abspath(INCLUDE)
NAMES = {
    "UPTI_CB_DOMAIN_MAX": "macro", "UPTI_CB_PHASE_MAX": "macro",
    "UPTI_INTERNAL_EVENT_TYPE_MAX": "macro", "UPTI_GPU_OPERATION_KIND_MAX": "macro",
    "upti_get_status_string": "function", "upti_callback_domain_name": "function",
    "upti_callback_phase_name": "function", "upti_gpu_operation_kind_name": "function",
    "upti_create_buffer": "function",
}
failures = []


def compile_c(name, text, link=False):
    c = os.path.join(WORK, name + ".c")
    with open(c, "w") as f:
        f.write(text)
    out = os.path.join(WORK, name)
    cmd = [CC, "-std=c11", "-D_GNU_SOURCE", "-Wall", "-Werror", "-I", INCLUDE, c, "-o", out]
    if link:
        cmd += SANITIZE + ["-L", LIBDIR, "-Wl,-rpath," + LIBDIR, "-lupti"]
    else:
        cmd[1:1] = ["-c"]
        cmd[-1] = out + ".o"
    r = subprocess.run(cmd, capture_output=True, text=True)
    return r.returncode == 0, r.stderr, out


os.makedirs(WORK, exist_ok=True)
compat_path = os.path.join(INCLUDE, "upti", "compat.h")
if not os.path.exists(compat_path):
    print(f"FAIL: {compat_path} does not exist")
    sys.exit(1)
text = re.sub(r"/\*.*?\*/", "", open(compat_path).read(), flags=re.S)
declared = {n: "macro" for n in re.findall(r"#define (\w+) ", text) if n != "UPTI_COMPAT_H"}
declared.update({n: "function" for n in re.findall(r"UPTI_API [^;(]*?\b(\w+)\(", text)})
if declared != NAMES:
    failures.append(f"compat.h declares {sorted(declared)}, expected {sorted(NAMES)}")

others = sorted(os.path.relpath(h, INCLUDE) for h in glob.glob(os.path.join(INCLUDE, "*", "*.h"))
                if not h.endswith("/compat.h"))
prelude = "".join(f"#include <{h}>\n" for h in others if not h.endswith(("opencl.h", "vulkan.h")))
for name, what in sorted(NAMES.items()):
    use = f"long long use(void) {{ return (long long){name}; }}\n" if what == "macro" else \
        f"void *use(void) {{ return (void *)&{name}; }}\n"
    ok, err, _ = compile_c("without_" + name, prelude + use)
    if ok:
        failures.append(f"{name}: declared without <upti/compat.h> (by one of {len(others)} headers)")
    elif "undeclared" not in err:
        failures.append(f"{name}: the file without compat.h failed for another reason:\n{err}")
    ok, err, _ = compile_c("with_" + name, prelude + "#include <upti/compat.h>\n" + use)
    if not ok:
        failures.append(f"{name}: not declared by <upti/compat.h>:\n{err}")

program = r"""#include <upti/upti.h>
#include <upti/compat.h>
#include <stdio.h>
#include <string.h>
static int same(const char *a, const char *b) { return a == b || (a && b && strcmp(a, b) == 0); }
int main(void)
{
    int differ = 0;
    for (int s = -1; s <= UPTI_STATUS_LAST; s++)
        differ += !same(upti_get_status_string((upti_status_t)s), upti_get_status_name((upti_status_t)s));
    for (int d = -1; d <= UPTI_CB_DOMAIN_MAX; d++)
        differ += !same(upti_callback_domain_name((upti_callback_domain_t)d),
                        upti_get_callback_domain_name((upti_callback_domain_t)d));
    for (int p = -1; p <= UPTI_CB_PHASE_MAX; p++)
        differ += !same(upti_callback_phase_name((upti_callback_phase_kind_t)p),
                        upti_get_callback_phase_kind_name((upti_callback_phase_kind_t)p));
    for (int k = -1; k <= UPTI_GPU_OPERATION_KIND_MAX; k++)
        differ += !same(upti_gpu_operation_kind_name((upti_gpu_operation_kind_t)k),
                        upti_get_gpu_operation_kind_name((upti_gpu_operation_kind_t)k));
    upti_context_id_t ctx = {0};
    upti_buffer_id_t buffer;
    printf("max %d %d %d %d; status %s; domain %s; phase %s; kind %s; create_buffer %s; differ %d\n",
           UPTI_CB_DOMAIN_MAX, UPTI_CB_PHASE_MAX, UPTI_INTERNAL_EVENT_TYPE_MAX,
           UPTI_GPU_OPERATION_KIND_MAX, upti_get_status_string(UPTI_STATUS_ERROR_DEADLOCK),
           upti_callback_domain_name(UPTI_CB_DOMAIN_DRIVER_API),
           upti_callback_phase_name(UPTI_CB_PHASE_API_EXIT),
           upti_gpu_operation_kind_name(UPTI_GPU_OPERATION_KIND_KERNEL),
           upti_get_status_name(upti_create_buffer(ctx, 4096, 0, UPTI_BUFFER_POLICY_LOSSLESS, NULL,
                                                   NULL, &buffer)),
           differ);
    return 0;
}
"""
WANT = ("max 11 6 3 11; status UPTI_STATUS_ERROR_DEADLOCK; domain DRIVER_API; phase API_EXIT; "
        "kind KERNEL; create_buffer UPTI_STATUS_ERROR_CONFIGURATION_LOCKED; differ 0")
ok, err, exe = compile_c("compat_program", program, link=True)
if not ok:
    failures.append(f"a program with <upti/compat.h> does not build:\n{err}")
else:
    got = subprocess.run([exe], capture_output=True, text=True).stdout.strip()
    if got != WANT:
        failures.append(f"the program printed '{got}', expected '{WANT}'")
    else:
        print(got)

for f in failures:
    print("FAIL:", f)
if not failures:
    print(f"compat.h: {len(NAMES)} names, none declared by the {len(others)} other headers")
sys.exit(1 if failures else 0)
