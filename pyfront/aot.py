"""Ahead-of-time export: `pyfront.export(fn, *example_args, path=...)` and `pyfront-export`.

An artifact is a directory with the IREE module (`module.vmfb`) and a JSON
manifest (runtime/aot.py reads it: `pyfront.load`). The variant is built as
the JIT builds one (graph generation, the JIT pass pipeline, IREE), with two
differences: nothing is speculated from a profile (branches on computed
values become real control flow), and the code is compiled for any CPU of the
architecture rather than for this host.

An artifact runs without Python source, so it cannot honour what the JIT
checks or does in Python at call time; export refuses, naming the cause:
reads of Python state at call time (attributes, globals, closure cells, and
globals compiled as data constants), deferred stores, deferred prints, views
replayed on the host, random draws (the JIT draws them on the host from the
Python generator: runtime/host_draws.py), and object arguments. Globals that name modules,
functions, classes or ufuncs (`np`, `np.tanh`, a helper) are part of the code
and are fixed at export.

Command line (a Python file that defines `fn`, `example_args` and optionally
`example_kwargs` and `dynamic_dims`):

    pyfront-export model.py -o model.pyfront [--backend cpu]
    python -m pyfront.aot model.py -o model.pyfront
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.metadata
import inspect
import json
import os
import runpy
import shutil
import sys
import tempfile
import types
from typing import Any

import numpy as np

from pyfront import layout
from pyfront.errors import Definition, Unsupported
from pyfront.guards import MISSING
from pyfront.runtime.aot import (
    FORMAT,
    MANIFEST,
    VMFB,
    current_versions,
    encode_const,
    manifest_checksum,
)
from pyfront.runtime.results import Const, Format, Input, Node, Output, Stored, ViewOf
from pyfront.specialize import NUMPY_FUNCTION, is_constant


class ExportError(ValueError):
    """A function (or arguments) that an artifact cannot faithfully honour."""


def export(fn, *example_args: Any, path: str | os.PathLike, backend: str = "cpu",
           dynamic_dims: dict[int, Any] | None = None, example_kwargs: dict | None = None) -> str:
    """Compile `fn` for `fn(*example_args, **example_kwargs)` and write an artifact directory at
    `path`; returns the path. The artifact binds its calls as Python does: keyword arguments,
    keyword-only parameters and defaults (stored in the manifest) work as with `fn`.

    `dynamic_dims` maps a parameter's position to the dims of that array to leave
    dynamic (sizes >= 2 at call time), or to True for a Python float passed as
    a runtime value rather than compiled as a constant.
    """
    from pyfront import callables

    target = fn
    fn, leading = callables.resolve(target, "pyfront.export")
    if leading is not callables.binds_nothing:  # an artifact holds no Python objects to pass as arguments
        raise TypeError(f"pyfront.export: a {type(target).__name__} binds arguments (a receiver, a partial's "
                        f"arguments) that an artifact cannot hold; export {fn.__qualname__} and pass them")
    parameters = _parameters(fn)
    bound = callables.positional(fn, example_args, example_kwargs or {})
    if bound is None:
        raise TypeError(f"pyfront.export: the example arguments do not bind to {fn.__qualname__}'s parameters")
    example_args = bound  # one value per parameter, defaults included: what the artifact's calls bind
    relaxed = _relaxations(fn, example_args, dynamic_dims or {})
    arguments = [_arg_spec(fn, i, a, relaxed.get(i)) for i, a in enumerate(example_args)]
    mlir, lowered = _lower(fn, example_args, relaxed, backend)
    vmfb, flags = _compile(fn, mlir, backend)
    manifest = {
        "format": FORMAT,
        "name": fn.__qualname__,
        "backend": backend,
        "iree_flags": list(flags),
        "arguments": arguments,
        "parameters": parameters,
        "entry_guards": [f"arg{i}: {_describe(s)}" for i, s in enumerate(arguments)],
        "iree_input_types": [_iree_type(arguments, p) for p in lowered["inputs"]],
        **lowered,
        "state_updates": [],  # export refuses deferred stores; see the module docstring
        "versions": {**current_versions(), "iree_compiler": _compiler_version()},
        "vmfb_size": len(vmfb),
        "vmfb_sha256": hashlib.sha256(vmfb).hexdigest(),
    }
    manifest["manifest_sha256"] = manifest_checksum(manifest)
    return _write(os.fspath(path), vmfb, manifest)


_KINDS = {inspect.Parameter.POSITIONAL_ONLY: "positional_only",
          inspect.Parameter.POSITIONAL_OR_KEYWORD: "positional_or_keyword",
          inspect.Parameter.VAR_POSITIONAL: "var_positional",
          inspect.Parameter.KEYWORD_ONLY: "keyword_only",
          inspect.Parameter.VAR_KEYWORD: "var_keyword"}


def _parameters(fn) -> list[dict]:
    """The manifest's parameters: name, kind and encoded default, for the artifact to bind calls."""
    entries = []
    for p in inspect.signature(fn, follow_wrapped=False).parameters.values():
        entry = {"name": p.name, "kind": _KINDS[p.kind]}
        if p.default is not inspect.Parameter.empty:
            try:
                entry["default"] = encode_const(p.default)
            except ValueError as e:
                raise ExportError(f"cannot export {fn.__qualname__}: the default of {p.name!r}: {e}") from None
        entries.append(entry)
    return entries


