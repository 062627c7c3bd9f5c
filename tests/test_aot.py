"""AOT artifacts: pyfront.export writes them, pyfront.load runs them without the compiler.

Artifacts shared by several tests are exported once per module (fixtures).
The deployment contract (no compiler at load time) is checked in a
subprocess where `iree.compiler` cannot be imported; `iree-run-module` runs
an artifact the way a deployment without Python would.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from pyfront.runtime.aot import ArtifactError, GuardFailed, manifest_checksum

import pyfront
from pyfront.aot import ExportError

pytestmark = pytest.mark.iree

IMPORT_ROOT = str(Path(pyfront.__file__).resolve().parent.parent)
RNG = np.random.default_rng(0)


def mlp(x, w, b, scale, t):
    h = np.tanh(x @ w + b) * scale
    if h.sum() > 0:  # a branch on a computed value: real control flow in an artifact
        h = h + 1.0
    return h, h.sum(), float(t) * 2.0, b.shape[0]


def mlp_args(n=4):
    return (RNG.standard_normal((n, 8)).astype(np.float32), RNG.standard_normal((8, 3)).astype(np.float32),
            np.zeros(3, np.float32), np.float32(0.5), 3.0)


def assert_same(got, want):
    """Same tree, same Python types, equal values (float32 transcendentals to ~1 ulp)."""
    assert type(got) is type(want), (type(got), type(want))
    if isinstance(want, (tuple, list)):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert_same(g, w)
    elif isinstance(want, (np.ndarray, np.generic)):
        assert got.dtype == want.dtype and np.shape(got) == np.shape(want)
        np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-6)
    else:
        assert got == want


@pytest.fixture(scope="module")
def mlp_artifact(tmp_path_factory):
    path = tmp_path_factory.mktemp("aot") / "mlp.pyfront"
    pyfront.export(mlp, *mlp_args(), path=path, dynamic_dims={0: [0], 4: True})
    return path


@pytest.fixture
def artifact_copy(mlp_artifact, tmp_path):
    dst = tmp_path / "copy.pyfront"
    shutil.copytree(mlp_artifact, dst)
    return dst


def test_load_equals_interpreter_across_dynamic_sizes(mlp_artifact):
    f = pyfront.load(mlp_artifact)
    for n in (2, 4, 7, 33):
        args = mlp_args(n)
        assert_same(f(*args), mlp(*args))
    args = mlp_args(5)
    args = (args[0], args[1], args[2], np.float32(-2.0), -1.25)  # the branch's other side
    assert_same(f(*args), mlp(*args))


def test_manifest_describes_the_entry(mlp_artifact):
    m = json.loads((mlp_artifact / "manifest.json").read_text())
    assert m["entry"] == "mlp" and m["format"] == "pyfront-artifact/1"
    assert m["arguments"][0] == {"kind": "ndarray", "dtype": "float32", "shape": [None, 8]}
    assert m["arguments"][4] == {"kind": "float"}
    assert m["iree_input_types"] == ["?x8xf32", "8x3xf32", "3xf32", "f32", "f64"]
    assert m["result"]["items"][3] == {"const": {"type": "int", "value": 3}}
    assert m["state_updates"] == []
    assert not any(f.endswith("=host") for f in m["iree_flags"])  # portable code
    assert m["vmfb_sha256"] == hashlib.sha256((mlp_artifact / "module.vmfb").read_bytes()).hexdigest()
    assert set(m["versions"]) == {"pyfront", "iree_runtime", "iree_compiler"}


LOAD_WITHOUT_COMPILER = """
import sys
class _NoCompiler:
    def find_spec(self, name, path=None, target=None):
        if name == "iree.compiler" or name.startswith("iree.compiler."):
            raise ImportError("iree.compiler is blocked in this test")
