"""The ``clinseek`` typer application and its command groups (commands live in sibling modules)."""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from typing import Any

import typer

_PLAIN: dict[str, Any] = {
    "rich_markup_mode": None,
    "context_settings": {"max_content_width": 120},
    "no_args_is_help": True,
}
"""Help and usage errors are click's plain text: typer's rich help alone imports ~150 modules (rich,
markdown-it, pygments), and ``clinseek --help`` stays under 300 modules and 0.3 s of CPU."""

def choice(kind: type[StrEnum]) -> dict[str, Any]:
    """``typer.Option`` arguments for an option whose value is one of ``kind``'s: the choices as metavar and a parser
    whose error names them and the closest one ("'agents' is not one of 'agent', 'curated', 'both' (did you mean
    'agent'?)"; typer's own message starts with pydantic's "Value error, " and suggests nothing)."""
    names = [member.value for member in kind]

    def parse(value: Any) -> StrEnum:
        if isinstance(value, kind):
            return value
        try:
            return kind(value)
        except ValueError:
            from .._suggest import did_you_mean

            listed = ", ".join(map(repr, names))
            raise typer.BadParameter(f"{value!r} is not one of {listed}{did_you_mean(str(value), names)}") from None

    parser: Callable[[Any], StrEnum] = parse
    return {"parser": parser, "metavar": "<" + "|".join(names) + ">"}


app = typer.Typer(
    name="clinseek",
    help="Agentic clinical evidence seeking over MIMIC-IV shaped EHRs.",
    pretty_exceptions_enable=False,
    add_completion=False,
    **_PLAIN,
)
data_app = typer.Typer(
    help="Build and inspect stores: ingest MIMIC files, synthesize a store, show info.", **_PLAIN
)
bench_app = typer.Typer(
    help="Benchmarks: validate manifests, build benchmarks from a store, join curated inputs.", **_PLAIN
)
distill_app = typer.Typer(help="Export scored agent runs as supervised fine-tuning data.", **_PLAIN)

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
