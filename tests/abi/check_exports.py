#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""`nm -D --defined-only LIBRARY` equals VERSION_SCRIPT.

  check_exports.py NM VERSION_SCRIPT LIBRARY

Every symbol a global: section of the script names is exported under that
node, and nothing else is exported (the nodes themselves are the absolute
symbols the linker defines). The script names its symbols one by one: a
wildcard in a global: section fails the test (a new function would be
exported, under an old node, without anyone deciding it).
"""
import re
import subprocess
import sys


def parse_script(path):
    text = open(path).read()
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    text = re.sub(r"#[^\n]*", "", text)
    wanted = {}
    errors = []
    for node, body in re.findall(r"([A-Za-z_][A-Za-z0-9_.]*)\s*\{(.*?)\}\s*[A-Za-z0-9_.]*\s*;", text, re.S):
        section = None
        for tok in re.findall(r"[A-Za-z_][A-Za-z0-9_.*?\[\]]*\s*:|[^\s;]+", body):
            tok = tok.strip()
            if tok.endswith(":"):
                section = tok[:-1].strip()
                continue
            if section != "global":
                continue
            if any(c in tok for c in "*?["):
                errors.append(f"{path}: node {node}: wildcard '{tok}' in global:")
                continue
            if tok in wanted:
                errors.append(f"{path}: {tok} named twice ({wanted[tok]}, {node})")
            wanted[tok] = node
    return wanted, errors


def exported(nm, lib):
    out = subprocess.run([nm, "-D", "--defined-only", lib], check=True,
                         capture_output=True, text=True).stdout
    got = {}
    nodes = set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 3:
            continue
        kind, name = parts[1], parts[2]
        m = re.match(r"([^@]+)@@?(.+)$", name)
        if kind == "A" and m is None:
            nodes.add(name)
            continue
        if m is None:
            got[name] = None  # unversioned
        elif kind == "A" and m.group(1) == m.group(2):
            nodes.add(m.group(1))
        else:
            got[m.group(1)] = m.group(2)
    return got, nodes


def main():
    nm, script, lib = sys.argv[1:4]
    wanted, errors = parse_script(script)
    if not wanted:
        errors.append(f"{script}: no symbol in any global: section")
    got, _ = exported(nm, lib)
    for sym in sorted(set(wanted) | set(got)):
        w, g = wanted.get(sym), got.get(sym)
        if sym not in got:
            errors.append(f"{lib}: {sym} is in {script} ({w}) but not exported")
        elif sym not in wanted:
            errors.append(f"{lib}: {sym} is exported ({g}) but not in {script}")
        elif w != g:
            errors.append(f"{lib}: {sym} is exported under {g}, the script puts it in {w}")
    for e in errors:
        print(e)
    if errors:
        return 1
    print(f"{lib}: {len(got)} symbols, exactly those of {script}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
