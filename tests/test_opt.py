"""pyfront-opt as a user runs it: a subprocess, arguments in, text and exit status out.

Uses the installed `pyfront-opt` console script when there is one beside the
running Python, else `python -m pyfront.opt` with this checkout on PYTHONPATH.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from pyfront.passes import all_passes

REPO = Path(__file__).resolve().parent.parent

VALID = """\
func.func @f(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = "pyfront.add"(%a, %b) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}
"""
# The bad op is on line 2; its location is its name's, column 8.
WRONG_RESULT = """\
func.func @g(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4xf32> {
  %0 = "pyfront.add"(%a, %b) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""


def _command() -> list[str]:
    script = Path(sys.executable).parent / "pyfront-opt"
    return [str(script)] if script.exists() else [sys.executable, "-m", "pyfront.opt"]


def run_opt(*args: str, stdin: str | None = None, command: list[str] | None = None):
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
    )
    return subprocess.run(
        (command or _command()) + list(args),
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )


@pytest.fixture
def write(tmp_path):
    def write(text: str, name: str = "input.mlir") -> Path:
        path = tmp_path / name
        path.write_text(text)
        return path

    return write


def test_runs_as_python_module():
    result = run_opt(
        "--lower-to-linalg", stdin=VALID, command=[sys.executable, "-m", "pyfront.opt"]
    )
    assert result.returncode == 0, result.stderr
    assert "linalg.generic" in result.stdout


def test_help_lists_every_registered_pass():
    result = run_opt("--help")
    assert result.returncode == 0, result.stderr
    help_text = " ".join(result.stdout.split())  # argparse wraps long summaries
    for p in all_passes():
        assert f"--{p.name}" in help_text
        assert " ".join(p.summary.split()) in help_text
    assert "--pass-pipeline" in help_text and "--split-input-file" in help_text


def test_verifier_error_names_file_line_and_column(write):
    path = write(WRONG_RESULT)
    result = run_opt(str(path))
    assert result.returncode == 1
    assert result.stdout == ""
    assert re.search(
        rf"^{re.escape(str(path))}:2:8: error: result type should be tensor<4x8xf32>, got tensor<4xf32>$",
        result.stderr,
        re.MULTILINE,
    ), result.stderr


def test_parse_error_names_file_line_and_column(write):
    path = write("func.func @f() {\n  return %missing : tensor<4xf32>\n}\n")
    result = run_opt(str(path))
    assert result.returncode == 1
    assert f"{path}:2:10: error: use of undeclared SSA value name" in result.stderr


def test_pass_failure_names_the_op_location(write):
    nested_guard = """\
func.func @f(%c: i1) {
  scf.if %c {
    "pyfront.guard"(%c) {kind = "branch", reason = "r", site = "m.py:1"} : (i1) -> ()
  }
  return
}
"""
    result = run_opt(str(write(nested_guard)), "--lower-guards")
    assert result.returncode == 1
    assert re.search(
        r"input\.mlir:3:5: error: lower-guards: guard inside a region", result.stderr
    ), result.stderr


def test_split_input_file_processes_chunks_independently(write):
    path = write(VALID + "// -----\n" + WRONG_RESULT + "// -----\n" + VALID.replace("@f", "@h"))
    result = run_opt(str(path), "--split-input-file", "--lower-to-linalg")
    assert result.returncode == 1  # one chunk failed ...
    chunks = result.stdout.split("// -----\n")
    assert len(chunks) == 2  # ... and the other two were still printed
    assert "func.func @f" in chunks[0] and "func.func @h" in chunks[1]
    assert all("linalg.generic" in c and "pyfront." not in c for c in chunks)
    # Line numbers are those of the whole file: the bad op is on line 7.
    assert f"{path}:7:8: error: result type should be" in result.stderr


def test_without_split_a_separator_is_just_a_comment(write):
    result = run_opt(str(write(VALID + "// -----\n" + VALID.replace("@f", "@h"))))
    assert result.returncode == 0, result.stderr
    assert "// -----" not in result.stdout
    assert "func.func @f" in result.stdout and "func.func @h" in result.stdout


def test_passes_run_in_command_line_order(write):
    path = str(write(VALID))
    flags = run_opt(path, "--lower-to-linalg", "--canonicalize", "--cse")
    pipeline = run_opt(path, "--pass-pipeline=lower-to-linalg,canonicalize,cse")
    assert flags.returncode == pipeline.returncode == 0, flags.stderr + pipeline.stderr
    assert flags.stdout == pipeline.stdout
    # Lowering then bufferizing works; bufferizing first meets the unlowered pyfront op.
    late = run_opt(path, "--lower-to-linalg", "--one-shot-bufferize")
    assert late.returncode == 0 and "memref" in late.stdout and "pyfront." not in late.stdout
    early = run_opt(path, "--one-shot-bufferize", "--lower-to-linalg")
    assert early.returncode == 1
    assert "input.mlir:2:8: error: op was not bufferized" in early.stderr


def test_unknown_pass_in_pipeline_is_a_usage_error(write):
    result = run_opt(str(write(VALID)), "--pass-pipeline=lower-to-linalg,no-such-pass")
    assert result.returncode == 2
    assert "unknown pass 'no-such-pass'" in result.stderr


def test_stdin_and_output_file(tmp_path):
    out = tmp_path / "out.mlir"
    result = run_opt("-", "-o", str(out), "--lower-to-linalg", stdin=VALID)
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""
    assert "linalg.generic" in out.read_text()
    bad = run_opt(stdin=WRONG_RESULT)
    assert bad.returncode == 1
    assert "<stdin>:2:8: error:" in bad.stderr
