#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""What a new user on a bare Debian 12 meets: scripts/install-deps.sh and the
README's first commands.

  check_deps.py SOURCE_DIR CASE

deps_cover_build_and_tests
    Every requirement the build and the tests state (find_package,
    find_library, find_path, find_program, pkg_check_modules, languages,
    Python imports, commands run by the test drivers and CI scripts) maps to a
    Debian package that install-deps.sh installs, or that a minbase system
    already has (Priority: required or Essential). A requirement this test
    does not know fails it: add it to REQUIREMENTS and to install-deps.sh.
install_deps_sudo_and_root
    The script's logic with fake apt-get, dpkg-query, id and sudo on PATH:
    as root it calls apt-get directly (no sudo on a bare system); as a user it
    goes through sudo; as a user without sudo it fails with one message;
    with everything installed it installs nothing.
readme_commands_on_bare_debian
    The README's first command block holds exactly two commands, one that
    runs the demo (its script runs `upti run`) and one that runs the tests
    (its script runs ctest), each `sh scripts/NAME.sh` (sh: what a minbase
    system has), and each script runs scripts/install-deps.sh (itself or
    through another script of scripts/) before any command a minbase system
    lacks.
"""
import glob
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile

SRC = os.path.abspath(sys.argv[1])
CASE = sys.argv[2]

# requirement -> Debian packages that satisfy it (None: optional, the tests
# that need it say why they are skipped).
REQUIREMENTS = {
    # CMake
    "language:C": ["build-essential"],
    "language:CXX": ["build-essential"],
    "cmake": ["cmake"],
    "package:Threads": ["build-essential"],
    "package:Python3": ["python3"],
    "package:OpenCL": ["ocl-icd-opencl-dev", "opencl-c-headers"],
    "package:upti": [],  # UPTI itself (the install test's consumer project)
    # (the static library first: `upti` links it where installed)
    "library:libsqlite3.a": ["libsqlite3-dev"],
    "header:sqlite3.h": ["libsqlite3-dev"],
    # upti stats --demangle: libiberty's C++ demangler
    "library:libiberty.a": ["libiberty-dev"],
    "header:libiberty/demangle.h": ["libiberty-dev"],
    "header:nvtx3/nvToolsExt.h": None,  # CUDA toolkit; tests skip with a reason
    # An OpenCL platform for the test programs to run on.
    "opencl-platform": ["ocl-icd-libopencl1", "pocl-opencl-icd"],
    "package:Vulkan": ["libvulkan-dev"],
    "header:vk.xml": ["libvulkan-dev"],  # the Vulkan registry the layer is generated from
    # A Vulkan device for the test programs (lavapipe) and their shader compiler.
    "vulkan-device": ["mesa-vulkan-drivers"],
    "command:glslangValidator": ["glslang-tools"],
    # The Khronos validation layer (tests/integration/vulkan/check_validation.py).
    "vulkan-validation-layer": ["vulkan-validationlayers"],
    # OTF2 (upti export --format otf2) and OTF2's reader, which checks the export.
    "header:otf2/otf2.h": ["libotf2-trace-dev"],
    "library:libotf2.a": ["libotf2-trace-dev"],
    "command:otf2-print": ["otf2-tools"],
    # upti run -i FILE.yaml: libyaml
    "header:yaml.h": ["libyaml-dev"],
    "library:yaml": ["libyaml-dev"],
    # The ABI checks (tests/abi, scripts/abi-baseline.sh).
    "command:abidiff": ["abigail-tools"],
    "command:abidw": ["abigail-tools"],
    # commands
    "command:make": ["build-essential"],
    "command:cc": ["build-essential"],
    "command:gcc": ["build-essential"],
    "command:nm": ["build-essential"],  # binutils, a dependency of build-essential
    "command:cmake": ["cmake"],
    "command:ctest": ["cmake"],
    "command:pkg-config": ["pkg-config"],
    "command:python3": ["python3"],
    "command:sqlite3": ["sqlite3"],
    "command:clinfo": ["clinfo"],
    "command:vulkaninfo": ["vulkan-tools"],
    "command:clang": ["clang"],
    "command:libclang_rt": ["libclang-rt-14-dev"],  # sanitizer runtimes (ci-sanitizers.sh)
    # Instruction counts of the benchmarks (bench/vulkan/callgrind.sh says
    # how to get valgrind and exits 77 without it): not needed by the build or tests.
    "command:valgrind": None,
    "command:callgrind_annotate": None,
    # util-linux, essential in Debian (crash.full_tmpdir mounts a small tmpfs, or skips).
    "command:mount": [],
    "command:umount": [],
    "command:sudo": [],  # used only when present (install-deps.sh)
    "command:apt-get": [],
    "command:dpkg-query": [],
    "python:pandas": ["python3-pandas"],
    "python:dask": ["python3-dask"],
    "python:distributed": ["python3-distributed"],
    "command:mpirun": ["openmpi-bin"],
    "command:chromium": ["chromium"],
}
# Words that name a command wherever they appear in a test or CI script.
WORD_COMMANDS = ["sqlite3", "clinfo", "vulkaninfo", "pkg-config", "clang", "libclang_rt", "nm", "ctest"]

SHELL_WORDS = set("""if then else elif fi for while until do done case esac in function return
exit set shift export local unset trap wait eval exec cd echo printf read test true false
break continue command type umask ulimit""".split())


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def rel(p):
    return os.path.relpath(p, SRC)


def source_files(patterns):
    out = []
    for pat in patterns:
        out += glob.glob(os.path.join(SRC, pat), recursive=True)
    return sorted(p for p in set(out) if "/build" not in rel(p).split(os.sep)[0])


def script_packages():
    text = open(os.path.join(SRC, "scripts/install-deps.sh")).read()
    m = re.search(r'^PACKAGES="([^"]*)"', text, re.M)
    if not m:
        fail("scripts/install-deps.sh has no PACKAGES=\"...\" list")
    return set(m.group(1).split())


def minbase_has(pkg):
    """A package a debootstrap minbase system already has."""
    p = subprocess.run(["dpkg-query", "-W", "-f=${Priority} ${Essential}", pkg],
                       capture_output=True, text=True)
    return p.returncode == 0 and (p.stdout.startswith("required") or p.stdout.endswith("yes"))


def owner_package(cmd):
    path = shutil.which(cmd)
    if path is None:
        return None
    real = os.path.realpath(path)
    # usrmerge: dpkg may know /usr/bin/x as /bin/x.
    for candidate in (path, real, re.sub(r"^/usr/", "/", path), re.sub(r"^/usr/", "/", real)):
        p = subprocess.run(["dpkg-query", "-S", candidate], capture_output=True, text=True)
        for line in p.stdout.splitlines() if p.returncode == 0 else []:
            if not line.startswith("diversion by"):
                return line.split(":")[0].strip()
    return None


def cmake_requirements():
    reqs = {}
    for f in source_files(["CMakeLists.txt", "**/CMakeLists.txt", "cmake/*.cmake"]):
        text = re.sub(r"#[^\n]*", "", open(f).read())
        where = rel(f)
        if "cmake_minimum_required" in text:
            reqs.setdefault("cmake", where)
            reqs.setdefault("command:make", where)  # what CMake's default generator (Unix Makefiles) runs
        for m in re.finditer(r"\bproject\s*\([^)]*LANGUAGES\s+([^)]*)\)", text):
            for lang in m.group(1).split():
                reqs.setdefault("language:" + lang, where)
        for m in re.finditer(r"\b(?:enable_language|check_language)\s*\(\s*(\w+)", text):
            reqs.setdefault("language:" + m.group(1), where)
        for m in re.finditer(r"\bfind_package\s*\(\s*(\w+)", text):
            reqs.setdefault("package:" + m.group(1), where)
            if m.group(1) == "OpenCL":
                reqs.setdefault("opencl-platform", where)
            if m.group(1) == "Vulkan":
                reqs.setdefault("vulkan-device", where)
        for m in re.finditer(r"\bfind_library\s*\(\s*\w+\s+(?:NAMES\s+)?([\w.+-]+)", text):
            reqs.setdefault("library:" + m.group(1), where)
        for m in re.finditer(r"\bfind_path\s*\(\s*\w+\s+(?:NAMES\s+)?([\w./+-]+)", text):
            reqs.setdefault("header:" + m.group(1), where)
        for m in re.finditer(r"\bfind_program\s*\(\s*\w+\s+(?:NAMES\s+)?([\w.+-]+)", text):
            reqs.setdefault("command:" + m.group(1), where)
        for m in re.finditer(r"\bpkg_(?:check|search)_modules?\s*\(\s*\w+\s+(?:\w+\s+)*?([a-z][\w.+-]*)", text):
            reqs.setdefault("pkgconfig:" + m.group(1), where)
            reqs.setdefault("command:pkg-config", where)
        for m in re.finditer(r"\bCOMMAND\s+([a-z][\w.+-]*)", text):
            reqs.setdefault("command:" + m.group(1), where)
    return reqs


def shell_commands(text):
    """Words in command position of a shell script."""
    words = set()
    for line in text.splitlines():
        line = re.sub(r"(^|\s)#.*", "", line)
        for seg in re.split(r"\|\||&&|[|;`]|\$\(|\bthen\b|\bdo\b|\belse\b|!", line):
            toks = seg.split()
            while toks and (re.match(r"^\w+=", toks[0]) or toks[0] in ("if", "while", "until", "exec")):
                toks.pop(0)
            if toks and re.match(r"^[a-z][\w.+-]*$", toks[0]) and toks[0] not in SHELL_WORDS:
                words.add(toks[0])
    return words


# Not used by the build or the tests: a maintainer's check with its own needs
# (root, debootstrap, git), which it states itself.
NOT_SCANNED = {"scripts/bare-debian-check.sh"}


def test_requirements():
    reqs = {}
    files = [f for f in source_files(["tests/**/*.py", "tests/**/*.sh", "scripts/*.sh", "bench/**/*.sh",
                                      "src/**/*.py", "Makefile"]) if rel(f) not in NOT_SCANNED]
    functions = set()
    for f in files:
        text = open(f).read()
        where = rel(f)
        functions |= set(re.findall(r"^\s*(\w+)\s*\(\)\s*\{", text, re.M))
        functions |= set(re.findall(r"^def (\w+)", text, re.M))
        if f.endswith(".py"):
            for m in re.finditer(r"^\s*(?:import|from)\s+([\w.]+)", text, re.M):
                mod = m.group(1).split(".")[0]
                local = [p for top in ("tests", "src")
                         for p in glob.glob(os.path.join(SRC, top, "**", mod + ".py"), recursive=True)
                         + glob.glob(os.path.join(SRC, top, "**", mod, "__init__.py"), recursive=True)]
                if mod not in sys.stdlib_module_names and not local:
                    reqs.setdefault("python:" + mod, where)
            for m in re.finditer(r"(?:subprocess\.\w+|check_output|Popen)\(\s*\[\s*['\"]([a-z][\w.+-]*)['\"]", text):
                reqs.setdefault("command:" + m.group(1), where)
            for m in re.finditer(r"shutil\.which\(\s*['\"]([a-z][\w.+-]*)['\"]", text):
                reqs.setdefault("command:" + m.group(1), where)
        elif f.endswith(".sh") or f.endswith("Makefile"):
            for w in shell_commands(re.sub(r'^PACKAGES="[^"]*"', "", text, flags=re.M)):
                reqs.setdefault("command:" + w, where)
        for w in WORD_COMMANDS:
            if re.search(r"(?<![\w/.-])" + re.escape(w) + r"(?![\w-])", text):
                reqs.setdefault("command:" + w, where)
    # The README's commands.
    readme = open(os.path.join(SRC, "README.md")).read()
    for block in re.findall(r"```sh\n(.*?)```", readme, re.S):
        for w in shell_commands(block):
            if "/" not in w:
                reqs.setdefault("command:" + w, "README.md")
    # Shell functions and the scripts' own names are not commands to install.
    for k in list(reqs):
        if k.startswith("command:") and k[8:] in functions:
            del reqs[k]
    return reqs


def deps_cover_build_and_tests():
    have = script_packages()
    reqs = cmake_requirements()
    reqs.update({k: v for k, v in test_requirements().items() if k not in reqs})
    for must in ("language:C", "package:OpenCL", "library:libsqlite3.a", "command:python3",
                 "command:sqlite3", "command:make"):
        if must not in reqs:
            fail(f"the scan found no '{must}': the scan is broken")
    missing = []
    for req, where in sorted(reqs.items()):
        if req in REQUIREMENTS:
            pkgs = REQUIREMENTS[req]
            if pkgs is None:
                print(f"optional: {req} ({where})")
                continue
        elif req.startswith("command:"):
            pkg = owner_package(req[8:])
            if pkg is None:
                # Not a program from a Debian package on this machine (a
                # script's own name, a word in a message): only known
                # programs are checked.
                print(f"not checked: {req} ({where})")
                continue
            pkgs = [pkg]
        else:
            missing.append(f"{req} (needed by {where}) is not in this test's table: "
                           "add it with its Debian package, and the package to install-deps.sh")
            continue
        for p in pkgs:
            if p not in have and not minbase_has(p):
                missing.append(f"{req} (needed by {where}) needs package {p}, "
                               "which install-deps.sh does not install")
        print(f"ok: {req} -> {' '.join(pkgs) or '(none)'} ({where})")
    if missing:
        fail("\n  ".join([""] + missing))
    print(f"PASS: {len(reqs)} requirements covered by {len(have)} packages")


def write_exe(path, body):
    with open(path, "w") as f:
        f.write("#!/bin/sh\n" + body)
    os.chmod(path, stat.S_IRWXU)


def run_script(bindir, log, with_sudo, uid, installed):
    """Runs install-deps.sh with fakes first on PATH; returns (rc, out, log lines)."""
    for name in ("sudo",):
        p = os.path.join(bindir, name)
        if os.path.exists(p):
            os.remove(p)
    write_exe(os.path.join(bindir, "id"), f'[ "$1" = -u ] && echo {uid} || echo uid={uid}\n')
    write_exe(os.path.join(bindir, "apt-get"), f'echo "apt-get uid=$(id -u) $*" >> {log}\n')
    write_exe(os.path.join(bindir, "dpkg-query"),
              f'[ {int(installed)} = 1 ] && echo "install ok installed" && exit 0\n'
              'echo "dpkg-query: no packages found" >&2; exit 1\n')
    if with_sudo:
        # A fake sudo: records the call, then runs the command "as root".
        write_exe(os.path.join(bindir, "sudo"),
                  f'echo "sudo $*" >> {log}\nexec env PATH="$PATH" "$@"\n')
    open(log, "w").close()
    # Only the fakes and what the script itself uses from a minbase system.
    for tool in ("grep", "env"):
        if not os.path.exists(os.path.join(bindir, tool)):
            os.symlink(shutil.which(tool), os.path.join(bindir, tool))
    env = {"PATH": bindir, "HOME": "/nonexistent"}
    p = subprocess.run(["/bin/sh", os.path.join(SRC, "scripts/install-deps.sh")], env=env,
                       capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout + p.stderr, open(log).read().splitlines()


def install_deps_sudo_and_root():
    pkgs = sorted(script_packages())
    with tempfile.TemporaryDirectory() as d:
        bindir = os.path.join(d, "bin")
        os.mkdir(bindir)
        log = os.path.join(d, "calls.log")

        rc, out, calls = run_script(bindir, log, with_sudo=False, uid=0, installed=False)
        if rc != 0:
            fail(f"as root without sudo: exit {rc}: {out}")
        if len(calls) != 2 or any(not c.startswith("apt-get uid=0 ") for c in calls):
            fail(f"as root: expected two direct apt-get calls, got {calls}")
        if calls[0] != "apt-get uid=0 update -qq":
            fail(f"as root: first call {calls[0]!r}, expected 'apt-get uid=0 update -qq'")
        want = "apt-get uid=0 install -y -qq --no-install-recommends " + " ".join(
            p for p in script_order())
        if calls[1] != want:
            fail(f"as root: install call {calls[1]!r}, expected {want!r}")

        rc, out, calls = run_script(bindir, log, with_sudo=True, uid=1000, installed=False)
        if rc != 0:
            fail(f"as a user with sudo: exit {rc}: {out}")
        if (len(calls) != 4 or not calls[0].startswith("sudo env DEBIAN_FRONTEND=noninteractive apt-get update")
                or not calls[2].startswith("sudo env DEBIAN_FRONTEND=noninteractive apt-get install")):
            fail(f"as a user: expected apt-get through sudo, got {calls}")

        rc, out, calls = run_script(bindir, log, with_sudo=False, uid=1000, installed=False)
        if rc != 1 or calls:
            fail(f"as a user without sudo: expected exit 1 and no apt-get call, got {rc}, {calls}")
        if "run this script as root" not in out:
            fail(f"as a user without sudo: the message does not say what to do: {out!r}")

        rc, out, calls = run_script(bindir, log, with_sudo=True, uid=1000, installed=True)
        if rc != 0 or calls:
            fail(f"with everything installed: expected exit 0 and no call, got {rc}, {calls}")
    print(f"PASS: root, sudo, no sudo and nothing-to-do ({len(pkgs)} packages)")


def script_order():
    text = open(os.path.join(SRC, "scripts/install-deps.sh")).read()
    return re.search(r'^PACKAGES="([^"]*)"', text, re.M).group(1).split()


def run_before_install_deps(path):
    """Fails unless the script at path runs scripts/install-deps.sh, itself
    or through another script of scripts/ (sh scripts/X.sh), before any
    command a minbase system lacks."""
    lines = open(path).read().splitlines()
    for i, line in enumerate(lines):
        m = re.search(r"\bsh\s+\S*scripts/([\w-]+\.sh)", re.sub(r"(^|\s)#.*", "", line))
        if not m:
            continue
        for w in sorted(shell_commands("\n".join(lines[:i]))):
            pkg = owner_package(w)
            if pkg is not None and not minbase_has(pkg):
                fail(f"{rel(path)} runs '{w}' (package {pkg}), which a minbase system lacks, "
                     "before scripts/install-deps.sh")
        if m.group(1) != "install-deps.sh":
            run_before_install_deps(os.path.join(SRC, "scripts", m.group(1)))
        return
    fail(f"{rel(path)} does not run scripts/install-deps.sh")


def readme_commands_on_bare_debian():
    readme = open(os.path.join(SRC, "README.md")).read()
    m = re.search(r"```sh\n(.*?)```", readme, re.S)
    if not m:
        fail("README.md has no ```sh block")
    cmds = []
    for line in m.group(1).splitlines():
        line = re.sub(r"\s+#.*", "", line).strip()
        if line and not line.startswith("#"):
            cmds.append(line.split())
    if len(cmds) != 2:
        fail(f"README.md's first command block holds {len(cmds)} commands, not two (the demo, the tests)")
    roles = {}
    for cmd in cmds:
        # A minbase system has sh (dash) and coreutils; not make, cmake, a compiler or sudo.
        if len(cmd) != 2 or cmd[0] != "sh" or not cmd[1].startswith("scripts/"):
            fail(f"README command '{' '.join(cmd)}' is not 'sh scripts/NAME.sh': "
                 "a bare Debian 12 has sh, not make or the others")
        script = os.path.join(SRC, cmd[1])
        if not os.path.isfile(script):
            fail(f"README command '{' '.join(cmd)}': no {cmd[1]}")
        text = open(script).read()
        if text.splitlines()[0].strip() != "#!/bin/sh":
            fail(f"{cmd[1]} does not start with #!/bin/sh")
        run_before_install_deps(script)
        if re.search(r"^\s*ctest\b", text, re.M):
            roles["test"] = cmd[1]
        if re.search(r"upti\"?\s+run\b", text):
            roles["demo"] = cmd[1]
    if set(roles) != {"demo", "test"} or roles["demo"] == roles["test"]:
        fail(f"README commands: one must run the demo (upti run) and one the tests (ctest): {roles}")
    print(f"PASS: two README commands, each installs what is missing first: {roles}")


{"deps_cover_build_and_tests": deps_cover_build_and_tests,
 "install_deps_sudo_and_root": install_deps_sudo_and_root,
 "readme_commands_on_bare_debian": readme_commands_on_bare_debian}[CASE]()
