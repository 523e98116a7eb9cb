#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Counts the places in the tree that share six or more identical lines.

  python3 scripts/check_duplicates.py [--list] [--min-lines N]
                                      [--max-tree N] [--max-src N]

The project's rule "code that is alike becomes one piece", as a number that CI
(.ci/run) keeps from growing. Python 3 standard library only: CI runs on a bare
Debian 12 with no PyPI and without the `duplicates` tool of the developers'
machines (which also counts lines alike in shape; this script counts identical
lines only, so its numbers are lower).

Files read
    In a git checkout, the files git tracks plus the untracked ones it does
    not ignore (`git ls-files --cached --others --exclude-standard`), as they
    are in the working tree; where git or .git is missing (CI runs in a copy
    without .git), every file below the repository root except the folders
    .git*, build* and __pycache__. Of those, the ones ending in .c .h .py .sh
    .cmake and the ones named CMakeLists.txt, except:
      - tests/abi/previous/: frozen copies of released headers, alike by design;
      - generated files: a file whose first five lines say "generated" and
        "do not edit".

Lines compared
    Each line with its white space stripped at both ends and folded inside.
    Passed over (they neither count nor break a run): blank lines, lines with
    no letter, digit or underscore (braces, `});`, ...), comment lines (in C:
    lines starting with //, /*, */, `* ` or a lone `*`, and every line inside a
    /* ... */ that starts its line; in Python, shell and CMake: lines starting
    with #), `#include` lines, and Python `import` / `from ... import` lines.

What counts
    A run: N >= --min-lines (default 6) consecutive compared lines of file A
    that stand, identical and in the same order, as consecutive compared lines
    of file B (B may be A itself, at a place that does not overlap). Runs are
    maximal: runs that overlap or touch along the same alignment are merged
    into one.
    A pair: two files (or one file with itself) that share at least one run.
    Each pair counts once, however many runs it shares. "In src/": both files
    of the pair are under src/.

Output
    With --list, or when a count is over its limit: one line per pair, its
    longest run first, `A:start-end ~ B:start-end (N lines)`, where start and
    end are the file's line numbers of the run's first and last compared line
    and N is the number of compared lines in it; the pair's other runs follow,
    indented. Pairs are sorted by file names. Last, always, the summary:
      duplicates: P pairs in the tree, S with both sides in src/ (limits: tree T, src L), ...

Exit status
    1 when P > --max-tree or S > --max-src (a line says which), 2 on a usage
    error, 0 otherwise.
"""
import argparse
import os
import re
import subprocess
import sys
from collections import defaultdict

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SUFFIXES = (".c", ".h", ".py", ".sh", ".cmake")
NAMES = ("CMakeLists.txt",)
EXCLUDED = ("tests/abi/previous/",)
C_SUFFIXES = (".c", ".h")

SPACE = re.compile(r"\s+")
WORD = re.compile(r"\w")
PY_IMPORT = re.compile(r"(import\s+[\w.]|from\s+[\w.]+\s+import\s)")


def listed_files():
    """The repository's files, relative to ROOT, sorted."""
    try:
        top = subprocess.run(["git", "-C", ROOT, "rev-parse", "--show-toplevel"],
                             capture_output=True, text=True)
        if top.returncode == 0 and os.path.realpath(top.stdout.strip()) == os.path.realpath(ROOT):
            out = subprocess.run(["git", "-C", ROOT, "ls-files", "-z", "--cached", "--others",
                                  "--exclude-standard"], capture_output=True, check=True)
            names = out.stdout.decode("utf-8", "surrogateescape").split("\0")
            return sorted(set(n for n in names if n and os.path.isfile(os.path.join(ROOT, n))))
    except (OSError, subprocess.CalledProcessError):
        pass
    names = []
    for top, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if not d.startswith((".git", "build")) and d != "__pycache__"]
        names += [os.path.relpath(os.path.join(top, f), ROOT) for f in files]
    return sorted(n.replace(os.sep, "/") for n in names)


def wanted(name):
    base = name.rsplit("/", 1)[-1]
    return (name.endswith(SUFFIXES) or base in NAMES) and not name.startswith(EXCLUDED)