def _relaxations(fn, args: tuple, dynamic_dims: dict) -> dict[int, Any]:
    relaxed: dict[int, Any] = {}
    for i, dims in dynamic_dims.items():
        if not isinstance(i, int) or not 0 <= i < len(args):
            raise ExportError(f"dynamic_dims: {i!r} is not an argument position of {fn.__qualname__}")
        a = args[i]
        if dims is True:
            if type(a) is not float:
                raise ExportError(f"dynamic_dims[{i}] = True is for Python floats, arg{i} is {type(a).__name__}")
            relaxed[i] = True
            continue
        if type(a) is not np.ndarray:
            raise ExportError(f"dynamic_dims[{i}]: arg{i} is {type(a).__name__}, not an ndarray")
        dims = frozenset(d + a.ndim if isinstance(d, int) and d < 0 else d for d in dims)
        for d in dims:
            if not isinstance(d, int) or not 0 <= d < a.ndim:
                raise ExportError(f"dynamic_dims[{i}]: {d!r} is not a dim of arg{i} (shape {a.shape})")
            if a.shape[d] < 2:
                raise ExportError(
                    f"dynamic_dims[{i}]: dim {d} of the example arg{i} has size {a.shape[d]}; a dynamic "
                    "dim needs an example size >= 2 (sizes 0 and 1 compile differently)"
                )
        if dims:
            relaxed[i] = dims
    return relaxed


def _arg_spec(fn, i: int, a: Any, relaxed: Any, name: str | None = None) -> dict:
    name = name or f"arg{i}"
    t = type(a)
    if relaxed is True:
        return {"kind": "float"}
    if t is np.ndarray:
        if a.dtype.kind not in "biuf":
            raise ExportError(f"{name}: arrays of dtype {a.dtype} cannot be exported")
        dims = relaxed or frozenset()
        return {"kind": "ndarray", "dtype": a.dtype.name,
                "shape": [None if d in dims else s for d, s in enumerate(a.shape)]}
    if isinstance(a, np.generic):
        return {"kind": "scalar", "type": t.__name__, "dtype": a.dtype.name}
    if t in (tuple, list) and not (t is tuple and is_constant(a)):
        return {"kind": t.__name__,
                "items": [_arg_spec(fn, i, v, None, f"{name}[{k}]") for k, v in enumerate(a)]}
    if t is dict:
        if not all(type(k) is str for k in a):
            raise ExportError(f"{name}: only dicts with str keys can be exported")
        return {"kind": "dict", "keys": list(a), "items": [_arg_spec(fn, i, v, None, f"{name}[{k!r}]")
                                                             for k, v in a.items()]}
    if is_constant(a):
        try:
            return {"kind": "const", "value": encode_const(a)}
        except ValueError as e:
            raise ExportError(f"{name}: {e}") from None
    raise ExportError(
        f"{name}: {t.__name__} objects cannot be exported (their attributes are read at call time); "
        "pass the arrays as arguments"
    )


