# SPDX-License-Identifier: MIT
"""The analysis commands of `upti`: `upti analyze`, `upti diff`, `upti recipe`,
`upti report` (the `upti` command runs `python3 -m upti COMMAND ...`; this module may be
run so too).

Exit status: 0 done, 1 a database could not be read, 2 a usage error.
Errors go to stderr, one line each, prefixed `upti:`.
"""
import argparse
import dataclasses
import json
import os
import sys

from upti import output
from upti.trace import TraceError


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        command = self.prog.split(" ", 1)[-1]
        sys.stderr.write(f"upti: {command}: {message} (see '{self.prog} --help')\n")
        sys.exit(2)


def _format_option(parser, formats=output.FORMATS):
    parser.add_argument("-f", "--format", choices=formats, default="text",
                        help=", ".join(formats) + " (default text)")
    parser.add_argument("-o", "--output", metavar="FILE", help="write here instead of stdout")


class _Out:
    """Where a command writes: stdout, or the file of -o, written as FILE.part
    and renamed once complete (no half-written FILE), then said on stderr
    ("upti: wrote PATH": every command says what it wrote)."""

    def __init__(self, path):
        self.path = path

    def __enter__(self):
        if not self.path:
            self.file = sys.stdout
        else:
            try:
                self.file = open(self.path + ".part", "w", encoding="utf-8", newline="")
            except OSError as e:
                e.filename = self.path  # the output asked for, not its working name
                raise
        return self.file

    def __exit__(self, kind, *exc):
        if not self.path:
            return False
        self.file.close()
        if kind is not None:
            os.unlink(self.path + ".part")
            return False
        os.replace(self.path + ".part", self.path)
        sys.stderr.write(f"upti: wrote {self.path}\n")
        return False


def cmd_diff(argv):
    p = _Parser(prog="upti diff", description="Per kernel, API function and marker range: "
                "count and time in run A and in run B, B - A and B / A, largest change first.")
    p.add_argument("a", metavar="A.db")
    p.add_argument("b", metavar="B.db")
    _format_option(p)
    args = p.parse_args(argv)
    from upti.diff import diff
    frame = diff(args.a, args.b)
    with _Out(args.output) as out:
        output.write(frame, args.format, out)
    return 0


def _settings_options(parser):
    from upti.analyze import Settings
    for f in dataclasses.fields(Settings):
        parser.add_argument("--" + f.name.replace("_", "-"), type=float if isinstance(f.default, float) else int,
                            default=f.default,
                            metavar="N", help=f"default {f.default}")


def cmd_analyze(argv):
    from upti.analyze import RULES, Settings, analyze
    p = _Parser(prog="upti analyze", description="Expert rules over traces: each finding "
                "names its rule, explains it in a line, and gives the evidence and the time "
                "ranges. Rules: " + ", ".join(RULES) + ".")
    p.add_argument("databases", metavar="DB", nargs="+")
    p.add_argument("--rules", metavar="NAME,...", help="only these rules")
    _format_option(p, ("text", "json"))
    _settings_options(p)
    args = p.parse_args(argv)
    rules = None
    if args.rules:
        rules = [r for r in args.rules.split(",") if r]
        unknown = [r for r in rules if r not in RULES]
        if unknown:
            p.error(f"--rules: no rule {', '.join(unknown)} (rules: {', '.join(RULES)})")
    cfg = Settings(**{f.name: getattr(args, f.name) for f in dataclasses.fields(Settings)})
    findings = analyze(args.databases, rules, cfg)
    with _Out(args.output) as out:
        if args.format == "json":
            json.dump([f.as_dict() for f in findings], out, indent=1)
            out.write("\n")
        else:
            _print_findings(findings, out)
    return 0


def _print_findings(findings, out):
    if not findings:
        out.write("no findings\n")
    for f in findings:
        out.write(f"[{f.rule}] {f.process}: {f.title}\n")
        for key, value in f.evidence.items():
            out.write(f"    {key}: {json.dumps(value) if isinstance(value, (dict, list)) else value}\n")
        for start, end, what in f.ranges:
            out.write(f"    at {start}..{end} ({(end - start) / 1e6:.3f} ms): {what}\n")


def cmd_recipe(argv):
    from upti.recipes import RECIPES, run
    p = _Parser(prog="upti recipe", description="Per-rank analyses of many databases, "
                "locally or on a Dask cluster. Recipes: " +
                "; ".join(f"{n}: {d}" for n, (_, _, d) in RECIPES.items()) + ".")
    p.add_argument("name", metavar="NAME", choices=RECIPES)
    p.add_argument("databases", metavar="DB", nargs="+")
    p.add_argument("--mode", default="local", metavar="local|dask|dask=ADDRESS",
                   help="local (default): this process; dask: a local Dask cluster; "
                   "dask=ADDRESS: the Dask scheduler at ADDRESS (tcp://host:8786)")
    p.add_argument("--workers", type=int, metavar="N",
                   help="with --mode dask: the local cluster's worker processes")
    _format_option(p)
    args = p.parse_args(argv)
    if args.mode not in ("local", "dask") and not args.mode.startswith("dask="):
        p.error(f"--mode: expected local, dask or dask=ADDRESS, got {args.mode!r}")
    if args.workers is not None and (args.workers < 1 or args.mode != "dask"):
        p.error("--workers: a number > 0, with --mode dask")
    frame = run(args.name, args.databases, args.mode, args.workers)
    with _Out(args.output) as out:
        output.write(frame, args.format, out)
    return 0


def cmd_report(argv):
    p = _Parser(prog="upti report", description="One self-contained HTML page: summary "
                "tables (upti stats's), kernel-time bars, a timeline overview per process and "
                "device, the findings of upti analyze, and a process x kernel heat map.")
    p.add_argument("databases", metavar="DB", nargs="+")
    p.add_argument("-o", "--output", metavar="FILE", required=True, help="the page to write")
    args = p.parse_args(argv)
    from upti.report import report
    upti = os.environ.get("UPTI_COMMAND", "upti")
    page = report(args.databases, upti)
    with _Out(args.output) as out:
        out.write(page)
    return 0


COMMANDS = {"analyze": cmd_analyze, "diff": cmd_diff, "recipe": cmd_recipe, "report": cmd_report}


def main(argv):
    if not argv or argv[0] not in COMMANDS:
        sys.stderr.write(f"upti: expected a command: {', '.join(COMMANDS)}\n")
        return 2
    try:
        return COMMANDS[argv[0]](argv[1:])
    except TraceError as e:
        sys.stderr.write(f"upti: {argv[0]}: {e}\n")
        return 1
    except BrokenPipeError:
        return 0
    except OSError as e:  # an output that cannot be written (-o)
        sys.stderr.write(f"upti: {argv[0]}: cannot write {e.filename}: {e.strerror}\n")
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
