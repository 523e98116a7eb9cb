#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The release is stated the same everywhere.

  check_release.py SOURCE_DIR UPTI_CLI LIBUPTI

include/upti/defines.h's version is the newest heading of CHANGELOG.md
("## X.Y.Z", with its sections "### What ... guarantees" for a major
release's .0.0 and "### Changes since"), what `upti --version` prints
("upti X.Y.Z"), and libupti's soname is libupti.so.X (the major only).
"""
import re
import subprocess
import sys

SRC, CLI, LIB = sys.argv[1:4]
failures = []
defines = open(f"{SRC}/include/upti/defines.h").read()
v = [re.search(rf"#define UPTI_VERSION_{p} (\d+)", defines).group(1) for p in ("MAJOR", "MINOR", "PATCH")]
version = ".".join(v)
log = open(f"{SRC}/CHANGELOG.md").read()
heads = re.findall(r"^## (\S+)$", log, re.M)
if not heads or heads[0] != version:
    failures.append(f"CHANGELOG.md's newest release is {heads[:1]}, defines.h says {version}")
else:
    section = log.split(f"## {version}\n", 1)[1].split("\n## ", 1)[0]
    wanted = ["### Changes since"] + (["### What " + v[0] + ".0 guarantees"] if v[1:] == ["0", "0"] else [])
    for w in wanted:
        if w not in section:
            failures.append(f"CHANGELOG.md's {version} has no section '{w}'")
out = subprocess.run([CLI, "--version"], capture_output=True, text=True).stdout
if out != f"upti {version}\n":
    failures.append(f"upti --version printed {out!r}, expected 'upti {version}'")
dyn = subprocess.run(["readelf", "-d", LIB], capture_output=True, text=True).stdout
m = re.search(r"Library soname: \[(.*)\]", dyn)
if not m or m.group(1) != f"libupti.so.{v[0]}":
    failures.append(f"libupti's soname is {m.group(1) if m else None}, expected libupti.so.{v[0]}")
for f in failures:
    print("FAIL:", f)
if not failures:
    print(f"release {version}: CHANGELOG.md, upti --version and libupti.so.{v[0]} agree")
sys.exit(1 if failures else 0)
