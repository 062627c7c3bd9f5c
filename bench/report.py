"""The Markdown table and the PNG chart of one bench run (the dict bench/run.py builds).

    python -m bench.report bench/results/latest.json   # redraw latest.md and latest.png

Every ratio is a speedup: the reference's time divided by the system's, so
above 1 means faster than the reference. Cells that are not a time say why
(cannot run, wrong answer, not installed, error) with a numbered note.
"""

from __future__ import annotations

import re
from pathlib import Path

from bench.systems import LABELS, PEERS

PYFRONTS = ("pyfront", "pyfront-cpu-sync")
_ABSOLUTE_PROGRAM_PATH = re.compile(r"/\S*?/(bench/programs/)")


def fmt_time(seconds: float | None) -> str:
    if seconds is None:
        return "—"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            value = seconds / scale
            return f"{value:.3g} {unit}" if value < 100 else f"{value:.0f} {unit}"
    return f"{seconds * 1e9:.0f} ns"


def fmt_ratio(ratio: float | None) -> str:
    if ratio is None:
        return "—"
    return f"{ratio:.2f}×" if ratio < 10 else f"{ratio:.0f}×"


class Notes:
    """Numbered footnotes, one per distinct text."""

    def __init__(self):
        self.texts: list[str] = []

    def ref(self, text: str) -> str:
        text = _ABSOLUTE_PROGRAM_PATH.sub(r"\1", text)  # the same note from any checkout
        if text not in self.texts:
            self.texts.append(text)
        return f"[{self.texts.index(text) + 1}]"


def _rows(results):
    for name, program in results["programs"].items():
        for label, cells in program["sizes"].items():
            yield name, label, cells


def _value(cell: dict | None, measure: str) -> float | None:
    if not cell or cell.get("status") not in ("ok", "interpreted"):
        return None
    value = cell.get(measure)
    return value["median"] if isinstance(value, dict) else value


def _unavailable(cell: dict | None, system: str, program: str, notes: Notes) -> str:
    """The text of a cell without a time: the status and a note with the reason."""
    if not cell:
        return "—"
    status = cell.get("status", "")
    if status in ("ok", "interpreted"):
        return "—"
    reason = cell.get("reason", "")
    return f"{status} {notes.ref(f'{LABELS[system]} on {program}: {reason}')}"


def _fallback_text(fallbacks: dict, timed: int) -> str:
    """What the worker's `_fallbacks` says of a steady-state measurement whose calls did not all run compiled."""
    reasons = sorted(fallbacks["reasons"].items(), key=lambda reason_n: -reason_n[1])
    why = "; ".join(f"{n}x {_shortened(reason)}" for reason, n in reasons) or "deopts"
    return (f"{fallbacks['calls']} of the {timed} timed calls did not run compiled code "
            f"({fallbacks['deopts']} deopts; interpreted: {why})")


def _shortened(reason: str, keep: int = 160) -> str:
    """`reason` with its middle elided past `keep` characters (a guard covering many ops lists them all)."""
    return reason if len(reason) <= 2 * keep else f"{reason[:keep]} ... {reason[-keep // 2:]}"


def _best_peer(cells: dict, measure: str) -> tuple[str, float] | None:
    times = [(p, _value(cells.get(p), measure)) for p in PEERS]
    times = [(p, t) for p, t in times if t is not None]
    return min(times, key=lambda pt: pt[1]) if times else None


def _measure_table(results, systems, measure: str, notes: Notes, vs_numpy: bool, spread: bool) -> list[str]:
    shown = [s for s in systems if vs_numpy or s != "numpy"]
    pyfronts = [s for s in PYFRONTS if s in systems]
    head = ["program", "size", *(LABELS[s] for s in shown), "best peer",
            *(f"{LABELS[s]} vs best peer" for s in pyfronts)]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, label, cells in _rows(results):
        numpy_t = _value(cells.get("numpy"), measure) if vs_numpy else None
        row = [name, label]
        for s in shown:
            cell = cells.get(s)
            t = _value(cell, measure)
            if t is None:
                row.append(_unavailable(cell, s, name, notes))
                continue
            text = fmt_time(t)
            steady = cell.get("steady") if measure == "steady" else None
            if spread and steady:
                text += f" ±{50 * (steady['p75'] - steady['p25']) / steady['median']:.0f}%"
            if numpy_t is not None and s != "numpy":
                text += f" ({fmt_ratio(numpy_t / t)})"
            fallbacks = steady.get("fallbacks") if steady else None
            if fallbacks and fallbacks["calls"]:  # the median mixes compiled and interpreted calls
                text += " " + notes.ref(f"{LABELS[s]} on {name}: " + _fallback_text(fallbacks, steady["repeats"]))
            if cell.get("status") == "interpreted":
                text += " " + notes.ref(f"{LABELS[s]} on {name}: " + "; ".join(cell.get("notes", [])))
            elif measure == "first_call_s" and cell.get("notes"):
                text += " " + notes.ref(f"{LABELS[s]} on {name}: " + "; ".join(cell["notes"]))
            row.append(text)
        best = _best_peer(cells, measure)
        row.append(f"{LABELS[best[0]]}" if best else "none")
        for s in pyfronts:
            t = _value(cells.get(s), measure)
            row.append(fmt_ratio(best[1] / t) if best and t else "—")
        lines.append("| " + " | ".join(row) + " |")
    return lines


