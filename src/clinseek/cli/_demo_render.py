"""What ``clinseek demo`` prints: the per-run F1 table, the paired tables and where to look next."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ._console import program_name

if TYPE_CHECKING:
    from ..demo import DemoResult
    from ..scoring import GroupDelta, PairedComparison

_HEADS = {"task_type:decision_making": "decision", "task_type:risk_prediction": "risk",
          "task_type:multimodal": "multimodal"}


def _run_name(benchmark: str, mode: str) -> str:
    return f"{benchmark.removeprefix('clinseek-bench-')} {mode}"


def _scores_table(result: DemoResult) -> Table:
    from ..scoring import column_legend, pct

    table = Table(title="F1 (%) per run", box=box.SIMPLE_HEAD, pad_edge=False)
    columns = ("run", "model", "n", "F1", "decision", "risk", "no answer", "infra err")
    table.caption = column_legend(columns).replace("runs with no valid answer", "runs with no valid answer or no row")
    for name in columns:
        table.add_column(name, justify="left" if name in ("run", "model") else "right", no_wrap=True)
    for run in result.report.runs:
        types, o = run.per_task_type, run.overall
        table.add_row(_run_name(run.benchmark, run.mode), run.model, str(o.n_questions), pct(o.f1),
                      pct(types["decision_making"].f1) if "decision_making" in types else "–",
                      pct(types["risk_prediction"].f1) if "risk_prediction" in types else "–",
                      str(o.n_no_answer + o.n_missing), str(o.n_infra_error))
    return table


def _groups(comparison: PairedComparison) -> list[GroupDelta]:
    """Overall, then each task type when there is more than one (else it repeats overall)."""
    types = [g for g in comparison.groups if g.group.startswith("task_type:")]
    return [g for g in comparison.groups if g.group == "overall"] + (types if len(types) > 1 else [])


def _paired_table(comparisons: list[PairedComparison], title: str, kind: str) -> Table:
    """Δ, its paired bootstrap 95 % CI and McNemar's p per comparison and group (percentage points)."""
    from ..scoring import column_legend, delta_cells

    table = Table(title=f"{title} (Δ F1, percentage points)", box=box.SIMPLE_HEAD, pad_edge=False)
    columns = (kind, "group", "n", "A", "B", "Δ", "95% CI (bootstrap)", "p (McNemar)")
    table.caption = column_legend(columns)
    for name in columns:
        table.add_column(name, justify="left" if name in (kind, "group") else "right", no_wrap=True)
    for comparison in comparisons:
        bench, mode, model = comparison.a.split("/", 2)
        name = _run_name(bench, mode) if kind == "run" else f"{bench.removeprefix('clinseek-bench-')} {model}"
        for group in _groups(comparison):
            cells = [escape(c) for c in delta_cells(group)]
            table.add_row(name, _HEADS.get(group.group, group.group), *cells[1:6], cells[8])
            name = ""
    return table


def _paired_tables(result: DemoResult) -> list[Table]:
    from ..demo import DEMO_MODELS

    a, b = DEMO_MODELS
    by_model = [c for c in result.report.paired if c.a.endswith(f"/{a}") and c.b.endswith(f"/{b}")]
    by_mode = [c for c in result.report.paired if c not in by_model]
    return [_paired_table(by_model, f"{a} − {b}", "run"), _paired_table(by_mode, "agent − curated", "model")]


def print_result(result: DemoResult, console: Console) -> None:
    """The demo's tables, the headline Δ, the stage times and the next commands."""
    from ..demo import DEMO_MODELS, find_delta, next_steps, numbers_note
    from ..scoring import pct

    console.print(_scores_table(result))
    note = numbers_note(result.report)
    if note is not None:
        console.print(note, soft_wrap=True, highlight=False, markup=False)
    for table in _paired_tables(result):
        console.print(table)
    a, b = (f"clinseek-bench-text/agent/{m}" for m in DEMO_MODELS)
    head = find_delta(result.report, a, b, "task_type:decision_making")
    if head is not None:
        console.print(f"Decision-making, text, agent mode: {DEMO_MODELS[0]} − {DEMO_MODELS[1]} = "
                      f"{100 * head.delta:+.1f} pp [{pct(head.ci_low)}, {pct(head.ci_high)}] over {head.n} questions",
                      markup=False, soft_wrap=True)
    if result.infra_errors:
        console.print(f"[red]{result.infra_errors} runs ended in infrastructure errors (not scored); rerun to redo them[/red]")
    console.print(" · ".join(f"{s.name} {s.seconds:.0f} s{' (reused)' if s.reused else ''}" for s in result.stages))
    console.print("\nWhere to look next:")
    for what, where in next_steps(result.out, result.store, program=program_name()):
        console.print(f"  {what}:\n    {where}", soft_wrap=True, highlight=False, markup=False)