_IREE_ELEMENT = {"bool": "i1", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64", "uint8": "ui8",
                 "uint16": "ui16", "uint32": "ui32", "uint64": "ui64", "float16": "f16", "float32": "f32",
                 "float64": "f64"}


def _iree_type(arguments: list, path: str) -> str:
    """The `--input=` type of input `path` for iree-run-module, e.g. `?x8xf32` or `f64`."""
    from pyfront.dialects.state_path import Path

    parsed = Path.parse(path)
    spec = arguments[parsed.arg_index]
    for _, k in parsed.steps:
        spec = spec["items"][spec["keys"].index(k) if spec["kind"] == "dict" else k]
    if spec["kind"] == "float":
        return "f64"
    element = _IREE_ELEMENT.get(spec["dtype"], spec["dtype"])
    dims = ["?" if d is None else str(d) for d in spec.get("shape", [])]
    return "x".join([*dims, element])


def _describe(spec: dict) -> str:
    from pyfront.runtime.aot import describe_spec

    text = describe_spec(spec)
    return text + (" with dynamic dims >= 2" if None in spec.get("shape", ()) else "")


def _lower(fn, args: tuple, relaxed: dict, backend: str):
    """Graph generation and the JIT pipeline for `backend`; refuses what an artifact cannot honour."""
    from pyfront.dialects import verify_module
    from pyfront.dialects.mlir import ir
    from pyfront.graphgen import generate
    from pyfront.passes import run_passes
    from pyfront.passes.pipeline import EXPORT_PIPELINE
    from pyfront.passes.funcs import functions, input_paths, output_paths
    from pyfront.passes.opaque_constants import BACKEND
    from pyfront.runtime.lowering import in_place_inputs

    where = f"{fn.__code__.co_filename}:{fn.__code__.co_firstlineno}"
    try:
        graph = generate(fn, args, {}, None, relaxed)
    except Unsupported as e:
        raise ExportError(f"cannot export {fn.__qualname__}: {e}") from None
    with graph.context:
        verify_module(graph.module)
    for d in graph.draws:
        raise ExportError(f"cannot export {fn.__qualname__}: {d.site}: it draws random numbers ({d.text}), "
                          "which the JIT draws on the host from the Python generator; an artifact has none: "
                          "draw them before the call and pass them as an argument")
    for g in graph.identity_guards:
        # Code objects and (immutable) default values are part of the functions exported.
        if g.expected is not MISSING and not _is_code(g.expected) and g.name != "__defaults__":
            raise ExportError(
                f"cannot export {fn.__qualname__}: {g.site}: reads {g.describe().split(' is ')[0]} "
                f"(a {type(g.expected).__name__} that may change; an artifact cannot read Python "
                "state): pass it as an argument"
            )
    if graph.mutations:
        paths = ", ".join(p for p, _ in graph.mutations)
        raise ExportError(f"cannot export {fn.__qualname__} ({where}): it writes into arrays the caller passes "
                          f"({paths}); artifacts do not write into their arguments yet")
    for g in graph.state_guards:
        if _item_of_a_dict_argument(g.path, args):  # the artifact checks it against the argument's spec
            continue
        raise ExportError(
            f"cannot export {fn.__qualname__}: {g.site}: reads Python state at call time "
            f"({g.describe()}): pass it as an argument"
        )
    if graph.effects:
        raise ExportError(f"cannot export {fn.__qualname__} ({where}): it prints or warns (an artifact issues neither)")
    if graph.commits or graph.appends:
        paths = ", ".join(p for p, _ in graph.commits + graph.appends)
        raise ExportError(f"cannot export {fn.__qualname__} ({where}): it writes Python state ({paths})")
    with graph.context:
        try:
            layout.check_results(graph.module, Definition.of(fn))
        except Unsupported as e:
            raise ExportError(f"cannot export {fn.__qualname__}: {e}") from None
        graph.module.operation.attributes[BACKEND] = ir.StringAttr.get(backend)
        run_passes(graph.module, list(EXPORT_PIPELINE))
        (f,) = [f for f in functions(graph.module.operation) if f.name.value == graph.func_name]
        inputs, outputs = input_paths(f), output_paths(f)
        in_place = in_place_inputs(f, len(inputs))
        guards = [dict(zip(("kind", "site", "reason"), (ir.StringAttr(s).value for s in ir.ArrayAttr(g))))
                  for g in (ir.ArrayAttr(f.attributes["pyfront.guards"]) if "pyfront.guards" in f.attributes else [])]
        mlir = str(graph.module)
    for p in inputs:
        if not p.startswith("arg") or "." in p:
            raise ExportError(f"cannot export {fn.__qualname__} ({where}): it reads Python state ({p})")
    for p in outputs:
        if p != "guards" and not p.startswith("return"):
            raise ExportError(f"cannot export {fn.__qualname__} ({where}): it writes Python state ({p})")
    fields = {"entry": graph.func_name, "inputs": inputs, "outputs": outputs, "guards": guards,
              "result": _result(fn, graph.result), "inputs_written": sorted(in_place.written),
              "outputs_from_inputs": [list(pair) for pair in in_place.returned]}
    return mlir, fields


