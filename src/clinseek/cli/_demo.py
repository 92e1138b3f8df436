"""``clinseek demo``: the whole pipeline offline (synthetic store → benchmark → baselines → scores → paired tables)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ._app import app
from ._console import table_console
from ._out import EXIT_INFRA_ERRORS, check_out


@app.command("demo")
def demo_cmd(
    out: Annotated[Path, typer.Option("--out", help="Demo directory (created; a rerun with the same options resumes).")] = Path("clinseek-demo"),
    patients: Annotated[int, typer.Option("--patients", min=1, help="Synthetic patients.")] = 150,
    per_task: Annotated[int, typer.Option("--per-task", min=1, help="Questions per task.")] = 3,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the store, the benchmark and the runs.")] = 7,
    store: Annotated[Path | None, typer.Option("--store", help="Use this clinseek store instead of synthesizing one.")] = None,
    tasks: Annotated[list[str] | None, typer.Option("--tasks", help="Only these tasks (repeat); default: all.")] = None,
    concurrency: Annotated[int, typer.Option("--concurrency", min=1, help="Questions run at once.")] = 4,
    progress: Annotated[bool, typer.Option("--progress/--no-progress", help="Progress bars of the runs.")] = True,
) -> None:
    """Run the whole pipeline offline with the baselines: store, benchmark, runs, scores, paired tables.

    Exit code 3 when rows with infrastructure errors remain (rerunning resumes and redoes them).
    """
    import anyio

    from ..demo import DemoSettings, run_demo

    check_out(out, "dir")
    console = table_console()
    settings = DemoSettings(patients=patients, per_task=per_task, seed=seed, concurrency=concurrency, progress=progress)
    result = anyio.run(lambda: run_demo(out, settings=settings, store=store, tasks=tasks, on_stage=console.print))
    from ._demo_render import print_result

    print_result(result, console)
    from ..reporting import write_report

    console.print(f"\nHTML report (open in a browser, no network needed):\n  {write_report([result.out], result.out / 'report.html')}",
                  soft_wrap=True, highlight=False, markup=False)
    if result.infra_errors:
        raise typer.Exit(EXIT_INFRA_ERRORS)
