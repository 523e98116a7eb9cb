#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""docs/cli.md documents every option of every upti command.

  check_cli_options.py SOURCE_DIR UPTI

For each command (run, stats, export, merge, recover), every long option its
--help names appears in docs/cli.md, inside a table row or a paragraph, and
with an example: the option itself on a line of a code block (indented or
fenced) that runs upti. An option --help lists but the page does not name is
an option users cannot learn about.
"""
import re
import subprocess
import sys

SRC, UPTI = sys.argv[1], sys.argv[2]
COMMANDS = ["run", "stats", "export", "merge", "recover"]


def code_lines(text):
    """The lines of the page's code: fenced blocks and 4-space indented ones."""
    lines, fenced = [], False
    for line in text.splitlines():
        if line.strip().startswith("```"):
            fenced = not fenced
            continue
        if fenced or line.startswith("    "):
            lines.append(line)
    return lines


def main():
    doc = open(SRC + "/docs/cli.md", encoding="utf-8").read()
    code = [l for l in code_lines(doc) if "upti " in l or "upti-" in l]
    missing, no_example, seen = [], [], 0
    for cmd in COMMANDS:
        p = subprocess.run([UPTI, cmd, "--help"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True)
        options = sorted(set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]+)", p.stdout)))
        if p.returncode != 0 or "usage: upti " + cmd not in p.stdout:
            print(f"FAIL: upti {cmd} --help:\n{p.stdout}")
            return 1
        for opt in options:
            seen += 1
            if not re.search(re.escape(opt) + r"(?![a-z0-9-])", doc):
                missing.append(f"upti {cmd} {opt}")
            elif not any(re.search(re.escape(opt) + r"(?![a-z0-9-])", l) for l in code):
                no_example.append(f"upti {cmd} {opt}")
    if missing:
        print("FAIL: options not in docs/cli.md: " + ", ".join(missing))
    if no_example:
        print("FAIL: options without an example (a code line running upti with it) in "
              "docs/cli.md: " + ", ".join(no_example))
    if missing or no_example:
        return 1
    print(f"PASS: {seen} options of {len(COMMANDS)} commands documented with an example")
    return 0


sys.exit(main())