def _item_of_a_dict_argument(path, args: tuple) -> bool:
    """Whether `path` reads into a dict argument (`**kwargs`' items): the JIT reads those as state,
    an artifact as part of the argument (`_arg_spec` gives each item a spec that its calls check)."""
    i = path.arg_index
    return i is not None and type(args[i]) is dict and bool(path.steps) and all(k == "item" for k, _ in path.steps)


def _is_code(value: Any) -> bool:
    """Globals fixed at export: modules, functions and their code, classes, ufuncs, NumPy functions,
    dtypes (not data)."""
    from pyfront.api import CompiledFunction

    return isinstance(value, (types.ModuleType, types.FunctionType, types.CodeType, types.BuiltinFunctionType,
                              type, np.ufunc, NUMPY_FUNCTION, np.dtype, CompiledFunction))


def _result(fn, node: Any) -> dict:
    if isinstance(node, Output):
        pytype = node.pytype
        name = "ndarray" if pytype is np.ndarray else pytype.__name__
        return {"output": node.index, "pytype": name}
    if isinstance(node, Const):
        try:
            return {"const": encode_const(node.value)}
        except ValueError as e:
            raise ExportError(f"cannot export {fn.__qualname__}: it returns a constant that {e}") from None
    if isinstance(node, Input):
        if node.path.steps or node.path.arg_index is None:
            raise ExportError(f"cannot export {fn.__qualname__}: it returns Python state ({node.path})")
        return {"arg": node.path.arg_index}
    if isinstance(node, ViewOf):
        raise ExportError(
            f"cannot export {fn.__qualname__}: it returns a view of an array (replayed on the host "
            "by the JIT to keep NumPy's aliasing); return a copy (`.copy()`) instead"
        )
    if isinstance(node, Stored):
        raise ExportError(f"cannot export {fn.__qualname__}: it returns Python state ({node.path})")
    if isinstance(node, Node) and node.kind in (tuple, list):
        return {"seq": node.kind.__name__, "items": [_result(fn, n) for n in node.items]}
    kind = str if isinstance(node, Format) else getattr(node, "kind", type(node))
    raise ExportError(f"cannot export {fn.__qualname__}: it returns a {kind.__name__} (only arrays, "
                      "scalars, constants and tuples/lists of them)")


def _compile(fn, mlir: str, backend: str) -> tuple[bytes, tuple[str, ...]]:
    from pyfront.runtime.iree_backend import CompileError, compile_flags, compile_vmfb, portable

    be = portable(backend)
    try:
        return compile_vmfb(mlir, be).vmfb, compile_flags(mlir, be)
    except CompileError as e:
        raise ExportError(f"IREE could not compile {fn.__qualname__} for {backend!r}:\n{e.diagnostics}") from None


