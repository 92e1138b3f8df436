"""The ``clinseek`` typer application and its command groups (commands live in sibling modules)."""

from __future__ import annotations

import typer

app = typer.Typer(
    name="clinseek",
    help="Agentic clinical evidence seeking over MIMIC-IV shaped EHRs.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
data_app = typer.Typer(
    help="Build and inspect stores: ingest MIMIC files, synthesize a store, show info.", no_args_is_help=True
)
bench_app = typer.Typer(
    help="Benchmarks: validate manifests, build benchmarks from a store, join curated inputs.",
    no_args_is_help=True,
)
distill_app = typer.Typer(
    help="Export scored agent runs as supervised fine-tuning data.", no_args_is_help=True
)

app.add_typer(data_app, name="data")
app.add_typer(bench_app, name="bench")
app.add_typer(distill_app, name="distill")

state: dict[str, bool] = {"debug": False}


@app.callback()
def _root(debug: bool = typer.Option(False, "--debug", help="Show tracebacks for clinseek errors.")) -> None:
    state["debug"] = debug


@app.command("version")
def version_cmd() -> None:
    """Print the clinseek version."""
    from .._version import __version__

    typer.echo(__version__)