sys.meta_path.insert(0, _NoCompiler())
import numpy as np
import pyfront
f = pyfront.load(sys.argv[1])
data = np.load(sys.argv[2], allow_pickle=True)
results = [f(*args) for args in data["calls"]]
np.save(sys.argv[3], np.array(results, dtype=object), allow_pickle=True)
loaded = sorted(m for m in sys.modules if m.startswith(("iree.compiler", "pyfront")))
print(" ".join(loaded))
"""


def test_load_runs_without_the_compiler(mlp_artifact, tmp_path):
    calls = [mlp_args(n) for n in (3, 6)]
    np.savez(tmp_path / "calls.npz", calls=np.array(calls, dtype=object))
    script = tmp_path / "deploy.py"
    script.write_text(LOAD_WITHOUT_COMPILER)
    env = {**os.environ, "PYTHONPATH": IMPORT_ROOT}
    proc = subprocess.run(
        [sys.executable, str(script), str(mlp_artifact), str(tmp_path / "calls.npz"), str(tmp_path / "out.npy")],
        capture_output=True, text=True, env=env, timeout=120, check=False,
    )
    assert proc.returncode == 0, proc.stderr
    modules = proc.stdout.split()
    assert not any(m.startswith("iree.compiler") for m in modules), modules
    assert not {"pyfront.graphgen", "pyfront.aot", "pyfront.dialects", "pyfront.passes"} & set(modules)
    results = np.load(tmp_path / "out.npy", allow_pickle=True)
    for got, args in zip(results, calls):
        assert_same(tuple(got), mlp(*args))


def test_iree_run_module_runs_an_artifact(mlp_artifact):
    tool = shutil.which("iree-run-module")
    if tool is None:
        import iree.runtime as rt

        candidate = Path(rt.__file__).parent.parent / "_runtime_libs" / "iree-run-module"
        tool = str(candidate) if candidate.exists() else None
    if tool is None:
        pytest.skip("iree-run-module is not installed")
    m = json.loads((mlp_artifact / "manifest.json").read_text())
    cmd = [tool, "--device=local-task", f"--module={mlp_artifact / 'module.vmfb'}", f"--function={m['entry']}",
           "--input=5x8xf32=1", "--input=8x3xf32=0.5", "--input=3xf32=0", "--input=f32=2", "--input=f64=1.5"]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=True).stdout
    h, total, doubled, _ = mlp(np.ones((5, 8), np.float32), np.full((8, 3), 0.5, np.float32),
                               np.zeros(3, np.float32), np.float32(2), 1.5)
    assert f"5x3xf32=[{' '.join(f'{v:g}' for v in h[0])}]" in out, out
    assert f"f32={total:g}" in out and f"f64={doubled:g}" in out, out


def test_bad_arguments_are_refused(mlp_artifact):
    f = pyfront.load(mlp_artifact)
    x, w, b, s, t = mlp_args()
    cases = [
        ((x, w, b, s), TypeError, "missing 1 required positional argument: 't'"),
        ((x.astype(np.float64), w, b, s, t), TypeError, "arg0: expected dtype float32"),
        ((x.tolist(), w, b, s, t), TypeError, "arg0: expected ndarray"),
        ((x, w.T.copy(), b, s, t), ValueError, "arg1: expected shape"),
        ((x[:1], w, b, s, t), ValueError, "arg0: dynamic dim 0 has size 1"),
        ((x, w, b, 0.5, t), TypeError, "arg3: expected numpy.float32"),
        ((x, w, b, s, 3), TypeError, "arg4: expected a Python float"),
    ]
    for args, error, message in cases:
        with pytest.raises(error, match=message):
            f(*args)


def test_constant_arguments_must_match(tmp_path):
    def scaled(x, k, mode):
        return x * k if mode == "mul" else x + k

    x = np.arange(4.0)
    f = pyfront.load(pyfront.export(scaled, x, 2, "mul", path=tmp_path / "a"))
    assert_same(f(x, 2, "mul"), scaled(x, 2, "mul"))
    for bad in ((x, 3, "mul"), (x, 2, "add"), (x, 2.0, "mul"), (x, True, "mul")):
        with pytest.raises(ValueError, match="Python constant"):
            f(*bad)


def test_tampered_and_truncated_artifacts_are_refused(artifact_copy):
    vmfb, manifest = artifact_copy / "module.vmfb", artifact_copy / "manifest.json"
    data = vmfb.read_bytes()
    vmfb.write_bytes(data[: len(data) // 2])
    with pytest.raises(ArtifactError, match="truncated"):
        pyfront.load(artifact_copy)
    vmfb.write_bytes(data[:100] + bytes([data[100] ^ 1]) + data[101:])
    with pytest.raises(ArtifactError, match="checksum mismatch"):
        pyfront.load(artifact_copy)
    vmfb.write_bytes(data)
    text = manifest.read_text()
    manifest.write_text(text.replace('"float32"', '"float64"', 1))
    with pytest.raises(ArtifactError, match="manifest checksum mismatch"):
        pyfront.load(artifact_copy)
    manifest.write_text(text[: len(text) // 2])
    with pytest.raises(ArtifactError, match="unreadable manifest"):
        pyfront.load(artifact_copy)
    manifest.unlink()
    with pytest.raises(ArtifactError, match="not a pyfront artifact"):
        pyfront.load(artifact_copy)


def test_malformed_manifest_with_valid_checksum_is_refused(artifact_copy):
    path = artifact_copy / "manifest.json"
    m = json.loads(path.read_text())
    del m["inputs"]
    m["arguments"][0] = {"kind": "object"}
    m["manifest_sha256"] = manifest_checksum(m)
    path.write_text(json.dumps(m))
    with pytest.raises(ArtifactError, match="malformed manifest"):
        pyfront.load(artifact_copy)


@pytest.mark.parametrize("which", ["pyfront", "iree_runtime"])
def test_other_versions_are_refused(artifact_copy, which):
    path = artifact_copy / "manifest.json"
    m = json.loads(path.read_text())
    m["versions"][which] = "0.0.1"
    m["manifest_sha256"] = manifest_checksum(m)
    path.write_text(json.dumps(m))
    with pytest.raises(ArtifactError, match=f"built by {which} 0.0.1.*re-export"):
        pyfront.load(artifact_copy)


def test_failed_in_graph_guard_raises(tmp_path):
    def checked(x):
        if x.sum() < 0:
            raise ValueError("negative")
        return x * 2

    x = np.ones(4, np.float32)
    f = pyfront.load(pyfront.export(checked, x, path=tmp_path / "a"))
    assert_same(f(x), checked(x))
    with pytest.raises(GuardFailed, match="cannot fall back to the interpreter"):
        f(-x)


def test_shape_guard_on_a_computed_dynamic_dim_survives_export(tmp_path):
    # With x's dims dynamic, x.reshape(-1) meets y's static 4: the in-graph guard
    # must read x's real size (canonicalize used to fold it to 4, and the artifact
    # returned the first 4 of 6 elements where NumPy raises).
    def flatten_scale_add(x, y):
        return x.reshape(-1) * 2.0 + y

    y = np.arange(4.0)
    f = pyfront.load(pyfront.export(flatten_scale_add, np.ones((2, 2)), y, path=tmp_path / "a",
                                    dynamic_dims={0: [0, 1]}))
    assert_same(f(np.full((2, 2), 3.0), y), flatten_scale_add(np.full((2, 2), 3.0), y))
    with pytest.raises(GuardFailed, match="sizes that vary between calls agree"):
        f(np.arange(6.0).reshape(3, 2), y)


def test_returned_arguments_keep_their_identity(tmp_path):
    def passthrough(x, y):
        return x, y + 1

    x, y = np.ones(3), np.ones(3)
    f = pyfront.load(pyfront.export(passthrough, x, y, path=tmp_path / "a"))
    got = f(x, y)
    assert got[0] is x
    assert_same(got, passthrough(x, y))


def copy_written_and_copy(x):
    """IREE 3.13 writes `y`'s insert into the buffer of x, which the module also returns as
    `x.copy()` (tests/iree_repro/returned_argument_updated.mlir)."""
    y = x.copy()
    y[::2] = 0
    return y, x.copy()


class State:
    pass


def count_up(state):
    state.x = state.x + 1  # committed by compiled code: a device-resident array


def test_an_artifact_leaves_the_inputs_iree_writes_into_as_they_were(tmp_path):
    x = np.arange(1, 6, dtype=np.int64)
    f = pyfront.load(pyfront.export(copy_written_and_copy, x, path=tmp_path / "a"))
    assert f.manifest["inputs_written"] == [0] and f.manifest["outputs_from_inputs"] == [[1, 0]]
    assert_same(f(x), copy_written_and_copy(x.copy()))
    assert x.tolist() == [1, 2, 3, 4, 5]
    step, state = pyfront.compile(count_up, verify="off"), State()
    state.x = x.copy()
    for _ in range(3):  # state.x becomes an array in IREE's memory, which a call could write
        step(state)
    assert pyfront.explain(step).compiled_calls > 0
    expected = copy_written_and_copy(state.x.copy())
    assert_same(f(state.x), expected)
    assert state.x.tolist() == [4, 5, 6, 7, 8]


def test_every_malformed_in_place_field_raises_artifact_error(tmp_path):
    x = np.arange(5)
    path = pyfront.export(copy_written_and_copy, x, path=tmp_path / "a")
    assert _defects_seen_at_load(Path(path), lambda f: f(x), only=("inputs_written", "outputs_from_inputs")) >= 10


G = np.ones(3)
SCALE = 2.0


class Model:
    def __init__(self):
        self.w = np.ones(3)


def test_export_refuses_what_an_artifact_cannot_honour(tmp_path):
    def reads_global(x):
        return x + G

    def reads_global_scalar(x):
        return x * SCALE

    def prints(x):
        print(x.sum())
        return x

    def stores(x):
        global G
        G = x + 1
        return x

    def returns_view(x):
        return x[1:] * 1, (x * 2)[0:2]

    def reads_attribute(m, x):
        return m.w + x

    x = np.ones(3)
    cases = [
        (reads_global, (x,), "reads Python state"),
        (reads_global_scalar, (x,), "global 'SCALE'.*pass it as an argument"),
        (prints, (x,), "it prints"),
        (stores, (x,), "writes Python state"),
        (returns_view, (x,), "view"),
        (reads_attribute, (Model(), x), "Model objects cannot be exported"),
    ]
    for fn, args, message in cases:
        with pytest.raises(ExportError, match=message):
            pyfront.export(fn, *args, path=tmp_path / fn.__name__)
        assert not (tmp_path / fn.__name__).exists()
    with pytest.raises(ExportError, match="dim 0 of the example arg0 has size 1"):
        pyfront.export(lambda a: a + 1, np.ones((1, 3)), path=tmp_path / "d", dynamic_dims={0: [0]})


def test_command_line_export(tmp_path):
    script = tmp_path / "model.py"
    script.write_text(textwrap.dedent("""
        import numpy as np

        def fn(x, w):
            return np.maximum(x @ w, 0)

        example_args = (np.ones((4, 8), np.float32), np.ones((8, 2), np.float32))
        dynamic_dims = {0: [0]}
    """))
    env = {**os.environ, "PYTHONPATH": IMPORT_ROOT}
    proc = subprocess.run([sys.executable, "-m", "pyfront.aot", str(script), "-o", str(tmp_path / "m")],
                          capture_output=True, text=True, env=env, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    assert "entry function 'fn'" in proc.stdout
    f = pyfront.load(tmp_path / "m")
    x, w = RNG.standard_normal((6, 8)).astype(np.float32), RNG.standard_normal((8, 2)).astype(np.float32)
    assert_same(f(x, w), np.maximum(x @ w, 0))


def test_export_overwrites_only_what_pyfront_wrote(tmp_path):
    def double(x):
        return x * 2

    def triple(x):
        return x * 3

    x = np.ones(3)
    webapp = tmp_path / "webapp"
    webapp.mkdir()
    (webapp / "manifest.json").write_text('{"name": "my web app", "start_url": "/"}')
    (webapp / "index.html").write_text("<html></html>")
    with pytest.raises(ExportError, match="holds files pyfront did not write \\(index.html\\)"):
        pyfront.export(double, x, path=webapp)
    (webapp / "index.html").unlink()  # only a foreign manifest.json left: still not pyfront's
    with pytest.raises(ExportError, match="not a pyfront artifact manifest"):
        pyfront.export(double, x, path=webapp)
    assert [p.name for p in webapp.iterdir()] == ["manifest.json"]
    assert json.loads((webapp / "manifest.json").read_text())["name"] == "my web app"

    a_file = tmp_path / "notes.txt"
    a_file.write_text("keep me")
    with pytest.raises(ExportError, match="not a directory"):
        pyfront.export(double, x, path=a_file)
    assert a_file.read_text() == "keep me"

    artifact = tmp_path / "artifact"
    artifact.mkdir()  # an empty directory is used
    pyfront.export(double, x, path=artifact)
    pyfront.export(triple, x, path=artifact)  # an artifact pyfront wrote is replaced
    assert_same(pyfront.load(artifact)(x), x * 3)
    (artifact / "README").write_text("my notes about this model")
    with pytest.raises(ExportError, match="did not write \\(README\\)"):
        pyfront.export(double, x, path=artifact)
    assert sorted(p.name for p in artifact.iterdir()) == ["README", "manifest.json", "module.vmfb"]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".pyfront-")]  # no temporaries left


def _manifest_mutations(node, path=()):
    """(description, function applying one defect to a manifest copy) for every field of `node`."""
    wrong_values = [None, True, -1, 10**6, 1.5, "x", [], {}]
    items = list(node.items()) if isinstance(node, dict) else list(enumerate(node))
    for key, value in items:
        if path == () and key == "manifest_sha256":
            continue
        where = path + (key,)

        def at(m, where=where):
            for k in where[:-1]:
                m = m[k]
            return m, where[-1]

        def delete(m, at=at):
            parent, k = at(m)
            del parent[k]

        yield f"delete {where}", delete
        for wrong in wrong_values:
            def replace(m, at=at, wrong=wrong):
                parent, k = at(m)
                parent[k] = wrong

            yield f"{where} = {wrong!r}", replace
        if isinstance(value, list) and value:
            def truncate(m, at=at):
                parent, k = at(m)
                parent[k] = parent[k][: len(parent[k]) // 2]

            yield f"truncate {where}", truncate
        if isinstance(value, (dict, list)):
            yield from _manifest_mutations(value, where)


def test_every_malformed_manifest_raises_artifact_error(artifact_copy):
    """Manifests with one defect each, checksums kept valid: ArtifactError, never another error.

    At load a defect is an ArtifactError; a defect that passes the load (a
    changed reason string, say) may only show at a call as an ArtifactError,
    a GuardFailed, or the argument checks' TypeError/ValueError naming an
    argument.
    """
    args = mlp_args()
    assert _defects_seen_at_load(artifact_copy, lambda f: f(*args)) > 100  # seen by the loader, not skipped


def tuple_and_dict_arguments(x, *ws, **named):
    return x @ ws[0] + named["b"]


def test_every_malformed_manifest_of_tuple_and_dict_arguments_raises_artifact_error(tmp_path):
    x, w, b = np.ones((2, 3)), np.ones((3, 4)), np.ones(4)
    path = pyfront.export(tuple_and_dict_arguments, x, w, path=tmp_path / "a", example_kwargs={"b": b})
    assert _defects_seen_at_load(Path(path), lambda f: f(x, w, b=b)) > 100


def _defects_seen_at_load(artifact, call, only: tuple = ()) -> int:
    """Apply each defect of `_manifest_mutations` (of the fields `only`, if given) to the artifact's
    manifest in turn (checksum kept valid), load it and `call` it; returns how many defects the
    loader refused."""
    path = artifact / "manifest.json"
    original = json.loads(path.read_text())
    seen = 0
    for description, mutate in _manifest_mutations(original):
        if only and not description.removeprefix("delete ").startswith(tuple(f"('{k}'" for k in only)):
            continue
        m = json.loads(json.dumps(original))
        mutate(m)
        m["manifest_sha256"] = manifest_checksum(m)
        path.write_text(json.dumps(m))
        try:
            f = pyfront.load(artifact)
        except ArtifactError:
            seen += 1
            continue
        except Exception as e:
            pytest.fail(f"{description}: load raised {type(e).__name__}: {e}")
        try:
            call(f)
            repr(f)
        except (ArtifactError, GuardFailed):
            pass
        except (TypeError, ValueError) as e:  # an argument's check, or a call that does not bind
            assert str(e).startswith(("arg", f"{m['name']}() ")), f"{description}: call raised {type(e).__name__}: {e}"
        except Exception as e:
            pytest.fail(f"{description}: call raised {type(e).__name__}: {e}")
    return seen


def numpy_functions(x, y):
    return (np.sum(x), np.where(x > 0.5, x, y), np.dot(x, y), np.clip(x, 0.25, 0.75),
            np.concatenate([x, y]), np.stack([x, y]))


def test_export_accepts_numpy_array_functions(tmp_path):
    """np.sum & co. are `_ArrayFunctionDispatcher` objects in NumPy 2: code, fixed at export."""
    x, y = RNG.random(5), RNG.random(5)
    f = pyfront.load(pyfront.export(numpy_functions, x, y, path=tmp_path / "a"))
    assert_same(f(x, y), numpy_functions(x, y))
