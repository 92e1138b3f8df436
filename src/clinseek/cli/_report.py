"""``clinseek report DIR... [--out report.html]``: one self-contained HTML report of scored runs."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ._app import app
from ._out import check_out


@app.command("report")
def report_cmd(
    dirs: Annotated[list[Path], typer.Argument(help="Scores folders (summary.json), demo folders or results folders.")],
    out: Annotated[Path, typer.Option("--out", help="The HTML file to write.")] = Path("report.html"),
    image_root: Annotated[
        list[Path] | None, typer.Option("--image-root", help="Folder to resolve relative image paths under (repeat).")
    ] = None,
    title: Annotated[str, typer.Option("--title", help="Title of the page.")] = "clinseek report",
) -> None:
    """Write a self-contained HTML report: headline tables, figures, question browser, trajectories, manifests."""
    from ..api import report

    check_out(out, "file", example="report.html")
    stats = report(dirs, out, image_roots=image_root or [], title=title)
    typer.echo(f"{stats.runs} runs (benchmark x mode x model), {stats.question_rows} rows (question x model), "
               f"{stats.trajectories} trajectories (row x mode x repeat), {stats.size_bytes / 1e6:.1f} MB")
    typer.echo(str(stats.path))
