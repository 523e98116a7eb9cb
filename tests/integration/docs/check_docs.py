#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The documentation says what the code does.

  check_docs.py SOURCE_DIR CASE [BUILD_DIR [C_COMPILER]]

writing_a_tool_builds_and_runs
    docs/writing-a-tool.md's complete tool is samples/first_tool/mytool.c
    word for word; its build command, run as written in a directory holding
    only that file, builds it against an installed tree (cmake --install of
    BUILD_DIR), and its run command, on the vector-add test program, prints
    the tool's summary with one kernel and no upti: message; on a program
    making 7 marker calls through uptx, and on one making them through NVTX
    (tests/apps/marker_calls.c), it counts exactly 7 marker calls.
callback_models_mapped
    docs/callback-api.md says why there are two callback models and maps
    their phases: its table has one row per value, naming in each column
    the enumerator of upti_callback_phase_t (include/upti/types.h) and of
    upti_callback_phase_kind_t (include/upti/callback.h) that has that
    value, every enumerator of both enums once.
database_metadata_keys
    Every metadata key the code writes (read from the writers' source) is
    listed in docs/database.md's metadata section, and no other key is.
index_lists_every_page
    docs/README.md links every page of docs/, and every sample directory.
no_internal_history
    Docs, samples, the public headers and the README speak to users: no seed numbers, issue
    numbers, CI paths or work sessions.
code_samples_build
    Every ```c block of docs/writing-a-tool.md, docs/callback-api.md and
    docs/integrating-a-runtime.md builds. A block followed by a line
    "(`samples/DIR/FILE.c`)" or "(`src/DIR/FILE.c`)" is an excerpt of that
    file (built, and for samples run, by other tests): each of its lines,
    without trailing comment and semicolon, is found in the file, in order;
    lines that are only "..." or only a comment stand for what is left out.
    Any other block, its "..." lines left out, compiles with C_COMPILER
    -std=gnu11 -Wall -Wextra -Werror (-fsyntax-only; unused things and
    initializers that leave fields out allowed) against include/, at file
    scope or else as the body of a function (void, or int with a final
    return 0), after the public headers and what an HTML
    comment "<!-- compiled after: C DECLARATIONS -->" on the line just before
    the block declares (the names the surrounding text introduced).
"""
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

SRC = os.path.abspath(sys.argv[1])
CASE = sys.argv[2]
BUILD = os.path.abspath(sys.argv[3]) if len(sys.argv) > 3 else None
CC = sys.argv[4] if len(sys.argv) > 4 else "cc"


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def read(rel):
    with open(os.path.join(SRC, rel), encoding="utf-8") as f:
        return f.read()


def blocks(text, lang):
    return re.findall(r"```" + lang + r"\n(.*?)```", text, re.S)


def writing_a_tool_builds_and_runs():
    doc = read("docs/writing-a-tool.md")
    sample = read("samples/first_tool/mytool.c")
    code = [b for b in blocks(doc, "c") if "upti_configure" in b and "int tool_init" in b.replace(
        "static int tool_init", "int tool_init")]
    if not code:
        fail("docs/writing-a-tool.md has no complete tool (a ```c block with upti_configure and tool_init)")
    if code[0] != sample:
        fail("the complete tool in docs/writing-a-tool.md differs from samples/first_tool/mytool.c")
    # The first tool a reader sees uses the 1.0 interface: its buffer made
    # from an options struct, nothing of <upti/compat.h> (UPTI 0.1's names).
    compat_h = re.sub(r"/\*.*?\*/", "", read("include/upti/compat.h"), flags=re.S)
    compat = re.findall(r"#define (UPTI_\w+_MAX) ", compat_h) + \
        re.findall(r"UPTI_API [^;(]*?\b(upti_\w+)\(", compat_h)
    used = sorted(n for n in compat if re.search(r"\b" + n + r"\b", sample))
    if used or "<upti/compat.h>" in sample:
        fail(f"the complete tool uses UPTI 0.1's names of <upti/compat.h>: {used}")
    if "upti_create_buffer_with_options(" not in sample or "UPTI_OPTIONS(upti_buffer_options_t" not in sample:
        fail("the complete tool does not create its buffer with UPTI_OPTIONS and upti_create_buffer_with_options")
    sh = blocks(doc, "sh")
    build_cmd = next((b for b in sh if "mytool.so mytool.c" in b), None)
    run_cmd = next((b for b in sh if "UPTI_TOOL_LIBRARIES=" in b and "./my_opencl_app" in b), None)
    if build_cmd is None or run_cmd is None:
        fail("docs/writing-a-tool.md lacks the build command (mytool.so mytool.c) or the run command")
    for var in ("OPENCL_LAYERS=", "NVTX_INJECTION64_PATH="):
        if var not in run_cmd:
            fail(f"the run command does not set {var[:-1]}")
    for must in ("absolute paths", "priority > 0", "upti run"):
        if must not in doc:
            fail(f"docs/writing-a-tool.md does not say '{must}'")
    vadd = os.path.join(BUILD, "bin", "ocl_vadd")
    with tempfile.TemporaryDirectory() as d:
        prefix = os.path.join(d, "prefix")
        p = subprocess.run(["cmake", "--install", BUILD, "--prefix", prefix], capture_output=True, text=True)
        if p.returncode != 0:
            fail("cmake --install: " + p.stdout + p.stderr)
        pcs = glob.glob(os.path.join(prefix, "**", "pkgconfig", "upti.pc"), recursive=True)
        if len(pcs) != 1:
            fail(f"the installed tree has {len(pcs)} upti.pc files")
        work = os.path.join(d, "work")
        os.mkdir(work)
        shutil.copy(os.path.join(SRC, "samples/first_tool/mytool.c"), work)
        env = {k: v for k, v in os.environ.items()
               if k not in ("UPTI_TOOL_LIBRARIES", "OPENCL_LAYERS", "NVTX_INJECTION64_PATH", "LD_LIBRARY_PATH")}
        env["PKG_CONFIG_PATH"] = os.path.dirname(pcs[0])
        if os.environ.get("LDFLAGS"):
            # Sanitizer builds: the tool is built by the build's compiler, with its runtime.
            build_cmd = re.sub(r"^cc ", CC + " ", build_cmd).rstrip() + " " + os.environ["LDFLAGS"] + "\n"
        print("$ " + build_cmd.strip())
        p = subprocess.run(["sh", "-ec", build_cmd], cwd=work, env=env, capture_output=True, text=True)
        if p.returncode != 0:
            fail("the build command failed: " + p.stdout + p.stderr)
        if not os.path.exists(vadd):
            print("SKIP: no OpenCL test program to run the tool on")
            sys.exit(77)
        os.symlink(vadd, os.path.join(work, "my_opencl_app"))
        env["PWD"] = work
        print("$ " + run_cmd.strip())
        p = subprocess.run(["sh", "-ec", run_cmd], cwd=work, env=env, capture_output=True, text=True,
                           timeout=120)
        print(p.stdout + p.stderr)
        if p.returncode != 0:
            fail(f"the run command exited {p.returncode}")
        if "upti:" in p.stderr:
            fail("the run printed a upti: message")
        if not re.search(r"^mytool: 0 marker calls, [1-9]\d* OpenCL calls, 1 kernels \([1-9]\d* ns on the device\)$",
                         p.stderr, re.M):
            fail("the tool's summary is missing or wrong")
        maps = subprocess.run(["sh", "-ec", "LD_DEBUG=libs " + run_cmd.replace("\\\n", " ")], cwd=work,
                              env=env, capture_output=True, text=True, timeout=120)
        if BUILD + "/lib/" in maps.stderr:
            fail("the run loaded UPTI libraries from the build tree, not the installed one")
        # The marker calls it says it counts, of each runtime: 7 calls (marker_calls.c) each.
        for app in ("marker_calls_uptx", "marker_calls_nvtx"):
            path = os.path.join(BUILD, "bin", app)
            if app == "marker_calls_nvtx" and not os.path.exists(path):
                # Built only where the NVTX v3 headers are (the CUDA toolkit; no Debian
                # package has them), as the nvtx.* tests that skip without them.
                print("no NVTX v3 headers: the NVTX program was not built; its part skipped")
                continue
            if not os.path.exists(path):
                fail(f"no {app} to run the tool on")
            os.remove(os.path.join(work, "my_opencl_app"))
            os.symlink(path, os.path.join(work, "my_opencl_app"))
            p = subprocess.run(["sh", "-ec", run_cmd], cwd=work, env=env, capture_output=True, text=True,
                               timeout=120)
            print(f"{app}: " + p.stdout + p.stderr)
            if p.returncode != 0 or p.stdout != "marker_calls: 7\n" or "upti:" in p.stderr:
                fail(f"{app} under the tool: status {p.returncode}, stdout {p.stdout!r}, stderr {p.stderr!r}")
            if not re.search(r"^mytool: 7 marker calls, 0 OpenCL calls, 0 kernels \(0 ns on the device\)$",
                             p.stderr, re.M):
                fail(f"{app} makes 7 marker calls: the tool's summary is missing or wrong")
    print("PASS")