def _compiler_version() -> str:
    try:
        return importlib.metadata.version("iree-base-compiler")
    except importlib.metadata.PackageNotFoundError:
        from iree.compiler.version import VERSION

        return VERSION


def _write(path: str, vmfb: bytes, manifest: dict) -> str:
    """Write the artifact directory atomically: a reader never sees half of one.

    An existing `path` is replaced only if it is empty or is an artifact
    pyfront wrote (see `_refuse_foreign`): export never deletes a file it did
    not write.
    """
    if os.path.lexists(path):
        _refuse_foreign(path)
    parent = os.path.dirname(os.path.abspath(path))
    os.makedirs(parent, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=".pyfront-export-", dir=parent)
    try:
        with open(os.path.join(tmp, VMFB), "wb") as f:
            f.write(vmfb)
        with open(os.path.join(tmp, MANIFEST), "w", encoding="utf-8") as f:
            json.dump(manifest, f, indent=1, sort_keys=True)
            f.write("\n")
        if os.path.lexists(path):
            _refuse_foreign(path)  # again: something may have written into it meanwhile
            # Move the old artifact aside rather than delete it first, so that
            # `path` is never missing a manifest while its module is present.
            old = tempfile.mkdtemp(prefix=".pyfront-old-", dir=parent)
            os.replace(path, os.path.join(old, "artifact"))
            os.replace(tmp, path)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, path)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return path


def _refuse_foreign(path: str) -> None:
    """Raise ExportError unless `path` is an empty directory or an artifact pyfront wrote.

    A pyfront artifact holds exactly `manifest.json` (a JSON object whose
    format is FORMAT) and `module.vmfb`, both regular files; a directory with
    any other entry (a web app's folder that happens to have a manifest.json)
    is not one.
    """
    if os.path.islink(path) or not os.path.isdir(path):
        raise ExportError(f"{path!r} exists and is not a directory; not overwriting it")
    entries = set(os.listdir(path))
    if not entries:
        return
    foreign = sorted(entries - {MANIFEST, VMFB})
    if foreign or not all(os.path.isfile(os.path.join(path, e)) and not os.path.islink(os.path.join(path, e))
                          for e in entries):
        shown = ", ".join(foreign[:5]) + (", ..." if len(foreign) > 5 else "")
        raise ExportError(
            f"{path!r} exists and holds files pyfront did not write ({shown or 'links or folders'}); "
            "not overwriting it: export to a new or empty directory"
        )
    try:
        with open(os.path.join(path, MANIFEST), encoding="utf-8") as f:
            written_by_pyfront = json.load(f).get("format") == FORMAT
    except (OSError, UnicodeDecodeError, ValueError, AttributeError):
        written_by_pyfront = False
    if not written_by_pyfront:
        raise ExportError(
            f"{path!r} exists and its {MANIFEST} is not a pyfront artifact manifest; not overwriting it"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="pyfront-export",
        description="Export a function to a pyfront artifact (module.vmfb + manifest.json). "
        "SCRIPT is a Python file that defines `fn`, `example_args` (a tuple) and optionally "
        "`example_kwargs` (a dict) and `dynamic_dims` (a dict: parameter position -> dims).",
    )
    parser.add_argument("script")
    parser.add_argument("-o", "--output", required=True, help="artifact directory to write")
    parser.add_argument("--backend", default="cpu")
    ns = parser.parse_args(argv)
    scope = runpy.run_path(ns.script, run_name="__pyfront_export__")
    missing = [n for n in ("fn", "example_args") if n not in scope]
    if missing:
        parser.error(f"{ns.script} does not define {' and '.join(missing)}")
    try:
        path = export(scope["fn"], *scope["example_args"], path=ns.output, backend=ns.backend,
                      dynamic_dims=scope.get("dynamic_dims"), example_kwargs=scope.get("example_kwargs"))
    except (ExportError, TypeError, ValueError) as e:
        print(f"pyfront-export: error: {e}", file=sys.stderr)
        return 1
    with open(os.path.join(path, MANIFEST), encoding="utf-8") as f:
        entry = json.load(f)["entry"]
    print(f"wrote {path} (entry function {entry!r})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
