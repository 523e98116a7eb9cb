#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The configure fails when include/upti/defines.h and the version scripts
disagree (cmake/version.cmake), and passes on this tree.

  check_version.py CMAKE SOURCE_DIR

Copies defines.h and every src/program/*/lib*.map into a scratch tree and runs the
configure's check on it as it is (passes), with defines.h's minor version
bumped and no new node (fails, naming both), with a node newer than the
version (fails), and with a node that is not <PREFIX>_<major>.<minor>
(fails). Also: the version CMake gives the libraries is defines.h's.
"""
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

CMAKE, SRC = sys.argv[1], os.path.abspath(sys.argv[2])
HERE = os.path.dirname(os.path.abspath(__file__))
failures = []


def tree(tmp):
    if os.path.exists(tmp):
        shutil.rmtree(tmp)
    os.makedirs(os.path.join(tmp, "include", "upti"))
    shutil.copy(os.path.join(SRC, "include", "upti", "defines.h"), os.path.join(tmp, "include", "upti"))
    for m in glob.glob(os.path.join(SRC, "src", "program", "*", "lib*.map")):
        d = os.path.join(tmp, "src", "program", os.path.basename(os.path.dirname(m)))
        os.makedirs(d, exist_ok=True)
        shutil.copy(m, d)
    return tmp


def check(tmp):
    r = subprocess.run([CMAKE, f"-DSOURCE_DIR={tmp}", "-P", os.path.join(HERE, "version_check.cmake")],
                       capture_output=True, text=True)
    return r.returncode, r.stdout + r.stderr


def edit(path, old, new):
    s = open(path).read()
    assert re.search(old, s), (path, old)
    open(path, "w").write(re.sub(old, new, s, count=1))


def expect(name, tmp, ok, words=()):
    rc, out = check(tmp)
    if (rc == 0) != ok or any(w not in out for w in words):
        failures.append(f"{name}: rc {rc}, expected {'success' if ok else 'failure'} "
                        f"naming {list(words)}:\n{out}")
    else:
        said = [l.strip() for l in out.splitlines() if "upti:" in l]
        print(f"ok: {name}" + (f": {said[0]}" if said else ""))


with tempfile.TemporaryDirectory() as base:
    t = tree(os.path.join(base, "t"))
    expect("this tree", t, True)
    defines = os.path.join(t, "include", "upti", "defines.h")
    mm = re.search(r"UPTI_VERSION_MAJOR (\d+).*UPTI_VERSION_MINOR (\d+)", open(defines).read(), re.S)
    major, minor = int(mm.group(1)), int(mm.group(2))
    edit(defines, r"UPTI_VERSION_MINOR \d+", f"UPTI_VERSION_MINOR {minor + 1}")
    expect("version bumped without a node", t, False,
           [f"UPTI_{major}.{minor}", f"{major}.{minor + 1}.", "defines.h"])

    t = tree(os.path.join(base, "t"))
    libupti = os.path.join(t, "src", "program", "sdk", "libupti.map")
    with open(libupti, "a") as f:
        f.write(f"\nUPTI_{major}.{minor + 1} {{\n    global:\n        upti_future;\n}} UPTI_{major}.{minor};\n")
    expect("node newer than the version", t, False, [f"UPTI_{major}.{minor + 1}", "newer"])

    t = tree(os.path.join(base, "t"))
    marker = os.path.join(t, "src", "program", "marker", "libuptx.map")
    edit(marker, r"UPTX_\d+\.\d+", "UPTX_NEXT")
    expect("node not <PREFIX>_<major>.<minor>", t, False, ["UPTX_NEXT"])

for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