def enum_values(header, enum):
    """NAME -> value of the enumerators of a typedef'd enum of header."""
    text = re.sub(r"/\*.*?\*/", "", read(header), flags=re.S)
    body = re.search(r"typedef enum " + enum + r"\s*\{(.*?)\}", text, re.S).group(1)
    values, nxt = {}, 0
    for item in [i.strip() for i in body.split(",") if i.strip()]:
        name, _, value = item.partition("=")
        nxt = values[value.strip()] if value.strip() in values else (int(value, 0) if value.strip() else nxt)
        values[name.strip()] = nxt
        nxt += 1
    return values


def callback_models_mapped():
    doc = read("docs/callback-api.md")
    if "## Two callback models" not in doc:
        fail("docs/callback-api.md has no section '## Two callback models'")
    enums = [enum_values("include/upti/types.h", "upti_callback_phase_t"),
             enum_values("include/upti/callback.h", "upti_callback_phase_kind_t")]
    head = "| value | `upti_callback_phase_t` (contexts) | `upti_callback_phase_kind_t` (subscribers) |"
    if head not in doc:
        fail("docs/callback-api.md has no table mapping the two phase enums:\n" + head)
    rows = re.findall(r"^\| (\d+) \|(.*?)\|(.*?)\|$", doc.split(head, 1)[1].split("\n\n", 1)[0], re.M)
    seen = [set(), set()]
    for value, *cells in rows:
        for col, (cell, enum) in enumerate(zip(cells, enums)):
            named = re.findall(r"`(UPTI_\w+)`", cell)
            named = [n for n in named if n in enum]
            want = [n for n, v in enum.items() if v == int(value)]
            if named[:1] != want[:1]:
                fail(f"row {value}, column {col + 1}: names {named[:1]}, the enumerator of value {value} is {want}")
            seen[col].update(named[:1])
    for col, enum in enumerate(enums):
        if seen[col] != set(enum):
            fail(f"column {col + 1} leaves out {sorted(set(enum) - seen[col])}")
    print(f"PASS: {len(rows)} rows map {len(enums[0])} and {len(enums[1])} enumerators")


