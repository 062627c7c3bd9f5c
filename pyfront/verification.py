"""What the JIT does with a verified call (`Config.verify`; the mechanics are in runtime/verify.py).

`verified_call` runs a variant's call verified and settles it:
- a failed guard: the `Deopt`, as for any compiled call (nothing ran);
- agreement: counted as a compiled call of the variant (and a verified one);
  later calls run the variant as usual (every Nth verified again with verify=N);
- disagreement: the variant is retired and its key (the state signature it was
  compiled for) is marked failed with the reason "compiled code disagreed with
  the interpreter: <first difference>", so it is never compiled into the same
  bug again and later calls run in the interpreter for that reason; logged on
  `pyfront.verify` at WARNING; `explain` lists it. The call counts as an
  interpreted one.
Either way the caller gets the interpreter's outcome (`Verdict.outcome()`).
"""

from __future__ import annotations

from typing import Any

from pyfront import logs
from pyfront.runtime.verify import Verdict, is_due, verified_run
from pyfront.specialize import describe_key

DISAGREED = "compiled code disagreed with the interpreter"

__all__ = ["DISAGREED", "Verdict", "is_due", "verified_call"]


def verified_call(compiled: Any, key: Any, variant: Any, args: tuple, call: tuple[tuple, dict]) -> Any:
    """A `Deopt`, or the settled `Verdict` of running `variant` verified (see the module docstring);
    `args` are the call's canonical arguments, `call` the call as made (the interpreter runs it)."""
    group = compiled._groups.get(key)
    signature = group.signature(args) if group is not None else None  # before the call changes state
    verdict = verified_run(variant, compiled.fn, args, call)
    if not isinstance(verdict, Verdict):
        return verdict
    name = f"{compiled.__qualname__} {describe_key(key)}"
    with compiled._lock:
        report = compiled._report
        if verdict.mismatch is None:
            report.compiled_calls += 1
            report.verified_calls += 1
            variant.calls += 1
            if logs.verify_log.isEnabledFor(logs.INFO):
                logs.verify_log.info("%s: verified call agreed with the interpreter", name)
            return verdict
        reason = f"{DISAGREED}: {verdict.mismatch}"
        report.interpreted_calls += 1
        report.interpreter_reasons[reason] += 1
        report.verify_failures.append(f"{describe_key(key)}: {verdict.mismatch}")
        if group is not None:
            group.remove(variant)
            group.failed[signature] = reason
    logs.verify_log.warning("%s: %s; variant retired, calls with this key run in the interpreter "
                            "(please report it: pyfront.explain shows the difference)", name, reason)
    return verdict
