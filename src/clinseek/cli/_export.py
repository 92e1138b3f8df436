"""``clinseek export RUNS --out DIR``: finished runs written in the reference's results layout."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ._app import app
from ._out import check_out


@app.command("export")
def export_cmd(
    runs: Annotated[Path, typer.Argument(help="A results folder of clinseek runs (or one results.jsonl).")],
    out: Annotated[Path, typer.Option("--out", help="Root of the export (a folder outside RUNS).")],
    layout: Annotated[str, typer.Option("--layout", help="The layout to write: reference (ClinSeek-Evaluation-Results).")] = "reference",
    split: Annotated[str | None, typer.Option("--split", help="Split folder (default full<N>, N the run's questions).")] = None,
) -> None:
    """Write finished runs as the reference's <ehr_bench|mm_bench|agent_ehr_bench>/<agentic|oneshot>/<split>/<model>/
    results.jsonl (its row fields, clinseek's beside), so its scripts read them; `clinseek score` reads
    the export with the same per-question F1."""
    from ..runner import export_reference

    if layout != "reference":
        raise typer.BadParameter(f"expected 'reference', got {layout!r}", param_hint="--layout")
    if split is not None and (not split or "/" in split or split in (".", "..")):
        raise typer.BadParameter("one folder name (full1800, smoke20)", param_hint="--split")
    check_out(out, "dir")
    for run in export_reference(runs, out, split=split):
        typer.echo(f"{run.source} -> {run.target} ({run.rows} rows)")