def metadata_keys_in_code():
    keys = {}
    for f in sorted(glob.glob(os.path.join(SRC, "src", "**", "*.c"), recursive=True)):
        text = open(f, encoding="utf-8").read()
        rel = os.path.relpath(f, SRC)
        # uo_db_set_metadata(db, "key", ...) and any *_metadata*(x, "key", ...) helper
        for m in re.finditer(r"\w*set_metadata\w*\s*\(\s*[^,()]+,\s*\"([a-z_]+)\"", text):
            keys.setdefault(m.group(1), rel)
        # a table of keys: static const char *const metadata_keys[] = {"key", ...}
        for m in re.finditer(r"\bmetadata_keys\s*\[\]\s*=\s*\{(.*?)\}", text, re.S):
            for k in re.findall(r"\"([a-z_]+)\"", m.group(1)):
                keys.setdefault(k, rel)
        # INSERT [OR REPLACE] INTO metadata(key, value) VALUES('key', ...), ('key2', ...)
        for m in re.finditer(r"INTO metadata\s*\(\s*key\s*,\s*value\s*\)\s*VALUES(.*?)(?:;|\"\s*,\s*-1|\)\s*;)", text, re.S):
            for k in re.findall(r"\(\s*'([a-z_]+)'\s*,", m.group(1)):
                keys.setdefault(k, rel)
    return keys


