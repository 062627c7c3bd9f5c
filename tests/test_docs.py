"""The docs are checked: every ```python example runs, the pyfront-opt examples print what the
doc says, and docs/dialect.md is what `python -m pyfront.dialects.reference` generates."""

from __future__ import annotations

import re
import runpy
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.MULTILINE | re.DOTALL)
PYTHON_DOCS = ["compile.md", "what-compiles.md", "idioms.md", "nn.md", "grad.md", "aot.md", "distributed.md",
               "performance.md"]


def blocks(path: Path) -> list[tuple[str, str]]:
    """(info string, body) of each fenced block, in order."""
    return [(m[1], m[2]) for m in FENCE.finditer(path.read_text())]


def python_examples() -> list[tuple[str, int, str]]:
    out = []
    for name in ["../README.md", *PYTHON_DOCS]:
        for i, (lang, body) in enumerate(b for b in blocks(DOCS / name) if b[0] == "python"):
            out.append((name.removeprefix("../"), i, body))
    return out


@pytest.mark.iree
@pytest.mark.parametrize("doc, index, code", python_examples(), ids=lambda v: str(v)[:20] if isinstance(v, str) else v)
def test_python_example_runs(doc, index, code, tmp_path, monkeypatch, capsys):
    # Run from a real file: pyfront reads the function's source, as for user code; with the
    # user's defaults (the suite's conftest makes calls wait for their compiles).
    monkeypatch.delenv("PYFRONT_WAIT_FOR_COMPILE", raising=False)
    path = tmp_path / f"{Path(doc).stem.replace('-', '_')}_{index}.py"
    path.write_text(code)
    monkeypatch.syspath_prepend(str(tmp_path))
    runpy.run_path(str(path), run_name="__main__")


def test_docs_have_python_examples():
    assert all(any(lang == "python" for lang, _ in blocks(DOCS / name)) for name in PYTHON_DOCS)


def pyfront_opt_examples() -> list[tuple[str, str, list[str]]]:
    """(input module, command, lines the output must contain) from docs/pyfront-opt.md."""
    out, module = [], None
    doc = blocks(DOCS / "pyfront-opt.md")
    for i, (lang, body) in enumerate(doc):
        if lang == "mlir":
            module = body
        elif lang == "sh":
            expected = doc[i + 1][1] if i + 1 < len(doc) and doc[i + 1][0] == "text" else ""
            out.append((module, body.strip(), [line.strip() for line in expected.splitlines() if line.strip()]))
    return out


@pytest.mark.parametrize("module, command, expected", pyfront_opt_examples(), ids=lambda v: v if isinstance(v, str) and v.startswith("pyfront-opt") else "")
def test_pyfront_opt_example(module, command, expected, tmp_path):
    (tmp_path / "guarded.mlir").write_text(module)
    argv = shlex.split(command)
    assert argv[0] == "pyfront-opt"
    run = subprocess.run([sys.executable, "-m", "pyfront.opt", *argv[1:]], cwd=tmp_path, capture_output=True,
                         text=True, timeout=120, check=False)
    assert run.returncode == 0, run.stderr
    for line in expected:
        assert line in run.stdout, f"{line!r} not in:\n{run.stdout}"


def test_pyfront_opt_doc_has_examples():
    assert len(pyfront_opt_examples()) >= 2


def test_dialect_reference_is_up_to_date():
    from pyfront.dialects.reference import reference

    assert (DOCS / "dialect.md").read_text() == reference(), (
        "docs/dialect.md is stale: run `python -m pyfront.dialects.reference > docs/dialect.md`")


def test_readme_links_the_docs():
    readme = (ROOT / "README.md").read_text()
    for name in ["compile.md", "pyfront-opt.md", "dialect.md", "what-compiles.md"]:
        assert f"docs/{name}" in readme
