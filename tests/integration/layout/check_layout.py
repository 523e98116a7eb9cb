#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The source tree shows the process boundary, and its folders depend one way:
check_layout.py SOURCE_DIR CASE. Exit 0 pass, 1 fail.

  top        `ls src` is the boundary: program (loaded into the traced program),
             collector and cli (run in `upti`), names and common (linked by both),
             analysis (Python, reading the databases), and nothing else; every folder with a CMakeLists.txt is named in the
             README's layout table.
  graph      the folder graph, from each folder's CMakeLists.txt (which folder
             defines each target; target_link_libraries, add_dependencies and
             target_sources name the targets a folder uses) and its sources'
             #include "../..." paths, has no cycle; no folder adds sources to a
             target of another folder.
  boundary   no folder of src/program uses (links, includes) a folder of src/collector or src/cli
             (KNOWN_CROSSINGS would list an exception, with its reason: none is left),
             and src/collector and src/cli use no
             library of src/program: they have the names library, not libupti.
             (`upti` is built after the libraries it starts programs with:
             add_dependencies, an order of the build, not a use.)
  recorder   (check_layout.py SOURCE_DIR recorder LIBRARY [checked|any]) libupti-trace.so, the bundled
             tool loaded into the traced program, only records: it needs no libsqlite3
             (readelf NEEDED), calls no sqlite3_* function and installs no signal
             handler (nm -D: no sigaction, signal), and its code stays under
             RECORDER_TEXT_BUDGET bytes (size: text; 245,585 when it held the
             database writer and every exporter), unless "any" (a sanitized build).
"""
import os
import re
import sys

SRC_ROOT = os.path.abspath(sys.argv[1])
CASE = sys.argv[2]
SRC = os.path.join(SRC_ROOT, "src")
TOP = {"program", "collector", "cli", "names", "common", "analysis"}
# (from folder, to folder) that the boundary check lets pass, each with its reason.
KNOWN_CROSSINGS = {}
RECORDER_TEXT_BUDGET = 64 * 1024
failures = []


def fail(msg):
    failures.append(msg)


def folders():
    """Every folder under src/ that has a CMakeLists.txt, as a path relative to src/."""
    out = []
    for top, dirs, files in os.walk(SRC):
        dirs.sort()
        if "CMakeLists.txt" in files:
            out.append(os.path.relpath(top, SRC))
    return out


def cmake_text(folder):
    with open(os.path.join(SRC, folder, "CMakeLists.txt")) as f:
        return re.sub(r"#[^\n]*", "", f.read())


def commands(text, name):
    """The argument lists of each call of the CMake command name."""
    return [m.group(1).split() for m in re.finditer(r"\b%s\s*\(([^)]*)\)" % name, text)]


def graph(uses_only=False):
    """Folder -> the folders it depends on; uses_only: links, sources and includes
    (not add_dependencies)."""
    owner = {}
    for folder in folders():
        for cmd in ("add_library", "add_executable", "add_custom_target"):
            for args in commands(cmake_text(folder), cmd):
                owner[args[0]] = folder
    edges = {f: set() for f in folders()}
    for folder in folders():
        text = cmake_text(folder)
        for cmd in ("target_link_libraries", "target_sources") + (() if uses_only else ("add_dependencies",)):
            for args in commands(text, cmd):
                if cmd == "target_sources" and owner.get(args[0]) not in (None, folder):
                    fail("%s adds sources to %s, a target of %s" % (folder, args[0], owner[args[0]]))
                for used in args[1:]:
                    to = owner.get(used)
                    if to is not None and to != folder:
                        edges[folder].add(to)
    for folder in folders():
        for top, _, files in os.walk(os.path.join(SRC, folder)):
            for name in files:
                if not name.endswith((".c", ".h")):
                    continue
                path = os.path.join(top, name)
                for inc in re.findall(r'#\s*include\s+"(\.\./[^"]+)"', open(path).read()):
                    target = os.path.relpath(os.path.normpath(os.path.join(top, inc)), SRC)
                    to = max((f for f in edges if target.startswith(f + "/")), key=len, default=None)
                    if to is not None and to != folder:
                        edges[folder].add(to)
    return edges


def case_top():
    have = {d for d in os.listdir(SRC) if os.path.isdir(os.path.join(SRC, d))}
    if have != TOP:
        fail("ls src: %s, not %s" % (sorted(have), sorted(TOP)))
    readme = open(os.path.join(SRC_ROOT, "README.md")).read()
    for folder in folders():
        if "`src/%s`" % folder not in readme:
            fail("the README's layout table does not name src/%s" % folder)


def case_graph():
    edges = graph()
    state = {}

    def visit(node, path):
        state[node] = 1
        for to in sorted(edges[node]):
            if state.get(to) == 1:
                fail("a cycle between folders: " + " -> ".join(path[path.index(to):] + [to]))
            elif to not in state:
                visit(to, path + [to])
        state[node] = 2

    for node in sorted(edges):
        if node not in state:
            visit(node, [node])
    print("%d folders, %d edges" % (len(edges), sum(len(e) for e in edges.values())))


def case_boundary():
    edges = graph(uses_only=True)
    for folder, uses in sorted(edges.items()):
        for to in sorted(uses):
            side, other = folder.split("/")[0], to.split("/")[0]
            if side == "program" and other in ("collector", "cli"):
                if (folder, to) not in KNOWN_CROSSINGS:
                    fail("src/%s (in the traced program) uses src/%s" % (folder, to))
            if side in ("collector", "cli") and other == "program":
                fail("src/%s (in upti) uses src/%s (loaded into the traced program)" % (folder, to))
    for (a, b), why in sorted(KNOWN_CROSSINGS.items()):
        if b not in edges.get(a, ()):
            fail("KNOWN_CROSSINGS lists %s -> %s, which no longer exists: remove it" % (a, b))
        else:
            print("known: src/%s -> src/%s: %s" % (a, b, why))


def case_recorder():
    import subprocess
    lib = sys.argv[3]
    needed = subprocess.run(["readelf", "-d", lib], capture_output=True, text=True, check=True).stdout
    for line in needed.splitlines():
        if "(NEEDED)" in line and "sqlite" in line:
            fail("%s needs %s" % (lib, line.split("[")[-1].rstrip("]")))
    undefined = subprocess.run(["nm", "-D", "--undefined-only", lib], capture_output=True, text=True,
                               check=True).stdout.split()
    names = {u.split("@")[0] for u in undefined if u != "U"}
    for name in sorted(names):
        if name.startswith("sqlite3_") or name in ("sigaction", "signal", "sigset", "bsd_signal"):
            fail("%s calls %s" % (lib, name))
    text = int(subprocess.run(["size", lib], capture_output=True, text=True,
                              check=True).stdout.splitlines()[1].split()[0])
    if (sys.argv[4] if len(sys.argv) > 4 else "checked") == "checked" and text > RECORDER_TEXT_BUDGET:
        fail("%s: %d bytes of code, over the budget of %d" % (lib, text, RECORDER_TEXT_BUDGET))
    print("recorder: %d bytes of code, %d functions called, none of SQLite or signals"
          % (text, len(names)))


{"top": case_top, "graph": case_graph, "boundary": case_boundary, "recorder": case_recorder}[CASE]()
for f in failures:
    print("FAIL: " + f)
sys.exit(1 if failures else 0)
