"""``clinseek import-inspect LOG --out DIR``: an inspect_ai log of the clinseek tasks as clinseek results."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ._app import app
from ._out import check_out


@app.command("import-inspect")
def import_inspect_cmd(
    log: Annotated[Path, typer.Argument(help="An inspect_ai log (.eval or .json) of clinseek/clinseek_text or clinseek/clinseek_mm.")],
    out: Annotated[Path, typer.Option("--out", help="Results root: OUT/<benchmark>/<mode>/<model-slug>/results.jsonl.")] = Path("runs"),
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Replace a results.jsonl the import would write.")] = False,
) -> None:
    """Write an inspect eval's samples as clinseek result rows (and run_manifest.json), so `clinseek score`,
    `compare`, `report` and `distill export` read it; the model is recorded as inspect:<model>."""
    from ..errors import import_optional

    import_optional("inspect_ai", "clinseek import-inspect", "inspect")
    from ..inspect_tasks import import_inspect_log

    check_out(out, "dir")
    for run in import_inspect_log(log, out, overwrite=overwrite):
        errors = f", {run.infra_errors} infrastructure errors (not scored)" if run.infra_errors else ""
        typer.echo(f"{log} -> {run.results} ({run.rows} rows{errors})")
        for problem in run.unreadable:
            typer.echo(f"  not imported: {problem}", err=True)