def compared_lines(name, text):
    """[(line number, normalized text)] of the lines that count."""
    is_c = name.endswith(C_SUFFIXES)
    is_py = name.endswith(".py")
    out = []
    in_comment = False
    for number, raw in enumerate(text.splitlines(), 1):
        line = SPACE.sub(" ", raw.strip())
        if is_c:
            if in_comment:
                if "*/" in line:
                    in_comment = False
                continue
            if line.startswith("/*"):
                in_comment = "*/" not in line[2:]
                continue
            if (line.startswith(("//", "*/", "* ")) or line == "*"
                    or re.match(r"#\s*include\b", line)):
                continue
        elif line.startswith("#") or (is_py and PY_IMPORT.match(line)):
            continue
        if not WORD.search(line):
            continue
        out.append((number, line))
    return out


def generated(text):
    head = "\n".join(text.splitlines()[:5]).lower()
    return "generated" in head and "do not edit" in head


def read_files():
    files = []
    for name in listed_files():
        if not wanted(name):
            continue
        try:
            with open(os.path.join(ROOT, name), encoding="utf-8", errors="replace") as f:
                text = f.read()
        except OSError:
            continue
        if "\0" in text or generated(text):
            continue
        files.append((name, compared_lines(name, text)))
    return files


def find_runs(files, min_lines):
    """{(file index a, file index b): [(start a, start b, length)]} in compared lines, a <= b."""
    places = defaultdict(list)
    for fi, (_, lines) in enumerate(files):
        texts = [t for _, t in lines]
        for p in range(len(texts) - min_lines + 1):
            places["\n".join(texts[p:p + min_lines])].append((fi, p))
    # Window starts that match, grouped by alignment (a, b, offset).
    starts = defaultdict(list)
    for where in places.values():
        if len(where) < 2:
            continue
        for i, (fa, pa) in enumerate(where):
            for fb, pb in where[i + 1:]:
                if fa == fb and pb - pa < min_lines:
                    continue  # overlapping places in one file
                starts[(fa, fb, pb - pa)].append(pa)
    runs = defaultdict(list)
    for (fa, fb, offset), pas in starts.items():
        pas.sort()
        first = last = pas[0]
        for p in pas[1:] + [None]:
            if p is not None and p <= last + 1:
                last = p
                continue
            length = last - first + min_lines
            if fa == fb:
                length = min(length, offset)  # keep the two places apart
            runs[(fa, fb)].append((first, first + offset, length))
            if p is not None:
                first = last = p
    return runs


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--min-lines", type=int, default=6, help="lines a run needs (default 6)")
    ap.add_argument("--max-tree", type=int, help="most pairs allowed in the tree")
    ap.add_argument("--max-src", type=int, help="most pairs allowed with both sides in src/")
    ap.add_argument("--list", action="store_true", help="print every pair and its runs")
    args = ap.parse_args()
    if args.min_lines < 2:
        ap.error("--min-lines takes a whole number of 2 or more")

    files = read_files()
    runs = find_runs(files, args.min_lines)

    def place(fi, start, length):
        lines = files[fi][1]
        return f"{files[fi][0]}:{lines[start][0]}-{lines[start + length - 1][0]}"

    rows = []
    for (fa, fb), found in runs.items():
        found.sort(key=lambda r: (-r[2], r[0], r[1]))
        text = [f"{place(fa, a, n)} ~ {place(fb, b, n)} ({n} lines)" for a, b, n in found]
        rows.append((files[fa][0], files[fb][0], text))
    rows.sort()
    tree = len(rows)
    src = sum(1 for a, b, _ in rows if a.startswith("src/") and b.startswith("src/"))

    over = []
    if args.max_tree is not None and tree > args.max_tree:
        over.append(f"duplicates: {tree} pairs in the tree, over the limit of {args.max_tree}")
    if args.max_src is not None and src > args.max_src:
        over.append(f"duplicates: {src} pairs in src/, over the limit of {args.max_src}")
    if args.list or over:
        for _, _, text in rows:
            print(text[0])
            for more in text[1:]:
                print("    " + more)
    limits = ["none" if n is None else str(n) for n in (args.max_tree, args.max_src)]
    print(f"duplicates: {tree} pairs in the tree, {src} with both sides in src/ "
          f"(limits: tree {limits[0]}, src {limits[1]}), "
          f"{len(files)} files read, runs of {args.min_lines}+ identical lines")
    for line in over:
        print(line, file=sys.stderr)
    if over:
        print("duplicates: make the code that is alike one piece (the pairs are listed above)",
              file=sys.stderr)
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