def database_metadata_keys():
    keys = metadata_keys_in_code()
    for must in ("schema_version", "writer", "clock"):
        if must not in keys:
            fail(f"the scan of src/ found no metadata key '{must}': the scan is broken")
    doc = read("docs/database.md")
    m = re.search(r"^## Metadata\n(.*?)(?=^## )", doc, re.S | re.M)
    if not m:
        fail("docs/database.md has no '## Metadata' section")
    documented = set(re.findall(r"^\| `([a-z_]+)` \|", m.group(1), re.M))
    missing = sorted(set(keys) - documented)
    extra = sorted(documented - set(keys))
    if missing:
        fail("metadata keys written but not documented in docs/database.md: " +
             ", ".join(f"{k} ({keys[k]})" for k in missing))
    if extra:
        fail("metadata keys documented but never written: " + ", ".join(extra))
    print(f"PASS: {len(keys)} metadata keys: {', '.join(sorted(keys))}")


def index_lists_every_page():
    index = read("docs/README.md")
    links = set(re.findall(r"\]\(([\w.-]+\.md)\)", index))
    pages = {os.path.basename(p) for p in glob.glob(os.path.join(SRC, "docs", "*.md"))} - {"README.md"}
    missing = sorted(pages - links)
    dead = sorted(links - pages)
    if missing:
        fail("docs/README.md does not link: " + ", ".join(missing))
    if dead:
        fail("docs/README.md links pages that do not exist: " + ", ".join(dead))
    samples = sorted(os.path.basename(os.path.dirname(p))
                     for p in glob.glob(os.path.join(SRC, "samples", "*", "CMakeLists.txt")))
    unlisted = [s for s in samples if f"`samples/{s}`" not in index]
    if unlisted:
        fail("docs/README.md does not list the samples: " + ", ".join(unlisted))
    print(f"PASS: {len(pages)} pages, {len(samples)} samples")


HISTORY = [
    (r"\bseeds? \d+", "a seed number"),
    (r"\bissues? #?\d+", "an issue number"),
    (r"\.ci/", "a CI path"),
    (r"\b(?:this|a|previous|earlier|next|helper|work) session\b", "a work session"),
]


def no_internal_history():
    files = ["README.md"] + [os.path.relpath(p, SRC) for p in
                             glob.glob(os.path.join(SRC, "docs", "*.md")) +
                             glob.glob(os.path.join(SRC, "include", "**", "*.h"), recursive=True) +
                             glob.glob(os.path.join(SRC, "samples", "**", "*"), recursive=True)
                             if os.path.isfile(p)]
    found = []
    for rel in sorted(files):
        for n, line in enumerate(read(rel).splitlines(), 1):
            for pat, what in HISTORY:
                if re.search(pat, line, re.I):
                    found.append(f"{rel}:{n}: {what}: {line.strip()}")
    if found:
        fail("internal history in user docs:\n  " + "\n  ".join(found))
    print(f"PASS: {len(files)} files")


CODE_SAMPLE_DOCS = ["docs/writing-a-tool.md", "docs/callback-api.md", "docs/integrating-a-runtime.md"]
CODE_SAMPLE_PRELUDE = """#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <upti/upti.h>
#include <upti/register.h>
#include <upti/runtime.h>
#include <upti/runtime_callback.h>
#include <upti/runtime_api.h>
#include <uptx/uptx_table.h>
"""
ELIDED_LINE = re.compile(r"^\s*(?:\.\.\.|/\*.*\*/|//.*)\s*$")


def squeeze(text):
    return re.sub(r"\s+", " ", text).strip()


def excerpt_problem(block, rel):
    path = os.path.join(SRC, rel)
    if not os.path.isfile(path):
        return f"cites {rel}, which does not exist"
    text = squeeze(read(rel))
    pos = 0
    for line in block.splitlines():
        if not line.strip() or ELIDED_LINE.match(line):
            continue
        key = squeeze(re.sub(r"\s*(?:/\*.*\*/|//.*)$", "", line)).rstrip(";")
        found = text.find(key, pos)
        if found < 0:
            return f"is cited as an excerpt of {rel}, which has no line '{key}' (after the lines before it)"
        pos = found + len(key)
    return None


