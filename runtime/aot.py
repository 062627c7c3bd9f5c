"""Load and call artifacts written by `pyfront.export`, without the compiler.

Contract:

* An artifact is a directory holding `module.vmfb` (an IREE module) and
  `manifest.json` (`FORMAT` below). This module imports only NumPy, the
  standard library, `iree.runtime` and pyfront's IREE runtime layer
  (`iree_backend`, which loads `iree.compiler` only to compile): no compiler,
  no user source.
* `load(path)` checks the manifest (format, its own checksum, the pyfront and
  IREE runtime versions it was built for) and the vmfb (size and SHA-256)
  before IREE sees a byte, and raises `ArtifactError` naming what is wrong.
  It returns an `Artifact`, a callable.
* `Artifact(*args, **kwargs)` binds the call to the exported function's
  parameters as Python does (keywords by name, defaults from the manifest;
  Python's TypeError for a call that does not bind), then checks every
  argument against the manifest (TypeError for
  a wrong type or dtype, ValueError for a wrong shape, a dynamic dim below 2,
  or a constant argument with another value), runs the module (the inputs
  IREE 3.13 writes into, `inputs_written`, are uploaded, never passed as a
  device-resident buffer, and `outputs_from_inputs` are made from the
  inputs: iree_backend.InPlaceInputs), checks the
  in-graph guard flags (`GuardFailed`, naming the failed assumption: an
  artifact cannot fall back to the interpreter), and returns the result tree
  with the Python types the interpreter returned at export time.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import os
from typing import Any

import numpy as np

FORMAT = "pyfront-artifact/1"
MANIFEST = "manifest.json"
VMFB = "module.vmfb"

# Python types of arguments and results, by name (never by pickling).
_PY_TYPES = {"int": int, "float": float, "bool": bool, "str": str, "NoneType": type(None)}
_SEQ_TYPES = {"tuple": tuple, "list": list}
# A dict argument (as `**kwargs` is) is specialized to its keys, in order, each item to its own spec.


class ArtifactError(ValueError):
    """An artifact that cannot be loaded: unreadable, tampered, or built for other versions."""


class GuardFailed(RuntimeError):
    """An assumption compiled into the artifact failed for this call."""


# --------------------------------------------------------------------------
# Constants: a JSON encoding that keeps Python types exactly
# --------------------------------------------------------------------------


def encode_const(value: Any) -> dict:
    """`value` (int, float, bool, str, None, NumPy array, or tuples/lists of them) as JSON."""
    t = type(value)
    if t is float:
        if math.isnan(value):
            raise ValueError("NaN constants cannot be honoured (NaN never equals itself)")
        return {"type": "float", "hex": value.hex()}  # exact, keeps -0.0 and inf
    if t in (int, bool, str, type(None)):
        return {"type": t.__name__, "value": value}
    if t in (tuple, list):
        return {"type": t.__name__, "items": [encode_const(v) for v in value]}
    if t is np.ndarray and value.dtype.kind in "biuf":
        data = base64.b64encode(np.ascontiguousarray(value).tobytes()).decode()
        return {"type": "ndarray", "dtype": value.dtype.str, "shape": list(value.shape), "data": data}
    if isinstance(value, np.generic) and value.dtype.kind in "biuf":
        return {"type": "numpy", "dtype": value.dtype.str, "repr": np.array(value).tobytes().hex()}
    raise ValueError(f"a constant of type {t.__name__} cannot be stored in an artifact")


_PARAMETER_KINDS = ("positional_only", "positional_or_keyword", "var_positional", "keyword_only", "var_keyword")


def bind(name: str, parameters: list[dict], args: tuple, kwargs: dict) -> tuple:
    """The values of `parameters` (manifest entries: name, kind, an encoded default) for a call
    with `args` and `kwargs`, bound as CPython binds a call of the exported function: keywords,
    then the count of positional arguments, then missing ones, with CPython's messages. `*args`
    gets the extra positional arguments as a tuple, `**kwargs` the extra keywords as a dict."""
    by_position = [p for p in parameters if p["kind"] in ("positional_only", "positional_or_keyword")]
    var = {p["kind"]: p["name"] for p in parameters if p["kind"] in ("var_positional", "var_keyword")}
    kinds = {p["name"]: p["kind"] for p in parameters if p["kind"] not in var}
    values = {p["name"]: a for p, a in zip(by_position, args)}
    # With **kwargs, a keyword naming a positional-only parameter is one of its items.
    extra = {k: v for k, v in kwargs.items()
             if k not in kinds or kinds[k] == "positional_only" and "var_keyword" in var}
    passed_by_keyword = [k for k in kwargs if k not in extra and kinds.get(k) == "positional_only"]
    for key in kwargs:
        if key in extra and "var_keyword" not in var:
            raise TypeError(f"{name}() got an unexpected keyword argument {key!r}")
        if key in values and key not in extra and kinds[key] != "positional_only":
            raise TypeError(f"{name}() got multiple values for argument {key!r}")
    if passed_by_keyword:
        raise TypeError(f"{name}() got some positional-only arguments passed as keyword arguments: "
                        f"'{', '.join(passed_by_keyword)}'")
    values.update((k, v) for k, v in kwargs.items() if k not in extra)
    if "var_positional" in var:
        values[var["var_positional"]] = tuple(args[len(by_position):])
    if "var_keyword" in var:
        values[var["var_keyword"]] = extra
    if len(args) > len(by_position) and "var_positional" not in var:
        required = sum("default" not in p for p in by_position)
        counted = f"from {required} to {len(by_position)}" if required < len(by_position) else str(len(by_position))
        plural = "s" if required < len(by_position) or len(by_position) != 1 else ""
        keyword_only = sum(k in kwargs for k, kind in kinds.items() if kind == "keyword_only")
        also = (f" positional argument{'s' * (len(args) != 1)} (and {keyword_only} keyword-only "
                f"argument{'s' * (keyword_only != 1)})") if keyword_only else ""
        verb = "was" if len(args) == 1 and not keyword_only else "were"
        raise TypeError(f"{name}() takes {counted} positional argument{plural} but {len(args)}{also} {verb} given")
    for kind, word in (("positional", "positional"), ("keyword_only", "keyword-only")):
        missing = [p["name"] for p in parameters if p["name"] not in values and "default" not in p
                   and (p["kind"] == "keyword_only") == (kind == "keyword_only")]
        if missing:
            raise TypeError(f"{name}() missing {len(missing)} required {word} argument"
                            f"{'s' * (len(missing) > 1)}: {_listed(missing)}")
    return tuple(values[p["name"]] if p["name"] in values else decode_const(p["default"]) for p in parameters)


def _listed(names: list[str]) -> str:
    """'a'; 'a' and 'b'; 'a', 'b', and 'c' (CPython's lists in binding errors)."""
    quoted = [repr(n) for n in names]
    if len(quoted) <= 2:
        return " and ".join(quoted)
    return ", ".join(quoted[:-1]) + ", and " + quoted[-1]


def decode_const(enc: dict) -> Any:
    t = enc["type"]
    if t == "float":
        return float.fromhex(enc["hex"])
    if t in _PY_TYPES:
        value = enc["value"]
        if type(value) is not _PY_TYPES[t]:
            raise ArtifactError(f"manifest: constant {value!r} is not a {t}")
        return value
    if t in _SEQ_TYPES:
        return _SEQ_TYPES[t](decode_const(i) for i in enc["items"])
    if t == "ndarray":
        dtype = np.dtype(enc["dtype"])
        return np.frombuffer(base64.b64decode(enc["data"]), dtype).reshape(enc["shape"]).copy()
    if t == "numpy":
        return np.frombuffer(bytes.fromhex(enc["repr"]), np.dtype(enc["dtype"]))[0]
    raise ArtifactError(f"manifest: unknown constant type {t!r}")


# --------------------------------------------------------------------------
# Manifest integrity and versions
# --------------------------------------------------------------------------


def manifest_checksum(manifest: dict) -> str:
    """SHA-256 of the manifest's canonical JSON, without its own `manifest_sha256` field."""
    body = {k: v for k, v in manifest.items() if k != "manifest_sha256"}
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()


def current_versions() -> dict:
    """The versions a loaded artifact must have been built for."""
    from iree.runtime.version import VERSION as iree_runtime

    from pyfront import __version__

    return {"pyfront": __version__, "iree_runtime": iree_runtime}


def _read_manifest(path: str) -> dict:
    mpath = os.path.join(path, MANIFEST)
    try:
        with open(mpath, encoding="utf-8") as f:
            manifest = json.load(f)
    except FileNotFoundError:
        raise ArtifactError(f"{path!r} is not a pyfront artifact (no {MANIFEST})") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ArtifactError(f"{mpath}: unreadable manifest (truncated or corrupted?): {e}") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        found = manifest.get("format") if isinstance(manifest, dict) else None
        raise ArtifactError(f"{mpath}: not a {FORMAT} manifest (format {found!r})")
    if manifest.get("manifest_sha256") != manifest_checksum(manifest):
        raise ArtifactError(f"{mpath}: manifest checksum mismatch (the manifest was modified or corrupted)")
    built, here = manifest.get("versions"), current_versions()
    if type(built) is not dict:
        raise ArtifactError(f"{mpath}: malformed manifest: versions: expected dict, got {type(built).__name__}")
    for name, version in here.items():
        if built.get(name) != version:
            raise ArtifactError(
                f"{path!r} was built by {name} {built.get(name)}, this process has {name} {version}; "
                "re-export it with this version"
            )
    return manifest


def _read_vmfb(path: str, manifest: dict) -> bytes:
    vpath = os.path.join(path, VMFB)
    try:
        with open(vpath, "rb") as f:
            vmfb = f.read()
    except OSError as e:
        raise ArtifactError(f"{vpath}: cannot read the module: {e}") from None
    if len(vmfb) != manifest["vmfb_size"]:
        raise ArtifactError(
            f"{vpath}: {len(vmfb)} bytes, the manifest says {manifest['vmfb_size']} (truncated?)"
        )
    if hashlib.sha256(vmfb).hexdigest() != manifest["vmfb_sha256"]:
        raise ArtifactError(f"{vpath}: checksum mismatch (the module was modified or corrupted)")
    return vmfb


# --------------------------------------------------------------------------
# Arguments and results
# --------------------------------------------------------------------------


def describe_spec(spec: dict) -> str:
    kind = spec["kind"]
    if kind == "ndarray":
        dims = ", ".join("?" if d is None else str(d) for d in spec["shape"])
        return f"ndarray[{spec['dtype']}, ({dims}{',' if len(spec['shape']) == 1 else ''})]"
    if kind == "scalar":
        return f"numpy.{spec['type']}"
    if kind == "float":
        return "float"
    if kind == "const":
        return f"the constant {decode_const(spec['value'])!r}"
    if kind in _SEQ_TYPES:
        inner = ", ".join(describe_spec(s) for s in spec["items"])
        return f"{kind}({inner})"
    if kind == "dict":
        inner = ", ".join(f"{k!r}: {describe_spec(s)}" for k, s in zip(spec["keys"], spec["items"]))
        return f"dict({{{inner}}})"
    raise ArtifactError(f"manifest: unknown argument kind {kind!r}")


def _check(name: str, value: Any, spec: dict, inputs: dict) -> None:
    """Check `value` (argument `name`) against `spec`; record its runtime inputs in `inputs`."""
    kind = spec["kind"]
    if kind == "ndarray":
        if type(value) is not np.ndarray:
            raise TypeError(f"{name}: expected {describe_spec(spec)}, got {type(value).__name__}")
        if value.dtype != np.dtype(spec["dtype"]):
            raise TypeError(f"{name}: expected dtype {spec['dtype']}, got {value.dtype}")
        shape = spec["shape"]
        if value.ndim != len(shape) or any(d is not None and d != s for d, s in zip(shape, value.shape)):
            raise ValueError(f"{name}: expected shape {describe_spec(spec)}, got {value.shape}")
        for i, (d, s) in enumerate(zip(shape, value.shape)):
            if d is None and s < 2:
                raise ValueError(
                    f"{name}: dynamic dim {i} has size {s}; the artifact was compiled for sizes >= 2 "
                    "(sizes 0 and 1 broadcast or empty differently: export a variant for them)"
                )
        inputs[name] = value
    elif kind == "scalar":
        if type(value).__name__ != spec["type"] or not isinstance(value, np.generic):
            raise TypeError(f"{name}: expected numpy.{spec['type']}, got {type(value).__name__}")
        inputs[name] = value
    elif kind == "float":
        if type(value) is not float:
            raise TypeError(f"{name}: expected a Python float, got {type(value).__name__}")
        inputs[name] = np.float64(value)
    elif kind == "const":
        try:
            same = encode_const(value) == spec["value"]
        except ValueError:
            same = False
        if not same:
            raise ValueError(
                f"{name}: the artifact was compiled for {describe_spec(spec)} "
                f"(a Python constant), got {value!r}"
            )
    elif kind in _SEQ_TYPES:
        if type(value) is not _SEQ_TYPES[kind] or len(value) != len(spec["items"]):
            raise TypeError(f"{name}: expected {describe_spec(spec)}, got {type(value).__name__}"
                            f"{'' if not isinstance(value, (tuple, list)) else f' of length {len(value)}'}")
        for i, (v, s) in enumerate(zip(value, spec["items"])):
            _check(f"{name}[{i}]", v, s, inputs)
    elif kind == "dict":
        if type(value) is not dict or list(value) != spec["keys"]:
            got = f"dict with keys {list(value)}" if type(value) is dict else type(value).__name__
            raise TypeError(f"{name}: expected {describe_spec(spec)}, got {got}")
        for k, s in zip(spec["keys"], spec["items"]):
            _check(f"{name}[{k!r}]", value[k], s, inputs)
    else:
        raise ArtifactError(f"manifest: unknown argument kind {kind!r}")


_PY_KINDS = {"float": "f", "int": "iu", "bool": "b"}  # the dtype kinds each Python type is boxed from


def _box(array: np.ndarray, pytype: str) -> Any:
    if pytype == "ndarray":
        return array
    if array.ndim != 0:
        raise ArtifactError(f"manifest: a {pytype} result, the module returned shape {array.shape}")
    if pytype in _PY_KINDS:
        if array.dtype.kind not in _PY_KINDS[pytype]:
            raise ArtifactError(f"manifest: a {pytype} result, the module returned {array.dtype}")
        return _PY_TYPES[pytype](array[()])
    value = array[()]
    if type(value).__name__ != pytype:
        raise ArtifactError(f"manifest: output of type {type(value).__name__}, expected {pytype}")
    return value


def _validate(manifest: dict) -> None:
    """Check the manifest's structure; raise ArtifactError (naming the field) for any defect.

    The checksum only shows that the manifest is the one written with it; a
    manifest written by a buggy or hostile tool can carry a valid checksum.
    Every field the loader and the call path read is checked here, so that a
    malformed one is an ArtifactError at load, never an IndexError or
    KeyError at some later call.
    """

    def fail(field: str, why: str):
        raise ArtifactError(f"malformed manifest: {field}: {why}")

    def typed(field: str, value: Any, t: type) -> Any:
        if type(value) is not t:
            fail(field, f"expected {t.__name__}, got {type(value).__name__}")
        return value

    def field(name: str, t: type) -> Any:
        if name not in manifest:
            fail(name, "missing")
        return typed(name, manifest[name], t)

    def strings(name: str) -> list:
        items = field(name, list)
        for i, v in enumerate(items):
            typed(f"{name}[{i}]", v, str)
        return items

    for name in ("name", "entry", "backend", "vmfb_sha256"):
        field(name, str)
    if field("vmfb_size", int) < 0:
        fail("vmfb_size", "negative")
    strings("iree_flags")
    strings("entry_guards")
    strings("iree_input_types")
    if field("state_updates", list):
        fail("state_updates", "an artifact cannot write Python state")
    runtime_inputs: set[str] = set()
    for i, spec in enumerate(field("arguments", list)):
        _validate_spec(f"arguments[{i}]", spec, f"arg{i}", runtime_inputs, fail, typed)
    for i, p in enumerate(strings("inputs")):
        if p not in runtime_inputs:
            fail(f"inputs[{i}]", f"{p!r} is not a runtime value of an argument")
    outputs = strings("outputs")
    for i, p in enumerate(outputs):
        if p != "guards" and not p.startswith("return"):
            fail(f"outputs[{i}]", f"unknown output {p!r}")
    for i, g in enumerate(field("guards", list)):
        typed(f"guards[{i}]", g, dict)
        for k in ("kind", "site", "reason"):
            typed(f"guards[{i}].{k}", g.get(k), str)
    if "guards" in outputs and not manifest["guards"]:
        fail("guards", "the module returns guard flags but the manifest lists no guard")
    parameters = manifest.get("parameters")
    if parameters is not None:
        typed("parameters", parameters, list)
        if len(parameters) != len(manifest["arguments"]):
            fail("parameters", f"{len(parameters)} parameters for {len(manifest['arguments'])} arguments")
        for i, p in enumerate(parameters):
            typed(f"parameters[{i}]", p, dict)
            typed(f"parameters[{i}].name", p.get("name"), str)
            if p.get("kind") not in _PARAMETER_KINDS:
                fail(f"parameters[{i}].kind", f"unknown parameter kind {p.get('kind')!r}")
            if "default" in p:
                _validate_const(f"parameters[{i}].default", p["default"], fail)
    _validate_in_place(manifest, fail, typed)
    n_returned = sum(p != "guards" for p in outputs)
    _validate_result("result", field("result", dict), len(manifest["arguments"]), n_returned, fail, typed)


def _validate_in_place(manifest: dict, fail, typed) -> None:
    """`inputs_written`: the inputs IREE writes into (iree_backend.InPlaceInputs); `outputs_from_inputs`:
    [output, input] for each output that is such an input as it came in."""
    n_inputs, outputs = len(manifest["inputs"]), manifest["outputs"]
    if "inputs_written" not in manifest:
        fail("inputs_written", "missing")
    written = typed("inputs_written", manifest["inputs_written"], list)
    for j, k in enumerate(written):
        if not 0 <= typed(f"inputs_written[{j}]", k, int) < n_inputs or k in written[:j]:
            fail(f"inputs_written[{j}]", f"{k} is not another of the module's {n_inputs} inputs")
    if "outputs_from_inputs" not in manifest:
        fail("outputs_from_inputs", "missing")
    made = []
    for j, pair in enumerate(typed("outputs_from_inputs", manifest["outputs_from_inputs"], list)):
        if type(pair) is not list or len(pair) != 2:
            fail(f"outputs_from_inputs[{j}]", "expected [output, input]")
        i, k = (typed(f"outputs_from_inputs[{j}][{n}]", v, int) for n, v in enumerate(pair))
        if not 0 <= i < len(outputs) or outputs[i] == "guards" or i in made:
            fail(f"outputs_from_inputs[{j}]", f"{i} is not another of the module's returned outputs")
        if k not in written:
            fail(f"outputs_from_inputs[{j}]", f"input {k} is not one of inputs_written")
        made.append(i)


def _validate_spec(where: str, spec: Any, name: str, runtime_inputs: set, fail, typed) -> None:
    typed(where, spec, dict)
    kind = typed(f"{where}.kind", spec.get("kind"), str)
    if kind == "ndarray":
        dtype = typed(f"{where}.dtype", spec.get("dtype"), str)
        try:
            ok = np.dtype(dtype).kind in "biuf"
        except TypeError:
            ok = False
        if not ok:
            fail(f"{where}.dtype", f"{dtype!r} is not a numeric dtype")
        for d, size in enumerate(typed(f"{where}.shape", spec.get("shape"), list)):
            if size is not None and (type(size) is not int or size < 0):
                fail(f"{where}.shape[{d}]", f"{size!r} is not a size")
        runtime_inputs.add(name)
    elif kind == "scalar":
        typed(f"{where}.type", spec.get("type"), str)
        typed(f"{where}.dtype", spec.get("dtype"), str)
        runtime_inputs.add(name)
    elif kind == "float":
        runtime_inputs.add(name)
    elif kind == "const":
        _validate_const(f"{where}.value", spec.get("value"), fail)
    elif kind in _SEQ_TYPES:
        for i, item in enumerate(typed(f"{where}.items", spec.get("items"), list)):
            _validate_spec(f"{where}.items[{i}]", item, f"{name}[{i}]", runtime_inputs, fail, typed)
    elif kind == "dict":
        keys, items = typed(f"{where}.keys", spec.get("keys"), list), typed(f"{where}.items", spec.get("items"), list)
        if len(keys) != len(items) or len(set(map(str, keys))) != len(keys):
            fail(f"{where}.keys", "expected one distinct key per item")
        for i, (k, item) in enumerate(zip(keys, items)):
            typed(f"{where}.keys[{i}]", k, str)
            _validate_spec(f"{where}.items[{i}]", item, f"{name}[{k!r}]", runtime_inputs, fail, typed)
    else:
        fail(f"{where}.kind", f"unknown argument kind {kind!r}")


def _validate_const(where: str, enc: Any, fail) -> None:
    try:
        if type(enc) is not dict:
            raise TypeError(f"expected dict, got {type(enc).__name__}")
        decode_const(enc)
    except ArtifactError as e:
        fail(where, str(e).removeprefix("manifest: "))
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as e:  # binascii.Error is a ValueError
        fail(where, f"not a constant ({type(e).__name__}: {e})")


def _validate_result(where: str, node: Any, n_args: int, n_returned: int, fail, typed) -> None:
    typed(where, node, dict)
    keys = {"output", "const", "arg", "seq"} & node.keys()
    if len(keys) != 1:
        fail(where, "expected exactly one of output, const, arg, seq")
    (key,) = keys
    if key == "output":
        i = typed(f"{where}.output", node["output"], int)
        if not 0 <= i < n_returned:
            fail(f"{where}.output", f"{i} is not one of the module's {n_returned} results")
        pytype = typed(f"{where}.pytype", node.get("pytype"), str)
        if pytype not in ("ndarray", "float", "int", "bool") and not isinstance(getattr(np, pytype, None), type):
            fail(f"{where}.pytype", f"unknown result type {pytype!r}")
    elif key == "const":
        _validate_const(f"{where}.const", node["const"], fail)
    elif key == "arg":
        i = typed(f"{where}.arg", node["arg"], int)
        if not 0 <= i < n_args:
            fail(f"{where}.arg", f"{i} is not an argument position")
    else:
        if typed(f"{where}.seq", node["seq"], str) not in _SEQ_TYPES:
            fail(f"{where}.seq", f"unknown sequence type {node['seq']!r}")
        for i, item in enumerate(typed(f"{where}.items", node.get("items"), list)):
            _validate_result(f"{where}.items[{i}]", item, n_args, n_returned, fail, typed)


class Artifact:
    """A loaded artifact; call it like the exported function."""

    def __init__(self, path: str, backend: str | None = None):
        from pyfront.runtime.iree_backend import InPlaceInputs, LoadedModule

        self.path = path
        self.manifest = manifest = _read_manifest(path)
        try:
            _validate(manifest)
        except ArtifactError as e:
            raise ArtifactError(f"{path!r}: {e}") from None
        vmfb = _read_vmfb(path, manifest)
        self.name = manifest["name"]
        self._args = list(manifest["arguments"])
        # Artifacts of format 1 written before keyword support: positional parameters, no defaults.
        self._parameters = list(manifest.get("parameters") or (
            {"name": f"arg{i}", "kind": "positional_only"} for i in range(len(self._args))))
        self._inputs = list(manifest["inputs"])
        self._outputs = list(manifest["outputs"])
        self._guards = list(manifest["guards"])
        self._result = dict(manifest["result"])
        try:
            module = LoadedModule(vmfb, backend or manifest["backend"])
            in_place = InPlaceInputs(frozenset(manifest["inputs_written"]),
                                     tuple(map(tuple, manifest["outputs_from_inputs"])))
            self._invoke = module.function(manifest["entry"], in_place)
        except ValueError as e:  # not a loadable module, or no such entry function
            raise ArtifactError(f"{path!r}: {e}") from None
        for what, listed, declared in (("inputs", self._inputs, self._invoke.n_inputs),
                                       ("outputs", self._outputs, self._invoke.n_results)):
            if len(listed) != declared:
                raise ArtifactError(
                    f"{path!r}: malformed manifest: {what} lists {len(listed)}, "
                    f"the module's function {manifest['entry']!r} has {declared}"
                )

    def __repr__(self) -> str:
        args = ", ".join(describe_spec(s) for s in self._args)
        return f"<pyfront artifact {self.name}({args}) at {self.path!r}>"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        args = bind(self.name, self._parameters, args, kwargs)
        given: dict[str, Any] = {}
        for i, (value, spec) in enumerate(zip(args, self._args)):
            _check(f"arg{i}", value, spec, given)
        try:
            outputs = self._invoke([given[p] for p in self._inputs]) if self._outputs else []
        except ValueError as e:
            # The arguments match the manifest, so the module and its manifest disagree.
            raise ArtifactError(f"{self.path!r}: the module refused the inputs its manifest describes: {e}") from None
        returned = []
        for path, out in zip(self._outputs, outputs):
            if path == "guards":
                if out.size != len(self._guards):
                    raise ArtifactError(
                        f"{self.path!r}: malformed manifest: {len(self._guards)} guards, "
                        f"the module returned {out.size} guard flags"
                    )
                failed = [g for g, ok in zip(self._guards, out.reshape(-1)) if not ok]
                if failed:
                    g = failed[0]
                    raise GuardFailed(
                        f"{self.name}: assumption failed at {g['site']}: [{g['kind']}] {g['reason']} "
                        "(an artifact cannot fall back to the interpreter; the Python function "
                        "would take another path for these arguments)"
                    )
            else:
                returned.append(out)
        return self._build(self._result, args, returned, {})

    def _build(self, node: dict, args: tuple, outputs: list, memo: dict) -> Any:
        if "output" in node:
            i = node["output"]
            if i not in memo:  # one object per output, as in the interpreter
                memo[i] = _box(outputs[i], node["pytype"])
            return memo[i]
        if "const" in node:
            return decode_const(node["const"])
        if "arg" in node:
            return args[node["arg"]]
        return _SEQ_TYPES[node["seq"]](self._build(n, args, outputs, memo) for n in node["items"])


def load(path: str | os.PathLike, backend: str | None = None) -> Artifact:
    """Load the artifact at `path` (a directory written by `pyfront.export`)."""
    return Artifact(os.fspath(path), backend)
