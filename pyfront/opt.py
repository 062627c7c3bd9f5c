"""pyfront-opt: run registered pyfront passes over MLIR text, in the manner of mlir-opt.

    pyfront-opt [input] [-o output] [--split-input-file] [--<pass> ...] [--pass-pipeline=a,b,c]

Contract:
- `input` is a file, or stdin when omitted or `-`; it is parsed in a context
  from `new_context()`, so pyfront ops are written in generic form.
- Each `--<pass>` flag (one per registered pass, see `--help`) and each
  `--pass-pipeline` list of registered names adds passes in command-line order.
- The module is checked by `verify_module` before and after the passes.
- `--split-input-file` processes each chunk between `// -----` lines on its
  own (line numbers stay those of the whole file) and prints the outputs
  separated by `// -----`; a failing chunk does not stop the others.
- Errors go to stderr as `<file>:<line>:<col>: error: <message>`, using the
  failing op's (or the parser's) location; the exit status is then 1.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from pyfront.dialects import VerificationError, verify_module
from pyfront.dialects.mlir import ir, new_context
from pyfront.passes import all_passes, run_passes

SPLIT_MARKER = "// -----"
_FILE_LOC = re.compile(r'"([^"]*)":(\d+):(\d+)')


class _PassPipeline(argparse.Action):
    """Appends comma-separated pass names to the same ordered list as the pass flags."""

    def __call__(self, parser, namespace, values, option_string=None):
        names = [n.strip() for n in values.split(",") if n.strip()]
        known = {p.name for p in all_passes()}
        for name in names:
            if name not in known:
                parser.error(f"unknown pass '{name}' in {option_string}")
        setattr(namespace, self.dest, (getattr(namespace, self.dest) or []) + names)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pyfront-opt",
        description="Parse MLIR with pyfront ops, verify it, run passes, print the result.",
        allow_abbrev=False,
    )
    parser.add_argument("input", nargs="?", default="-", help="input file (default: stdin)")
    parser.add_argument("-o", dest="output", default="-", help="output file (default: stdout)")
    parser.add_argument(
        "--split-input-file",
        action="store_true",
        help=f"process chunks separated by '{SPLIT_MARKER}' independently",
    )
    parser.add_argument("--mlir-print-debuginfo", action="store_true", help="print op locations")
    parser.add_argument(
        "--pass-pipeline",
        dest="passes",
        action=_PassPipeline,
        metavar="a,b,c",
        help="comma-separated registered pass names, run in order",
    )
    group = parser.add_argument_group("passes (run in command-line order)")
    for p in all_passes():
        group.add_argument(
            f"--{p.name}", dest="passes", action="append_const", const=p.name, help=p.summary
        )
    return parser


def _where(loc: str, filename: str) -> str:
    """`file:line:col` from a printed location; the parser's own buffer is named `-`."""
    m = _FILE_LOC.search(loc)
    if not m:
        return filename
    name = filename if m.group(1) == "-" else m.group(1)
    return f"{name}:{m.group(2)}:{m.group(3)}"


def _diagnostics(e: ir.MLIRError, filename: str) -> list[str]:
    lines = []
    for d in e.error_diagnostics:
        lines.append(f"{_where(str(d.location), filename)}: error: {d.message}")
        lines += [f"{_where(str(n.location), filename)}: note: {n.message}" for n in d.notes]
    return lines or [f"{filename}: error: {e}"]


class OptError(Exception):
    """Formatted error lines for stderr."""

    def __init__(self, lines: list[str]):
        self.lines = lines
        super().__init__("\n".join(lines))


def process(text: str, passes: list[str], filename: str, debuginfo: bool = False) -> str:
    """Parse, verify, run `passes`, verify again and return the printed module.

    Any failure raises `OptError` carrying the formatted diagnostics.
    """
    with new_context() as ctx:
        try:
            module = ir.Module.parse(text, context=ctx)
            verify_module(module)
            run_passes(module, passes)
            verify_module(module)
        except ir.MLIRError as e:
            raise OptError(_diagnostics(e, filename)) from None
        except VerificationError as e:
            raise OptError(
                [f"{_where(loc, filename)}: error: {msg}" for loc, msg in e.errors]
            ) from None
        except Exception as e:  # noqa: BLE001 - a Python pass failed; its message may name a location
            raise OptError([f"{_where(str(e), filename)}: error: {e}"]) from None
        return module.operation.get_asm(enable_debug_info=debuginfo)


def split_input(text: str) -> list[str]:
    """Chunks between `// -----` lines, each padded with newlines so line numbers match the file."""
    chunks, current, start = [], [], 0
    lines = text.splitlines(keepends=True)
    for i, line in enumerate(lines):
        if line.strip() == SPLIT_MARKER:
            chunks.append("\n" * start + "".join(current))
            current, start = [], i + 1
        else:
            current.append(line)
    chunks.append("\n" * start + "".join(current))
    return chunks


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    filename = "<stdin>" if args.input == "-" else args.input
    try:
        text = sys.stdin.read() if args.input == "-" else Path(args.input).read_text()
    except OSError as e:
        print(f"{filename}: error: {e.strerror}", file=sys.stderr)
        return 1
    chunks = split_input(text) if args.split_input_file else [text]
    outputs, failed = [], False
    for chunk in chunks:
        try:
            outputs.append(process(chunk, args.passes or [], filename, args.mlir_print_debuginfo))
        except OptError as e:
            print("\n".join(e.lines), file=sys.stderr)
            failed = True
    result = f"{SPLIT_MARKER}\n".join(outputs)
    if args.output == "-":
        sys.stdout.write(result)
    else:
        Path(args.output).write_text(result)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