def _relative_table(results, systems, measure: str, after: str | None, notes: Notes) -> list[str]:
    """A one-off call's time next to the system's own steady-state step."""
    head = ["program", "size", *(LABELS[s] for s in systems)]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, label, cells in _rows(results):
        if measure == "guard_failure_s" and not results["programs"][name]["guard_failure"]:
            continue
        row = [name, label]
        for s in systems:
            cell = cells.get(s) or {}
            t, steady = _value(cell, measure), _value(cell, "steady")
            note = cell.get(measure.removesuffix("_s") + "_note")
            ref = " " + notes.ref(f"{LABELS[s]} on {name}: {note}") if note else ""
            if t is None:
                row.append(("wrong" if note and note.startswith("wrong") else "—") + ref)
                continue
            text = f"{fmt_time(t)} ({t / steady:.0f}× step)" if steady else fmt_time(t)
            if after and cell.get(after) is not None:
                text += f", next {fmt_time(cell[after])}"
            if cell.get("guard_failure_deopts") is not None and measure == "guard_failure_s":
                text += f", {cell['guard_failure_deopts']} deopt"
            row.append(text + ref)
        lines.append("| " + " | ".join(row) + " |")
    return lines


def write_markdown(results: dict) -> str:
    meta = results["meta"]
    systems = meta["systems"]
    notes = Notes()
    versions = ", ".join(f"{k} {v}" for k, v in meta["versions"].items())
    out = [
        "# pyfront benchmarks" + (" (quick mode: smoke test, not for comparison)" if meta["quick"] else ""),
        "",
        (f"Run {meta['date']} by `python -m bench{' --quick' if meta['quick'] else ''}` on {meta['cpu']} "
        f"({meta['cores']} cores), Python {meta['python']}; {versions}; {meta['wall_s']:.0f} s in all."),
        f"Threads: {meta['threads_note']}.",
        "",
        ("Ratios are speedups (the reference's time / the system's; above 1 is faster). "
        "'vs best peer' compares with the fastest of jax.jit, torch.compile and numba.njit that ran "
        "the program correctly. Every result was checked against NumPy's before timing."),
        "",
        ("model_* programs are one training step of a model of examples/models/ at the model's own "
        "small size (loss, value_and_grad, optimizer update written into the model's dicts; the "
        "function also returns the arrays it wrote). They update their arguments, so each checked "
        "call is compared with NumPy run on a copy of the arguments as they were just before it; "
        "jax.jit runs a functional port (bench/programs/_model_suite.py)."),
        "",
        "## Steady state: time per step",
        "",
        (f"Median of single calls after warm-up (±: half the interquartile range, as % of the median; "
        f"{meta['budget_s']} s of calls per cell); in parentheses the speedup over NumPy."),
        "",
        *_measure_table(results, systems, "steady", notes, vs_numpy=True, spread=True),
        "",
        "## First call: profile + compile on empty on-disk caches",
        "",
        ("Time to the first result computed by compiled code, in a process that already paid the "
        "library's start-up (below). pyfront: its profiled interpreter calls plus the compiling call. "
        "numba compiles per dtype and rank, not shape: its later sizes load the first size's code "
        "from its on-disk cache. A first call, batch-size change or guard-failure call that runs "
        f"past {meta.get('call_limit_s', 60):.0f} s is stopped and reported as over time."),
        "",
        *_measure_table(results, systems, "first_call_s", notes, vs_numpy=False, spread=False),
        "",
        "## Warm start: a new process, on-disk caches filled by the cold run",
        "",
        ("Same measure as the first call, in a fresh process whose compilation caches are warm "
        "(pyfront PYFRONT_CACHE_DIR, jax persistent cache, inductor FX graph cache, numba cache=True)."),
        "",
        *_measure_table(results, systems, "warm_start_s", notes, vs_numpy=False, spread=False),
        "",
        "## Batch-size change: the first call with batch + 1",
        "",
        ("Where a system specializes on shapes this includes its recompilation "
        "(pyfront: a variant with the batch dim dynamic; torch: a dynamic-shape graph)."),
        "",
        *_relative_table(results, systems, "shape_change_s", None, notes),
        "",
        "## Guard failure (deopt): inputs that break a speculated assumption",
        "",
        ("The call on inputs that take a branch never seen before, then the next usual call "
        "(for pyfront: the guard fails, the call re-runs in the interpreter, the variant is retired "
        "and the next call recompiles with both sides of the branch)."),
        "",
    ]
    for name, program in results["programs"].items():
        if program["guard_failure"]:
            out.append(f"- {name}: {program['guard_failure']}")
    out += ["", *_relative_table(results, systems, "guard_failure_s", "after_guard_failure_s", notes), ""]
    out += [*_call_overhead_table(results.get("call_overhead")), ""]
    out += ["## Library start-up per process", "",
            ("Compiling and running a trivial function once: paid by every new process "
            "before the first-call times above."), "",
            "| system | cold caches | warm caches |", "|---|---|---|"]
    for s, modes in results["init_s"].items():
        if s != "numpy":
            out.append(f"| {LABELS[s]} | {fmt_time(modes.get('cold'))} | {fmt_time(modes.get('warm'))} |")
    if notes.texts:
        out += ["", "## Notes", ""]
        out += [f"{i}. {text}" for i, text in enumerate(notes.texts, 1)]
    return "\n".join(out) + "\n"


