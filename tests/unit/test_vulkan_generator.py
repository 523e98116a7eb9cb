#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The Vulkan generator's operation ids (src/names/vulkan/generate.py) come from the
committed table src/names/vulkan/vulkan_operations.txt, whatever vk.xml it reads.

  test_vulkan_generator.py SOURCE_DIR VK_XML CASE

golden   generated from VK_XML, upti/vulkan_api.h numbers every command of the
         table with the table's id, and nothing else (ids 1..N, in order).
pinned   a copy of VK_XML with a command added before every other one (as a
         newer registry adds commands within a version's list) gives every
         command the same id as VK_XML does, and leaves the new one out; a
         table naming a command VK_XML lacks is refused, with its name.
"""
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'common', 'python'))
import upti_test  # noqa: E402

SRC, VK_XML, CASE = sys.argv[1:4]
GEN = os.path.join(SRC, 'src', 'names', 'vulkan', 'generate.py')
TABLE = os.path.join(SRC, 'src', 'names', 'vulkan', 'vulkan_operations.txt')


fail, _ = upti_test.failing()


def table():
    ops = []
    for line in open(TABLE):
        words = line.split('#', 1)[0].split()
        if words:
            ops.append((int(words[0]), words[1]))
    return ops


def generate(xml, tab, d):
    out = [os.path.join(d, n) for n in ('vulkan_api.h', 'w.c', 'k.c')]
    p = subprocess.run([sys.executable, GEN, xml, tab] + out, capture_output=True, text=True)
    if p.returncode != 0:
        return None, p.stderr + p.stdout
    header = open(out[0]).read()
    return [(int(v), n) for n, v in re.findall(r'^    UPTI_VULKAN_API_(vk\w+) = (\d+),$', header, re.M)], ''


def generated(xml, tab, d, where):
    """generate()'s operations; fails where generate.py does, saying where."""
    got, err = generate(xml, tab, d)
    if got is None:
        fail('generate.py failed%s: %s' % (where, err))
    return got


def golden():
    ops = table()
    if [i for i, _ in ops] != list(range(1, len(ops) + 1)):
        fail('the table\'s ids are not 1..N in order')
    with tempfile.TemporaryDirectory() as d:
        got = generated(VK_XML, TABLE, d, '')
    if got != ops:
        diff = [(a, b) for a, b in zip(got, ops) if a != b][:5]
        fail(f'{len(got)} generated operations, {len(ops)} in the table; first differences: {diff}')
    print(f'PASS golden: {len(ops)} operations, ids as committed')


def pinned():
    xml = open(VK_XML).read()
    fake = 'vkUptiTestAddedCommand'
    definition = (f'<command><proto><type>void</type> <name>{fake}</name></proto>'
                  '<param><type>VkDevice</type> <name>device</name></param></command>')
    xml2 = re.sub(r'(<commands[^>]*>)', r'\1' + definition, xml, count=1)
    xml2 = re.sub(r'(<feature [^>]*>\s*<require[^>]*>)', r'\1' + f'<command name="{fake}"/>', xml2, count=1)
    if xml2.count(fake) != 2:
        fail('could not add a command to the copy of vk.xml')
    with tempfile.TemporaryDirectory() as d:
        newer = os.path.join(d, 'vk.xml')
        open(newer, 'w').write(xml2)
        base = generated(VK_XML, TABLE, d, ' on vk.xml')
        got = generated(newer, TABLE, d, ' on the copy with an added command')
        if got != base:
            moved = [(a, b) for a, b in zip(base, got) if a != b][:3]
            fail(f'a command added to vk.xml moved the ids: {moved}')
        if any(n == fake for _, n in got):
            fail('a command the table does not list got an id')
        # A table naming a command vk.xml lacks: refused, with its name.
        short = os.path.join(d, 'ops.txt')
        open(short, 'w').write(open(TABLE).read() + f'{len(base) + 1} vkUptiTestMissingCommand\n')
        got, err = generate(VK_XML, short, d)
        if got is not None or 'lacks vkUptiTestMissingCommand' not in err:
            fail(f'a table naming a command vk.xml lacks was not refused by name: {err!r}')
    print(f'PASS pinned: {len(base)} ids unchanged by an added command')


{'golden': golden, 'pinned': pinned}[CASE]()
