#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Unit tests of upti-wrap (src/program/register/upti-wrap), one named case per run:

  test_upti_wrap.py SRC_DIR formats   each argument type gets its print format, its
                                      offsetof and sizeof; status and void functions
                                      their results; a function without arguments no args
  test_upti_wrap.py SRC_DIR refused   descriptions it cannot wrap are refused, naming the
                                      file and line, and write nothing
"""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'common', 'python'))
import upti_test  # noqa: E402

SRC = sys.argv[1]
WRAP = os.path.join(SRC, 'src', 'program', 'register', 'upti-wrap')
fail, check = upti_test.failing()

HEAD = "runtime rt 2\ntable rt_table_t rt_table.h\n"


def wrap(tmp, text):
    desc = os.path.join(tmp, 'rt.api')
    with open(desc, 'w') as fh:
        fh.write(text)
    out_c, out_h = os.path.join(tmp, 'rt_upti.c'), os.path.join(tmp, 'rt_upti.h')
    for f in (out_c, out_h):
        if os.path.exists(f):
            os.remove(f)
    r = subprocess.run([sys.executable, WRAP, desc, out_c, out_h], capture_output=True, text=True)
    c = open(out_c).read() if os.path.exists(out_c) else None
    return r, c


def case_formats():
    with tempfile.TemporaryDirectory() as tmp:
        r, c = wrap(tmp, HEAD + "# a comment\n"
                    "status int rtOpen(const char *path, unsigned long flags, double scale, int8_t level);\n"
                    "void *rtMap(rt_handle_t handle, size_t bytes, void **out)\n"
                    "void rtSync(void);\n")
        check(r.returncode == 0, f'upti-wrap failed: {r.stderr}')
        for want in (
                '{"path", "const char *", offsetof(struct rt_upti_args_rtOpen, path), sizeof(const char *), '
                'UPTI_RUNTIME_ARG_STRING, 0},',
                '{"flags", "unsigned long", offsetof(struct rt_upti_args_rtOpen, flags), sizeof(unsigned long), '
                'UPTI_RUNTIME_ARG_UNSIGNED, 0},',
                '{"scale", "double", offsetof(struct rt_upti_args_rtOpen, scale), sizeof(double), '
                'UPTI_RUNTIME_ARG_FLOAT, 0},',
                '{"level", "int8_t", offsetof(struct rt_upti_args_rtOpen, level), sizeof(int8_t), '
                'UPTI_RUNTIME_ARG_SIGNED, 0},',
                '{"handle", "rt_handle_t", offsetof(struct rt_upti_args_rtMap, handle), sizeof(rt_handle_t), '
                'UPTI_RUNTIME_ARG_POINTER, 0},',
                '{"out", "void **", offsetof(struct rt_upti_args_rtMap, out), sizeof(void **), '
                'UPTI_RUNTIME_ARG_POINTER, 0},',
                # status: the int is the result; a pointer is returned, not a result; void: neither
                'payload.result = (int64_t)ret;',
                '{"rtSync", offsetof(rt_table_t, rtSync), (void *)rt_upti_wrap_rtSync, NULL, 0, 0},',
                '.args = NULL, .result = UPTI_API_RESULT_NONE};',
                '{ rt_upti_next.rtSync(); return; }',
                'return rt_upti_next.rtMap(handle, bytes, out);',
                '.size = sizeof(upti_runtime_api_t), .name = "rt", .version = 2u,',
                '.plans = rt_upti_plans, .next = &rt_upti_next, .num_functions = 3,',
                'static const upti_operation_plan_t *rt_upti_plans[3];',
                'upti_runtime_plan(rt_upti_plans, 2)'):
            check(want in c, f'the wrappers lack: {want}')
        check(c.count('payload.result = (int64_t)ret;') == 1, 'only rtOpen returns a status')


def case_refused():
    cases = [
        ("table rt_table_t rt_table.h\nint f(int a);\n", "needs a 'runtime NAME VERSION'"),
        (HEAD, "declares no function"),
        (HEAD + "int f(int a[4]);\n", ":3: want a C declaration"),
        (HEAD + "int f(void (*cb)(int));\n", ":3: want a C declaration"),
        (HEAD + "int f(const char *fmt, ...);\n", ":3: want a C declaration"),
        (HEAD + "status void f(int a);\n", ":3: a 'status' function returns a value"),
        (HEAD + "int f(int a);\nint f(int b);\n", ":4: f is declared twice"),
        (HEAD + "int f(int);\n", ":3: cannot read an argument 'int'"),
        ("runtime rt x\n", ":1: want: runtime NAME VERSION"),
    ]
    with tempfile.TemporaryDirectory() as tmp:
        for text, said in cases:
            r, c = wrap(tmp, text)
            check(r.returncode != 0, f'{text!r} was not refused')
            check(r.stderr.startswith('upti-wrap: ') and said in r.stderr,
                  f'{text!r}: said {r.stderr!r}, not {said!r}')
            check(c is None, f'{text!r}: wrote wrappers')


CASES = {'formats': case_formats, 'refused': case_refused}

if __name__ == '__main__':
    if len(sys.argv) != 3 or sys.argv[2] not in CASES:
        sys.exit(f'usage: {sys.argv[0]} SRC_DIR {"|".join(CASES)}')
    try:
        CASES[sys.argv[2]]()
    except upti_test.Fail as e:
        fail(str(e))
    print(f'ok {sys.argv[2]}')
