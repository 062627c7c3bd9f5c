"""lit configuration for pyfront's FileCheck tests (`lit lit_tests`).

One `.mlir` file per pass, named like the pass, plus `verifier.mlir`.
`pyfront-opt` and `filecheck` resolve to the installed console scripts when
they exist (next to the running Python, then on PATH); otherwise to
`python -m pyfront.opt` / `python -m filecheck`. Either way this checkout
comes first on PYTHONPATH, so the tests run this checkout's passes, also
from a plain checkout or beside an editable install of another one.
"""

# ruff: noqa: F821  (lit runs this file with `config` defined)

import os
import shutil
import sys

import lit.formats

config.name = "pyfront"
config.test_format = lit.formats.ShTest(execute_external=False)  # internal shell: has `not`
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = config.test_source_root

repo_root = os.path.dirname(config.test_source_root)


def find_script(name):
    beside_python = os.path.join(os.path.dirname(sys.executable), name)
    if os.access(beside_python, os.X_OK):
        return beside_python
    return shutil.which(name)


def add_tool(name, module):
    script = find_script(name)
    command = script if script else f"{sys.executable} -m {module}"
    config.substitutions.append((rf"(?<![\w/.-]){name}(?![\w-])", command))
    return script is not None


add_tool("pyfront-opt", "pyfront.opt")
# This checkout first, also for an installed `pyfront-opt`: an editable install
# of another checkout (a worktree's main) would otherwise run that one's passes.
config.environment["PYTHONPATH"] = os.pathsep.join([repo_root] + [p for p in [os.environ.get("PYTHONPATH")] if p])
add_tool("filecheck", "filecheck")