def compile_problem(block, context):
    flags = [CC, "-std=gnu11", "-fsyntax-only", "-Wall", "-Wextra", "-Werror", "-Wno-unused",
             "-Wno-unused-parameter", "-Wno-missing-field-initializers", "-I",
             os.path.join(SRC, "include"), "-xc", "-"]
    block = "".join(line for line in block.splitlines(True) if line.strip() != "...")
    errors = None
    for body in (block, "void upti_doc_sample_(void)\n{\n" + block + "}\n",
                 "int upti_doc_sample_(void)\n{\n" + block + "return 0;\n}\n"):
        p = subprocess.run(flags, input=CODE_SAMPLE_PRELUDE + context + "\n" + body, capture_output=True,
                           text=True)
        if p.returncode == 0:
            return None
        # Report the form that came closest (fewest errors).
        if errors is None or p.stderr.count("error:") < errors.count("error:"):
            errors = p.stderr
    return "does not compile:\n" + errors


def code_samples_build():
    problems = []
    checked = 0
    for rel in CODE_SAMPLE_DOCS:
        doc = read(rel)
        for m in re.finditer(r"(?:<!-- compiled after:(.*?)-->\n)?```c\n(.*?)```\n?([^\n]*)", doc, re.S):
            context, block, after = m.group(1) or "", m.group(2), m.group(3)
            where = f"{rel}:{doc[:m.start()].count(chr(10)) + 1 + (context.count(chr(10)) + 1 if m.group(1) else 0)}"
            cite = re.match(r"^\(`((?:samples|src)/[\w/.-]+\.[ch])`\)", after)
            problem = excerpt_problem(block, cite.group(1)) if cite else compile_problem(block, context)
            checked += 1
            if problem:
                problems.append(f"{where}: the block " + problem)
    if checked < 15:
        fail(f"found only {checked} ```c blocks: the scan is broken")
    if problems:
        fail("\n".join(problems))
    print(f"PASS: {checked} code blocks")


# Source files by name: the SPDX line is one of their first three lines.
SOURCE_SUFFIXES = (".c", ".h", ".cpp", ".def", ".map", ".comp", ".py", ".sh", ".cmake",
                   ".txt", ".in", ".supp")
SOURCE_NAMES = ("Makefile", "CMakeLists.txt")


def license_in_every_source():
    text = read("LICENSE")
    if not text.startswith("MIT License") or "Permission is hereby granted" not in text:
        fail("LICENSE is not the MIT license text")
    missing, checked = [], 0
    paths = [os.path.join(SRC, ".ci", "run")]
    for top, dirs, names in os.walk(SRC):
        dirs[:] = sorted(d for d in dirs if not d.startswith((".", "build")))
        paths += [os.path.join(top, n) for n in names]
    for path in sorted(paths):
        rel = os.path.relpath(path, SRC)
        name = os.path.basename(rel)
        # Expected outputs and JSON (which has no comments) are data, not source.
        if "/golden/" in rel or name.endswith(".json.in"):
            continue
        if not (name.endswith(SOURCE_SUFFIXES) or name in SOURCE_NAMES or rel == ".ci/run"):
            continue
        checked += 1
        with open(path, encoding="utf-8", errors="replace") as f:
            head = "".join(f.readline() for _ in range(3))
        if "SPDX-License-Identifier: MIT" not in head:
            missing.append(rel)
    if checked < 300:
        fail(f"found only {checked} source files: the scan is broken")
    if missing:
        fail(f"{len(missing)} source files without an SPDX line:\n  " + "\n  ".join(missing))
    print(f"PASS: {checked} source files")


{"writing_a_tool_builds_and_runs": writing_a_tool_builds_and_runs,
 "code_samples_build": code_samples_build,
 "database_metadata_keys": database_metadata_keys,
 "index_lists_every_page": index_lists_every_page,
 "no_internal_history": no_internal_history,
 "license_in_every_source": license_in_every_source,
 "callback_models_mapped": callback_models_mapped}[CASE]()
