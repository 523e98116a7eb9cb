#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""What `cmake --install` installs keeps the interface of its committed
baselines in abi/.

  check_installed.py check|write CMAKE BUILD_DIR SOURCE_DIR CC WORK_DIR

The build tree is installed into WORK_DIR/prefix, and then:

- every shared library installed (a file, not a link) has its exports
  baseline abi/<lib>.exports and its abidw baseline abi/<lib>.abi (compared
  by abi.abidiff.<lib>). The exports baseline holds the library's soname,
  its version nodes with their parents, and every exported symbol with its
  node. A line of the baseline that the installed library no longer has
  fails (a symbol removed or moved to another node, a node removed, the
  soname changed); lines only the library has are additions, listed;
- every header installed, the generated ones included (<upti/opencl_api.h>,
  <upti/vulkan_api.h>), is named in abi/headers.layout, which holds for
  every struct and union typedef of the installed headers its size and each
  member's offset and size, every enumerator's value (those of anonymous
  enums as "constant" lines), and the value of every integer constant
  macro (the version's and the Vulkan registry's, which
  UPTI_VULKAN_TABLE_VERSION repeats, left out: they say which release and
  which build machine's registry it is). A line the installed headers no
  longer give identically fails (a value, offset or size changed, a name
  removed), except that a struct may grow (its size field says so) and a
  *_LAST sentinel may grow; new names are additions, listed. A build
  without OpenCL or Vulkan headers installs no <upti/opencl_api.h> or
  <upti/vulkan_api.h>: that runtime's lines are then left out (SKIP).

`write` makes the baselines from the installed tree instead (run by
scripts/abi-baseline.sh on a scratch GCC RelWithDebInfo build).
"""
import glob
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_layouts  # noqa: E402  (definitions(), probe(), run())

MODE, CMAKE, BUILD, SRC, CC, WORK = sys.argv[1:7]
SRC, WORK = os.path.abspath(SRC), os.path.abspath(WORK)
ABI = os.path.join(SRC, "abi")
# Generated headers installed only where the build has the runtime's headers
# (OpenCL, Vulkan): without one, its companion header (which includes it) is
# not compiled and the baseline's lines of that runtime are not compared.
OPTIONAL = {"upti/opencl_api.h": ("upti/opencl.h", re.compile(r"(?i)opencl|\bupti_cl_|\bCL_")),
            "upti/vulkan_api.h": ("upti/vulkan.h", re.compile(r"(?i)vulkan"))}
# Macros whose value names the release or the build machine, not the interface.
VOLATILE_MACROS = re.compile(r"^UPTI_VERSION(_|$)|^UPTI_VULKAN_(REGISTRY|TABLE)_VERSION$")


def install():
    prefix = os.path.join(WORK, "prefix")
    shutil.rmtree(prefix, ignore_errors=True)
    subprocess.run([CMAKE, "--install", BUILD, "--prefix", prefix], check=True,
                   stdout=subprocess.DEVNULL)
    return prefix


def is_elf(path):
    with open(path, "rb") as f:
        return f.read(4) == b"\x7fELF"


def libraries(prefix):
    found = {}
    for path in glob.glob(os.path.join(prefix, "lib*", "**", "*.so*"), recursive=True):
        if os.path.islink(path) or not os.path.isfile(path) or not is_elf(path):
            continue
        found[re.sub(r"\.so(\..*)?$", "", os.path.basename(path))] = path
    return found


def exports(path):
    """The lines of a library's exports baseline."""
    dyn = subprocess.run(["readelf", "-d", "-W", path], capture_output=True, text=True, check=True).stdout
    m = re.search(r"\(SONAME\)\s+Library soname: \[(.*)\]", dyn)
    lines = [f"soname {m.group(1) if m else '(none)'}"]
    ver = subprocess.run(["readelf", "-V", "-W", path], capture_output=True, text=True, check=True).stdout
    section = ver.split("Version definition section", 1)[1] if "Version definition section" in ver else ""
    section = section.split("Version needs section", 1)[0]
    for entry in re.split(r"\n\s+0x[0-9a-f]+: Rev:", section)[1:]:
        name = re.search(r"Name: (\S+)", entry).group(1)
        if "Flags: BASE" in entry:
            continue
        parents = re.findall(r"Parent \d+: (\S+)", entry)
        lines.append(f"node {name}" + "".join(f" {p}" for p in parents))
    nm = subprocess.run(["nm", "-D", "--defined-only", path], capture_output=True, text=True, check=True).stdout
    for line in nm.splitlines():
        parts = line.split()
        if len(parts) < 3 or parts[1] == "A":
            continue
        sym, _, node = parts[2].partition("@")
        lines.append(f"symbol {sym} {node.lstrip('@') or '(unversioned)'}")
    return sorted(set(lines))


def macros(include, headers, constants):
    """The lines "macro NAME = VALUE" of every object-like macro of the
    installed headers that is an integer constant expression, and
    "constant NAME = VALUE" of the names in constants (the enumerators of
    anonymous enums)."""
    src = "".join(f"#include <{h}>\n" for h in headers)
    out = subprocess.run([CC, "-E", "-dD", "-std=c11", "-D_GNU_SOURCE", "-I", include, "-x", "c", "-"],
                         input=src, capture_output=True, text=True, check=True).stdout
    names, keep = [], False
    for line in out.splitlines():
        m = re.match(r'# \d+ "([^"]+)"', line)
        if m:
            keep = os.path.abspath(m.group(1)).startswith(include + os.sep)
            continue
        m = re.match(r"#define ([A-Za-z_]\w*) +\S", line)
        if keep and m and not m.group(1).endswith("_H") and not VOLATILE_MACROS.match(m.group(1)):
            names.append(m.group(1))
    names += sorted(constants)
    # Those that do not compile as an integer (strings, attributes, C++
    # guards) are dropped from the probe, one compilation per round.
    while True:
        body = [f"#include <{h}>" for h in headers] + ["#include <stdio.h>", "int main(void) {"]
        first = len(body) + 1
        # Only integer constants: __builtin_classify_type 1..4 is an integer,
        # char, enum or bool (a string or a pointer is 5), and it must be a
        # constant; else the array size is negative and the line fails.
        body += [f'    printf("{"constant" if n in constants else "macro"} {n} = %lld\\n", (long long)({n}) + 0 * sizeof(char[1 - 2 * '
                 f'!(__builtin_constant_p({n}) && __builtin_classify_type({n}) >= 1 && '
                 f'__builtin_classify_type({n}) <= 4)]));' for n in names]
        body += ["    return 0;", "}"]
        c = os.path.join(WORK, "macro_probe.c")
        with open(c, "w") as f:
            f.write("\n".join(body) + "\n")
        exe = os.path.join(WORK, "macro_probe")
        r = subprocess.run([CC, "-std=gnu11", "-D_GNU_SOURCE", "-w", "-Werror=int-conversion",
                            "-Werror=pointer-to-int-cast", "-I", include, "-o", exe, c],
                           capture_output=True, text=True)
        if r.returncode == 0:
            break
        bad = {int(n) - first for n in re.findall(r"macro_probe\.c:(\d+):\d+:", r.stderr)}
        bad = {i for i in bad if 0 <= i < len(names)}
        if not bad:
            print(f"FAIL: the macro probe does not compile:\n{r.stderr}")
            sys.exit(1)
        names = [n for i, n in enumerate(names) if i not in bad]
    out = subprocess.run([exe], capture_output=True, text=True, check=True).stdout
    return out.splitlines()


def layouts(prefix):
    """The lines of abi/headers.layout for the installed headers."""
    include = os.path.join(prefix, "include")
    headers = sorted(os.path.relpath(h, include) for h in glob.glob(os.path.join(include, "**", "*.h"),
                                                                      recursive=True))
    for gen, (companion, _) in OPTIONAL.items():
        if gen not in headers and companion in headers:
            headers.remove(companion)
    check_layouts.CC, check_layouts.WORK = CC, WORK
    text = check_layouts.public_text(include, headers)
    types, enums = check_layouts.definitions(text)
    # Enumerators of enums with no typedef name (ring.h's states and kinds).
    constants = set()
    for body in re.findall(r"(?<!typedef )\benum\s*\{(.*?)\}\s*;", text, re.S):
        constants.update(re.match(r"\s*(\w+)", e).group(1) for e in check_layouts.split_top(body, ","))
    with open(os.path.join(WORK, "installed_probe.c"), "w") as f:
        f.write(check_layouts.probe(types, enums, headers))
    layout = check_layouts.run(include, "installed", "installed_probe.c", "the installed headers' types")
    lines = [f"header {h}" for h in headers]
    for key, value in layout.items():
        if value.startswith("sizeof "):
            lines.append(f"type {key} {value}")
        elif value.startswith("= "):
            lines.append(f"enum {key} {value}")
        else:
            lines.append(f"member {key} {value}")
    lines += macros(include, headers, constants)
    return sorted(set(lines)), headers


def compare(name, baseline, current):
    """Failures for baseline lines current lacks (growth allowed where said);
    returns (failures, additions)."""
    cur = set(current)
    bad = []
    # Only a size-first struct may grow: its callers say by `size` which part they know.
    # One without (upti_runtime_call_t, upti_correlation_id_t, ...) is fixed once released.
    sized = {l.split()[1].rsplit(".", 1)[0] for l in baseline
             if l.startswith("member ") and l.split()[1].endswith(".size") and l.split()[2] == "0"}
    for line in baseline:
        if line in cur:
            continue
        grows = line.startswith("type ") and line.split()[1] in sized
        if grows or (line.startswith("enum ") and line.split(" = ")[0].endswith("_LAST")):
            # a struct may grow; a sentinel may grow
            key = line.rsplit(" ", 1)[0] if line.startswith("type ") else line.split(" = ")[0]
            now = next((c for c in current if (c.rsplit(" ", 1)[0] if line.startswith("type ")
                                                 else c.split(" = ")[0]) == key), None)
            if now is not None and int(now.rsplit(" ", 1)[1]) >= int(line.rsplit(" ", 1)[1]):
                continue
            bad.append(f"{name}: baseline '{line}', installed '{now or '(gone)'}'")
            continue
        words = line.split()
        key = line.split(" = ")[0] if " = " in line else " ".join(words[:1 if words[0] == "soname" else 2])
        now = [c for c in current if c.startswith(key + " ")]
        bad.append(f"{name}: baseline '{line}', installed " + (f"'{now[0]}'" if now else "nothing"))
    base = set(baseline)
    added = [c for c in current if c not in base]
    return bad, added


def read_lines(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [l.rstrip("\n") for l in f if l.strip() and not l.startswith("#")]


def write_lines(path, header, lines):
    with open(path, "w") as f:
        f.write(header)
        f.write("\n".join(lines) + "\n")
    print(f"abi-baseline: {os.path.relpath(path, SRC)}")


HEADER = ("# SPDX-License-Identifier: MIT\n# Generated by sh scripts/abi-baseline.sh "
          "(tests/abi/check_installed.py): {what}.\n# Checked by abi.installed; "
          "regenerate it with the script, never by hand.\n")


def main():
    os.makedirs(WORK, exist_ok=True)
    prefix = install()
    libs = libraries(prefix)
    layout, headers = layouts(prefix)
    if MODE == "write":
        for lib, path in sorted(libs.items()):
            write_lines(os.path.join(ABI, f"{lib}.exports"),
                        HEADER.format(what=f"the exports of the installed {lib}"), exports(path))
        write_lines(os.path.join(ABI, "headers.layout"),
                    HEADER.format(what="the layouts and values of every installed header"), layout)
        return 0
    failures, additions = [], []
    if not libs:
        failures.append("no shared library installed")
    for lib, path in sorted(libs.items()):
        base = os.path.join(ABI, f"{lib}.exports")
        if not os.path.exists(os.path.join(ABI, f"{lib}.abi")):
            failures.append(f"{lib}: installed, but abi/{lib}.abi (its abidiff baseline) does not exist")
        if not os.path.exists(base):
            failures.append(f"{lib}: installed, but abi/{lib}.exports does not exist")
            continue
        bad, added = compare(lib, read_lines(base), exports(path))
        failures += bad
        additions += [f"{lib}: {a}" for a in added]
        print(f"{lib}: {len(read_lines(base))} baseline lines checked against {os.path.relpath(path, prefix)}")
    base = read_lines(os.path.join(ABI, "headers.layout"))
    if not base:
        failures.append("abi/headers.layout does not exist")
    for gen, (companion, names) in OPTIONAL.items():
        if gen not in headers:
            print(f"SKIP: {gen} is not installed (this build has no such runtime): "
                  f"{companion} and the lines naming that runtime are not compared")
            base = [l for l in base if not names.search(l) and l not in (f"header {gen}", f"header {companion}")]
            layout = [l for l in layout if not names.search(l)]
    for h in headers:
        if f"header {h}" not in base:
            failures.append(f"{h}: installed, but not in abi/headers.layout")
    bad, added = compare("headers", base, layout)
    failures += bad
    additions += [f"headers: {a}" for a in added if not a.startswith("header ")]
    print(f"headers: {len(headers)} installed, {len(base)} baseline lines checked")
    for a in additions:
        print("added:", a)
    if additions:
        print("additions only pass; a release records them: sh scripts/abi-baseline.sh")
    for f in failures:
        print("FAIL:", f)
    if failures:
        print("FAIL: the installed interface differs from abi/: keep the old interface, or (a new major "
              "version, or a release adding to it) run sh scripts/abi-baseline.sh and commit abi/")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
