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
* `Artifact(*args)` checks every argument against the manifest (TypeError for
  a wrong type or dtype, ValueError for a wrong shape, a dynamic dim below 2,
  or a constant argument with another value), runs the module, checks the
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
    built, here = manifest.get("versions", {}), current_versions()
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
    else:
        raise ArtifactError(f"manifest: unknown argument kind {kind!r}")


def _box(array: np.ndarray, pytype: str) -> Any:
    if pytype == "ndarray":
        return array
    if pytype in ("float", "int", "bool"):
        return _PY_TYPES[pytype](array[()])
    value = array[()]
    if type(value).__name__ != pytype:
        raise ArtifactError(f"manifest: output of type {type(value).__name__}, expected {pytype}")
    return value


class Artifact:
    """A loaded artifact; call it like the exported function (positional arguments)."""

    def __init__(self, path: str, backend: str | None = None):
        from pyfront.runtime.iree_backend import LoadedModule

        self.path = path
        self.manifest = manifest = _read_manifest(path)
        try:
            vmfb = _read_vmfb(path, manifest)
            self.name = manifest["name"]
            self._args = list(manifest["arguments"])
            self._inputs = list(manifest["inputs"])
            self._outputs = list(manifest["outputs"])
            self._guards = list(manifest["guards"])
            self._result = dict(manifest["result"])
            entry = str(manifest["entry"])
            for i, spec in enumerate(self._args):
                describe_spec(spec)  # every argument spec is well formed
        except (KeyError, TypeError, ValueError) as e:
            if isinstance(e, ArtifactError):
                raise
            raise ArtifactError(f"{path!r}: malformed manifest ({type(e).__name__}: {e})") from None
        module = LoadedModule(vmfb, backend or manifest["backend"])
        self._invoke = module.function(entry)

    def __repr__(self) -> str:
        args = ", ".join(describe_spec(s) for s in self._args)
        return f"<pyfront artifact {self.name}({args}) at {self.path!r}>"

    def __call__(self, *args: Any) -> Any:
        if len(args) != len(self._args):
            raise TypeError(f"{self.name}() takes {len(self._args)} positional arguments, got {len(args)}")
        given: dict[str, Any] = {}
        for i, (value, spec) in enumerate(zip(args, self._args)):
            _check(f"arg{i}", value, spec, given)
        outputs = self._invoke([given[p] for p in self._inputs]) if self._outputs else []
        returned = []
        for path, out in zip(self._outputs, outputs):
            if path == "guards":
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