def _call_overhead_table(overhead: dict | None) -> list[str]:
    """The trivial-call row per pyfront backend (bench/call_overhead.py's medians)."""
    if not overhead:
        return []
    out = ["## Trivial call overhead", ""]
    if "error" in overhead:
        return out + [f"Not measured: {overhead['error']}"]
    out += [(f"`x + 1.0` on float32[{overhead['size']}], median of {overhead['rounds']} rounds of "
             f"{overhead['calls']} calls (bench/call_overhead.py); in parentheses the ratio to the bare VM "
             "call: `VmContext.invoke` of the same compiled function on a prebuilt argument list. "
             "iree.runtime: the module through iree.runtime's own function invoker."), "",
            "| backend | NumPy | bare VM call | iree.runtime | pyfront | pyfront vs NumPy |", "|---|---|---|---|---|---|"]
    for backend, t in overhead["medians"].items():
        bare = t["bare VM call"]
        cells = [f"{fmt_time(t[w])} ({t[w] / bare:.2f}×)" for w in ("numpy", "bare VM call", "iree.runtime", "pyfront")]
        out.append(f"| {backend} | {' | '.join(cells)} | {fmt_ratio(t['numpy'] / t['pyfront'])} |")
    return out


def write_chart(results: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    systems = [s for s in results["meta"]["systems"] if s != "numpy"]
    rows = list(_rows(results))
    labels = [f"{name}\n{label}" for name, label, _ in rows]
    panels = [("steady", "steady-state speedup over NumPy (higher is better)", True),
              ("first_call_s", "first call: profile + compile, seconds (lower is better)", False),
              ("warm_start_s", "warm start from the on-disk cache, seconds (lower is better)", False)]
    fig, axes = plt.subplots(len(panels), 1, figsize=(max(10, 1.3 * len(rows) + 3), 13))
    width = 0.8 / max(1, len(systems))
    x = np.arange(len(rows))
    for ax, (measure, title, vs_numpy) in zip(axes, panels):
        for i, s in enumerate(systems):
            values = []
            for _, _, cells in rows:
                t = _value(cells.get(s), measure)
                numpy_t = _value(cells.get("numpy"), "steady")
                if t is None or (vs_numpy and numpy_t is None):
                    values.append(np.nan)
                else:
                    values.append(numpy_t / t if vs_numpy else t)
            ax.bar(x + (i - (len(systems) - 1) / 2) * width, values, width, label=LABELS[s])
        ax.set_yscale("log")
        ax.set_title(title)
        ax.set_xticks(x, labels, fontsize=8)
        ax.grid(axis="y", which="both", alpha=0.3)
        if vs_numpy:
            ax.axhline(1.0, color="black", linewidth=0.8)
    handles, names = axes[0].get_legend_handles_labels()
    fig.legend(handles, names, ncol=len(systems), loc="upper center", bbox_to_anchor=(0.5, 0.955))
    fig.suptitle(f"pyfront vs peers ({results['meta']['date']}, {results['meta']['threads']} thread(s))\n"
                 "no bar: the system cannot run the program or was wrong (see latest.md)", fontsize=10)
    fig.tight_layout(rect=(0, 0, 1, 0.94))
    fig.savefig(path, dpi=90)
    plt.close(fig)


def main() -> None:
    import json
    import sys

    source = Path(sys.argv[1] if len(sys.argv) > 1 else "bench/results/latest.json")
    results = json.loads(source.read_text())
    (source.parent / "latest.md").write_text(write_markdown(results))
    write_chart(results, source.parent / "latest.png")


if __name__ == "__main__":
    main()
