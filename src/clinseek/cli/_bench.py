"""``clinseek bench ...``: validate manifests, build benchmarks from a store, join EHR-Bench curated inputs."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ._app import bench_app
from ._out import check_out

_Manifest = Annotated[
    Path, typer.Argument(help="A manifest file (.json array / .jsonl) or a benchmark directory.")
]


@bench_app.command("validate")
def validate_cmd(
    path: _Manifest,
    store: Annotated[
        Path | None, typer.Option("--store", help="Check every referenced id exists in this store.")
    ] = None,
    release: Annotated[
        bool, typer.Option("--release", help="Check the released composition (card counts).")
    ] = False,
    allow_outside_record: Annotated[
        bool,
        typer.Option(
            "--allow-outside-record",
            help="A prediction_time before the patient's first record or more than 24 h after the last is a note, "
            "not a problem (with --store).",
        ),
    ] = False,
) -> None:
    """Validate every row; exit 1 when any problem is found."""
    from ..bench import validate_benchmark

    report = validate_benchmark(path, store=store, release=release, outside_record_ok=allow_outside_record)
    for file, count in report.rows.items():
        typer.echo(f"{file}: {count} valid rows")
    for note in report.notes:
        typer.echo(f"note: {note}")
    for problem in report.problems:
        typer.echo(f"problem: {problem}", err=True)
    typer.echo("ok" if report.ok else f"{len(report.problems)} problem(s)")
    if not report.ok:
        raise SystemExit(1)  # not typer.Exit: main() runs the app with standalone_mode=False


@bench_app.command("build")
def build_cmd(
    store: Annotated[Path, typer.Option("--store", help="The clinseek store to draw questions from.")],
    out: Annotated[Path, typer.Option("--out", help="Output benchmark directory (absent or empty).")],
    tasks: Annotated[
        list[str] | None, typer.Option("--tasks", help="Task names (repeat or comma-separate); default: all.")
    ] = None,
    per_task: Annotated[
        int | None, typer.Option("--per-task", min=1, help="Questions per task (default 40; 100 for agentehr).")
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="Sampling seed.")] = 42,
    benchmark: Annotated[
        str, typer.Option("--benchmark", help="clinseek (ClinSeek-Bench text + multimodal) or agentehr (AgentEHR-Bench).")
    ] = "clinseek",
) -> None:
    """Build a release-shaped benchmark directory from a store."""
    from ..bench import AGENTEHR_PER_TASK, build_benchmark

    if benchmark not in ("clinseek", "agentehr"):
        raise typer.BadParameter(f"expected clinseek or agentehr, got {benchmark!r}", param_hint="--benchmark")
    check_out(out, "dir")
    names = [t for arg in tasks or [] for t in arg.split(",") if t.strip()]
    default = AGENTEHR_PER_TASK if benchmark == "agentehr" else 40
    result = build_benchmark(
        store, tasks=[t.strip() for t in names] or None, per_task=per_task or default, seed=seed, out=out,
        benchmark="agentehr" if benchmark == "agentehr" else "clinseek",
    )
    for name, count in sorted(result.counts.items()):
        typer.echo(f"{name}: {count}")
    for name, reason in sorted(result.skipped.items()):
        typer.echo(f"skipped {name}: {reason}", err=True)
    typer.echo(f"wrote {sum(result.counts.values())} questions to {out}")


@bench_app.command("join")
def join_cmd(
    path: Annotated[Path, typer.Argument(help="A ClinSeek-Bench text manifest (JSON array).")],
    ehr_bench: Annotated[Path, typer.Option("--ehr-bench", help="Directory with the EHR-Bench JSONL files.")],
    out: Annotated[
        Path | None, typer.Option("--out", help="Output file (default: PATH stem + .joined.json).")
    ] = None,
) -> None:
    """Join EHR-Bench ``input``/``question`` back into text rows by source_file/source_idx."""
    from ..bench import join_ehr_bench

    if out is not None:
        check_out(out, "file", example=f"{path.stem}.joined.json")
    result = join_ehr_bench(path, ehr_bench, out=out)
    typer.echo(f"joined {result.joined} of {result.total} rows")
    for problem in result.unmatched:
        typer.echo(f"unmatched: {problem}", err=True)
