"""Ablation of the JIT pipeline's optional passes (JANUS Figure 7 style).

    python bench/ablation.py [--repeats N] [--calls N]

Three workloads in plain NumPy:
- lstm: an LSTM over a fixed-length sequence (T=16, batch 8, 32 -> 64 units),
  `for t in range(T)` over the time steps, returning the last h and c;
- mlp_step: one training step of a 2-layer MLP (64 -> 128 -> 10, batch 32,
  softmax cross-entropy), manual backprop, SGD update of the model object's
  attributes (deferred stores committed by the runtime);
- mlp_step_784x1024: the same step with 784 -> 1024 -> 10 (3.2 MB of
  parameters read and written every call);
- model_treenn: bench/programs' TreeRNN training step (recursion over a
  tree, value_and_grad, Adam), whose IREE module is many small kernels.
Configurations, each adding to the previous one: the interpreter (NumPy),
compiled with no optional passes (only the required lowerings) and every
result copied out, +unroll, +specialize (with hoist-entry-guards and refine-static-dims),
+canonicalize and cse, +device-resident state (committed arrays stay in
IREE's buffers, see runtime/iree_backend.py), +bind-result-storage (the default
configuration: state results are written into the buffers of the values they
displace, see passes/bind_result_storage.py), +fuse (not in the default: see
passes/pipeline.py); then the default with one part taken out: "- pooled
checks" (PYFRONT_POOL_MAX_ELEMENTS=0: each group of checked values gets a
reduction of its own, passes/pooled_checks.py). A
configuration IREE cannot compile is reported as such in the table. Each
configuration is compiled (on empty caches: PYFRONT_CACHE_DIR=off) and warmed
up, then timed: `--repeats` rounds, each timing `--calls` calls of every
configuration in turn; the table shows the median time per call and its
ratio to the interpreter's median, all measured in this one run on this
machine, and the time of the call that compiled it (graph generation,
passes and IREE's compile, which the user's first compiled call waits for). Every compiled result is checked
against the interpreter before timing. Threads are pinned to one for NumPy's
BLAS and IREE alike, as in `python -m bench` (bench/threads.py).
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.threads import configure_env, configure_loaded, describe  # noqa: E402

configure_env(1)  # as `python -m bench` does: before NumPy loads its BLAS

import numpy as np  # noqa: E402

import pyfront  # noqa: E402
from pyfront.passes.pipeline import JIT_PIPELINE, REQUIRED, WITH_FUSION

from bench.programs import model_treenn  # noqa: E402

T, B, D, H = 16, 8, 32, 64


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def lstm(xs, h, c, W, U, b):
    for t in range(16):
        z = xs[t] @ W + h @ U + b
        i = sigmoid(z[:, :64])
        f = sigmoid(z[:, 64:128])
        o = sigmoid(z[:, 128:192])
        g = np.tanh(z[:, 192:])
        c = f * c + i * g
        h = o * np.tanh(c)
    return h, c


class MLP:
    def __init__(self, rng, d: int = 64, h: int = 128):
        scale = 1 / np.sqrt(d)
        self.W1 = (rng.standard_normal((d, h)) * scale).astype(np.float32)
        self.b1 = np.zeros(h, np.float32)
        self.W2 = (rng.standard_normal((h, 10)) * 0.1).astype(np.float32)
        self.b2 = np.zeros(10, np.float32)


def mlp_step(model, x, y_onehot):
    h = np.maximum(x @ model.W1 + model.b1, 0.0)
    logits = h @ model.W2 + model.b2
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    p = e / e.sum(axis=1, keepdims=True)
    loss = -(y_onehot * np.log(p + 1e-7)).sum() / 32
    dlogits = (p - y_onehot) / 32
    dW2 = h.T @ dlogits
    db2 = dlogits.sum(axis=0)
    dh = (dlogits @ model.W2.T) * (h > 0)
    dW1 = x.T @ dh
    db1 = dh.sum(axis=0)
    model.W1 = model.W1 - 0.1 * dW1
    model.b1 = model.b1 - 0.1 * db1
    model.W2 = model.W2 - 0.1 * dW2
    model.b2 = model.b2 - 0.1 * db2
    return loss


def workloads():
    rng = np.random.default_rng(0)
    f32 = lambda *s: (rng.standard_normal(s) * 0.5).astype(np.float32)  # noqa: E731
    lstm_args = (f32(T, B, D), np.zeros((B, H), np.float32), np.zeros((B, H), np.float32),
                 f32(D, 4 * H), f32(H, 4 * H), np.zeros(4 * H, np.float32))
    labels = rng.integers(0, 10, 32)
    one_hot = np.eye(10, dtype=np.float32)[labels]
    return {
        "lstm": (lstm, lstm_args),
        "mlp_step": (mlp_step, (MLP(rng), f32(32, 64), one_hot)),
        # 3.2 MB of parameters: where keeping them on the device shows.
        "mlp_step_784x1024": (mlp_step, (MLP(rng, 784, 1024), f32(32, 784), one_hot)),
        "model_treenn": (model_treenn.PROGRAM.fn,
                         model_treenn.PROGRAM.make_inputs(next(iter(model_treenn.PROGRAM.sizes.values())), rng)),
    }


def _pipeline(*optional: str) -> tuple[str, ...]:
    return tuple(p for p in WITH_FUSION if p in REQUIRED or p in optional)


_CLEANED = _pipeline("unroll", "specialize", "hoist-entry-guards", "refine-static-dims", "canonicalize", "cse")
# (label, passes or None for the interpreter, device-resident state, environment while it compiles)
CONFIGS = [
    ("interpreter", None, False, {}),
    ("compiled, no optional passes", _pipeline(), False, {}),
    ("+unroll", _pipeline("unroll"), False, {}),
    ("+specialize", _pipeline("unroll", "specialize", "hoist-entry-guards", "refine-static-dims"), False, {}),
    ("+canonicalize, cse", _CLEANED, False, {}),
    ("+device state", _CLEANED, True, {}),
    ("+result storage (default)", JIT_PIPELINE, True, {}),
    ("+fuse", WITH_FUSION, True, {}),
    ("default - pooled checks", JIT_PIPELINE, True, {"PYFRONT_POOL_MAX_ELEMENTS": "0"}),
]


def _close(a, b) -> bool:
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k]) for k in a)
    return np.allclose(a, b, rtol=1e-4, atol=1e-5)


@contextlib.contextmanager
def _environment(values: dict[str, str]):
    saved = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                del os.environ[name]
            else:
                os.environ[name] = value


def prepare(fn, args, passes, device_state: bool, env: dict[str, str], calls: int, backend: str):
    """(callable, its own copy of the arguments, seconds of the call that compiled it), warmed up;
    or why the configuration did not compile."""
    compile_seconds = None
    if passes is None:
        run = fn
    else:
        run = pyfront.compile(fn, passes=passes, profile_calls=1, device_state=device_state, backend=backend,
                              wait_for_compile="always", keep_faster=False)  # (the compiled code is timed)
        expected = fn(*copy.deepcopy(args))
        with _environment(env):
            run(*copy.deepcopy(args))  # profiled
            start = time.perf_counter()
            got = run(*copy.deepcopy(args))  # compiles, and waits for it
            compile_seconds = time.perf_counter() - start
            got = run(*copy.deepcopy(args))
        if not _close(expected, got):
            raise AssertionError(f"{fn.__name__} with {passes}: compiled result differs from the interpreter")
        report = pyfront.explain(run)
        if report.compiled_calls < 2:
            reasons = "; ".join(report.interpreter_reasons)
            return f"not compiled: {reasons}"[:110]
    args = copy.deepcopy(args)
    for _ in range(calls):  # warm-up
        run(*args)
    return run, args, compile_seconds


def measure(prepared: dict, repeats: int, calls: int) -> dict:
    """Median seconds per call of each prepared configuration, sampled in turn (round robin),
    so that a change in the machine's load affects every configuration alike."""
    samples = {label: [] for label in prepared}
    for _ in range(repeats):
        for label, (run, args, _) in prepared.items():
            start = time.perf_counter()
            for _ in range(calls):
                run(*args)
            samples[label].append((time.perf_counter() - start) / calls)
    return {label: statistics.median(s) for label, s in samples.items()}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--calls", type=int, default=50)
    parser.add_argument("--backend", default=pyfront.Config().backend,
                        help="pyfront backend (default: pyfront's, i.e. PYFRONT_BACKEND or cpu)")
    args = parser.parse_args(argv)
    configure_loaded("pyfront", 1)
    os.environ["PYFRONT_CACHE_DIR"] = "off"  # every configuration's compile is timed whole
    rows = []
    for name, (fn, fn_args) in workloads().items():
        prepared = {label: prepare(fn, fn_args, passes, device_state, env, args.calls, args.backend)
                    for label, passes, device_state, env in CONFIGS}
        medians = measure({k: v for k, v in prepared.items() if not isinstance(v, str)}, args.repeats, args.calls)
        base = medians["interpreter"]
        for label, *_ in CONFIGS:
            if isinstance(prepared[label], str):
                rows.append((name, label, prepared[label], None, None))
            else:
                rows.append((name, label, medians[label] * 1e6, base / medians[label], prepared[label][2]))
    print(f"median of {args.repeats} samples x {args.calls} calls, configurations sampled in turn; "
          f"speedup = interpreter median / median; compile: the call that compiled it, on empty caches; "
          f"backend {args.backend!r}; {describe(1)}")
    print(f"{'workload':<18} {'configuration':<30} {'us/call':>10} {'speedup':>8} {'compile':>8}")
    for name, label, us, ratio, seconds in rows:
        if ratio is None:
            print(f"{name:<18} {label:<30} {us}")
        else:
            compiled = "" if seconds is None else f"{seconds:.2f} s"
            print(f"{name:<18} {label:<30} {us:>10.1f} {ratio:>7.2f}x {compiled:>8}")


if __name__ == "__main__":
    main()
