#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Every struct, union and enum of the previous release's headers keeps its
layout and values in today's headers.

  check_layouts.py CC PREVIOUS_INCLUDE CURRENT_INCLUDE WORK_DIR

The previous headers (tests/abi/previous/include) are preprocessed and every
typedef'd struct/union and enum defined in them listed with its members and
enumerators. One probe program prints offsetof and sizeof of each member,
sizeof of each type and the value of each enumerator; it is compiled against
the previous headers and against today's, and run. Today's must give the
same offsets, member sizes and values (a *_LAST sentinel may grow), and no
type may shrink (a type may grow at its end: its size field says how much).
A member or enumerator that no longer exists fails the probe's compilation.

And no struct of today's headers ends with padding: a field added at the
end, where the compiler left padding, would not change sizeof, so the
struct's size could not tell whether a caller's build has it (those bytes
hold anything); such bytes are a member named reserved0, which must be 0.
Padding between members is harmless (fields are only added at the end) but
is a member's width a reader must work out: a gap not in KNOWN_GAPS (those
of the 1.0 headers, kept as they are: naming them would shift positional
initializers in callers' sources) fails too.
"""
import os
import re
import subprocess
import sys

# check_installed.py imports this module and sets CC and WORK itself.
if __name__ == "__main__":
    CC, PREV, CUR, WORK = sys.argv[1:5]
    PREV, CUR = os.path.abspath(PREV), os.path.abspath(CUR)
HEADERS = ["upti/upti.h", "upti/runtime.h", "upti/runtime_callback.h", "upti/register.h",
           "upti/ring.h", "uptx/uptx.h", "uptx/uptx_table.h"]
# Today's headers give UPTI 0.1's names through <upti/compat.h> (the previous
# release's have none: their names were in the headers above).
COMPAT = "#if __has_include(<upti/compat.h>)\n#include <upti/compat.h>\n#endif\n"


def public_text(include, headers=HEADERS):
    src = "".join(f"#include <{h}>\n" for h in headers)
    out = subprocess.run([CC, "-E", "-std=c11", "-D_GNU_SOURCE", "-I", include, "-x", "c", "-"],
                         input=src, capture_output=True, text=True, check=True).stdout
    keep, lines = False, []
    for line in out.splitlines():
        m = re.match(r'# \d+ "([^"]+)"', line)
        if m:
            keep = os.path.abspath(m.group(1)).startswith(include + os.sep)
            continue
        if keep:
            lines.append(line)
    return "\n".join(lines)


def split_top(body, sep):
    parts, depth, cur = [], 0, ""
    for c in body:
        depth += c in "{("
        depth -= c in "})"
        if c == sep and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += c
    parts.append(cur)
    return [p.strip() for p in parts if p.strip()]


def member_name(decl):
    m = re.search(r"\(\s*\*\s*(\w+)\s*\)\s*\(", decl)
    if m:
        return m.group(1), False
    flexible = decl.endswith("[]")
    decl = re.sub(r"(\[[^\]]*\])+$", "", decl).strip()
    decl = re.sub(r"__attribute__\s*\(\(.*\)\)", "", decl).strip()
    return re.findall(r"\w+", decl)[-1], flexible


def members_of(body):
    """(name, flexible) of each member of a struct or union body; the members of an
    anonymous struct or union in it (C11) are the outer type's own. A member with a body
    of its own in any other form is not read (its members would go unchecked): it fails."""
    found = []
    for decl in split_top(body, ";"):
        anonymous = re.match(r"(?:__extension__\s+)?(?:struct|union)\s*\{(.*)\}$", decl, re.S)
        named = re.match(r"(?:struct|union)\s*\{.*\}\s*\w+$", decl, re.S)
        if anonymous:
            found += members_of(anonymous.group(1))
        elif "{" in decl and not named:
            sys.exit(f"FAIL: check_layouts.py cannot read the member {decl!r}")
        else:
            found.append(member_name(decl))
    return found


def definitions(text, structs=None):
    """Types (name -> members) and enums (name -> enumerators) defined in
    text; the names of the structs (not unions) are added to structs."""
    types, enums = {}, {}
    i = 0
    pat = re.compile(r"typedef\s+(struct|union|enum)\s+(\w+)?\s*\{")
    while True:
        m = pat.search(text, i)
        if not m:
            break
        depth, j = 1, m.end()
        while depth:
            depth += {"{": 1, "}": -1}.get(text[j], 0)
            j += 1
        body = text[m.end():j - 1]
        name = re.match(r"\s*(\w+)\s*;", text[j:]).group(1)
        if m.group(1) == "enum":
            enums[name] = [re.match(r"\s*(\w+)", e).group(1) for e in split_top(body, ",")]
        else:
            types[name] = members_of(body)
            if m.group(1) == "struct" and structs is not None:
                structs.add(name)
        i = j
    return types, enums


def probe(types, enums, headers=HEADERS):
    lines = ["#include <stddef.h>", "#include <stdio.h>"]
    lines += [f"#include <{h}>" for h in headers] + [COMPAT]
    lines.append("int main(void) {")
    for t, members in sorted(types.items()):
        lines.append(f'    printf("{t} sizeof %zu\\n", sizeof({t}));')
        for name, flexible in members:
            size = "0" if flexible else f"sizeof((({t} *)0)->{name})"
            lines.append(f'    printf("{t}.{name} %zu %zu\\n", offsetof({t}, {name}), (size_t){size});')
    for e, names in sorted(enums.items()):
        for n in names:
            lines.append(f'    printf("{e}.{n} = %lld\\n", (long long){n});')
    lines.append("    return 0;\n}")
    return "\n".join(lines) + "\n"


def run(include, tag, probe_c="layout_probe.c", what="the previous release's types"):
    exe = os.path.join(WORK, f"layout_probe_{tag}")
    r = subprocess.run([CC, "-std=c11", "-D_GNU_SOURCE", "-I", include, "-o", exe,
                        os.path.join(WORK, probe_c)], capture_output=True, text=True)
    if r.returncode != 0:
        print(f"FAIL: {what} do not compile against {include}:\n{r.stderr}")
        sys.exit(1)
    out = subprocess.run([exe], capture_output=True, text=True, check=True).stdout
    # "T sizeof N", "T.member OFFSET SIZE", "E.NAME = VALUE": the first word names it
    return dict(line.split(" ", 1) for line in out.splitlines())


# Padding between members in the 1.0 headers, "STRUCT@OFFSET+BYTES".
KNOWN_GAPS = {
    "upti_agent_t@20+4", "upti_agent_t@60+4", "upti_buffer_options_t@28+4",
    "upti_buffer_tracing_code_object_record_t@52+4", "upti_buffer_tracing_kernel_dispatch_record_t@84+4",
    "upti_buffer_tracing_memory_allocation_record_t@68+4", "upti_buffer_tracing_memory_copy_record_t@68+4",
    "upti_callback_gpu_op_data_t@44+4", "upti_callback_gpu_op_data_t@68+4", "upti_callback_internal_data_t@20+4",
    "upti_callback_tracing_record_t@52+4", "upti_gpu_op_details_t@44+4", "upti_runtime_correlation_t@36+4",
    "upti_runtime_record_t@20+4",
}


def padding(layout, structs, types):
    """'T: N bytes of padding at OFFSET' for every gap between the members of
    a struct of today's headers not in KNOWN_GAPS, and after its last member."""
    found = []
    for t in sorted(structs):
        spans = sorted(tuple(map(int, layout[f"{t}.{name}"].split())) for name, _ in types[t])
        end = 0
        for offset, size in spans:
            if offset > end and f"{t}@{end}+{offset - end}" not in KNOWN_GAPS:
                found.append(f"{t}: {offset - end} bytes of padding at offset {end} (a new gap)")
            end = max(end, offset + size)
        total = int(layout[t].split()[-1])
        if total > end:
            found.append(f"{t}: {total - end} bytes of tail padding at offset {end}")
    return found


