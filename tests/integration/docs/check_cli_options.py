#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""docs/cli.md documents every option of every upti command.

  check_cli_options.py SOURCE_DIR UPTI

For each command `upti --help` lists, every long option its --help names
appears in the command's page (docs/cli.md; docs/analysis.md for the
analyses, ANALYSES), inside a table row or a paragraph, and with an example:
the option itself on a line of a code block (indented or fenced) that runs
upti. An option --help lists but the page does not name is an option users
cannot learn about.
"""
import re
import subprocess
import sys

SRC, UPTI = sys.argv[1], sys.argv[2]
ANALYSES = {"analyze", "diff", "recipe", "report"}


def commands():
    """The commands `upti --help` lists: the first word of each line under "commands:"."""
    p = subprocess.run([UPTI, "--help"], capture_output=True, text=True)
    block = p.stdout.split("commands:\n", 1)[1].split("\n\n", 1)[0]
    return [line.split()[0] for line in block.splitlines() if line.split()[0] != "help"]


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
    pages = {}
    for page in ("cli.md", "analysis.md"):
        doc = open(SRC + "/docs/" + page, encoding="utf-8").read()
        pages[page] = (doc, [l for l in code_lines(doc) if "upti " in l or "upti-" in l])
    missing, no_example, seen = [], [], 0
    listed = commands()
    if not {"run", "stats", "export", "merge", "recover"} <= set(listed):
        print(f"FAIL: upti --help lists {listed}")
        return 1
    for cmd in listed:
        page = "analysis.md" if cmd in ANALYSES else "cli.md"
        doc, code = pages[page]
        p = subprocess.run([UPTI, cmd, "--help"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True)
        options = sorted(set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]+)", p.stdout)))
        if p.returncode != 0 or "usage: upti " + cmd not in p.stdout:
            print(f"FAIL: upti {cmd} --help:\n{p.stdout}")
            return 1
        for opt in options:
            seen += 1
            if not re.search(re.escape(opt) + r"(?![a-z0-9-])", doc):
                missing.append(f"upti {cmd} {opt} ({page})")
            elif not any(re.search(re.escape(opt) + r"(?![a-z0-9-])", l) for l in code):
                no_example.append(f"upti {cmd} {opt} ({page})")
    if missing:
        print("FAIL: options not in their page: " + ", ".join(missing))
    if no_example:
        print("FAIL: options without an example (a code line running upti with it) in "
              "their page: " + ", ".join(no_example))
    if missing or no_example:
        return 1
    print(f"PASS: {seen} options of {len(listed)} commands documented with an example")
    return 0


sys.exit(main())