def check_padding():
    structs = set()
    types, enums = definitions(public_text(CUR), structs)
    with open(os.path.join(WORK, "padding_probe.c"), "w") as f:
        f.write(probe(types, {}))
    found = padding(run(CUR, "padding", "padding_probe.c"), structs, types)
    for p in found:
        print("FAIL: padding:", p)
    print(f"{len(structs)} structs of today's headers checked for padding: {len(found)} tail or new gaps "
          f"({len(KNOWN_GAPS)} known gaps between members)")
    return 1 if found else 0


def main():
    os.makedirs(WORK, exist_ok=True)
    padded = check_padding()
    types, enums = definitions(public_text(PREV))
    with open(os.path.join(WORK, "layout_probe.c"), "w") as f:
        f.write(probe(types, enums))
    old, new = run(PREV, "previous"), run(CUR, "current")
    changed = [(k, was, new[k]) for k, was in old.items() if new[k] != was]
    bad, allowed = [], []
    for key, was, now in changed:
        if key.endswith("_LAST"):
            allowed.append((key, was, now))  # a sentinel grows when values are appended
        elif was.startswith("sizeof ") and int(now.split()[-1]) > int(was.split()[-1]):
            allowed.append((key, was, now))  # grown at its end; members checked one by one
        else:
            bad.append(f"{key}: previous {was}, now {now}")
    for b in bad:
        print("FAIL:", b)
    print(f"{len(types)} types ({sum(len(m) for m in types.values())} members), "
          f"{sum(len(v) for v in enums.values())} enumerators of {len(enums)} enums compared; "
          f"{len(allowed)} allowed changes (grown types, sentinels)")
    for key, was, now in allowed:
        print(f"  allowed: {key}: {was} -> {now}")
    return 1 if bad or padded else 0


if __name__ == "__main__":
    sys.exit(main())
