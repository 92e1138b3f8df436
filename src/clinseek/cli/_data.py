"""``clinseek data ...``: build and inspect stores."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Annotated

import typer

from ._app import data_app
from ._out import check_out

_DIR = {"exists": True, "file_okay": False, "dir_okay": True}


@data_app.command("ingest")
def ingest_cmd(
    out: Annotated[Path, typer.Option("--out", help="The store file to create or resume (DuckDB); any other existing file is refused.")],
    mimic_iv: Annotated[
        Path | None, typer.Option("--mimic-iv", help="MIMIC-IV directory holding hosp/ and icu/.", **_DIR)
    ] = None,
    ed: Annotated[
        Path | None, typer.Option("--ed", help="MIMIC-IV-ED directory (ed/ or the files).", **_DIR)
    ] = None,
    note: Annotated[
        Path | None, typer.Option("--note", help="MIMIC-IV-Note directory (note/ or the files).", **_DIR)
    ] = None,
    cxr: Annotated[
        Path | None,
        typer.Option("--cxr", help="MIMIC-CXR(-JPG) directory with mimic-cxr-2.0.0-*.csv.gz.", **_DIR),
    ] = None,
    memory_limit: Annotated[
        str | None, typer.Option(help="DuckDB memory limit (default 1.5GB); it spills beyond it.")
    ] = None,
    threads: Annotated[int | None, typer.Option(help="DuckDB threads (default: all cores).")] = None,
    temp_dir: Annotated[Path | None, typer.Option(help="Spill directory (default: <out>.tmp).")] = None,
    progress: Annotated[bool, typer.Option(help="Show a per-table progress bar on stderr.")] = True,
) -> None:
    """Ingest MIMIC-IV (+ ED, Note, CXR) CSV files into a typed DuckDB store; re-running resumes."""
    from ..store import StoreLimits, ingest

    check_out(out, "file")
    if temp_dir is not None:
        check_out(temp_dir, "dir", "--temp-dir")
    limits = StoreLimits(threads=threads, temp_directory=temp_dir)
    if memory_limit is not None:
        limits = dataclasses.replace(limits, memory_limit=memory_limit)
    report = ingest(out, mimic_iv=mimic_iv, ed=ed, note=note, cxr=cxr, limits=limits, progress=progress)
    from ._data_render import print_ingest_report

    print_ingest_report(report)


@data_app.command("info")
def info_cmd(
    store: Annotated[Path, typer.Argument(help="A store file built by `data ingest` or `data synth`.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
) -> None:
    """Show a store's modules, tables, row counts, patients, time range and provenance."""
    from ..store import store_info

    info = store_info(store)
    if as_json:
        typer.echo(info.model_dump_json(indent=2))
    else:
        from ._data_render import print_info

        print_info(info)


@data_app.command("synth")
def synth_cmd(
    out: Annotated[Path, typer.Option("--out", help="The store file to write (DuckDB); an existing synthetic store is replaced, anything else refused.")],
    patients: Annotated[int, typer.Option("--patients", min=1, help="Number of synthetic patients.")] = 200,
    seed: Annotated[int, typer.Option("--seed", help="Random seed; the same seed gives the same tables.")] = 7,
    progress: Annotated[bool, typer.Option(help="Show a progress bar on stderr.")] = True,
) -> None:
    """Synthesize a MIMIC-IV-shaped store (every registry table, CXR images beside it); no credentials needed."""
    from ..store import synthesize

    check_out(out, "file")
    report = synthesize(out, patients=patients, seed=seed, progress=progress)
    total = sum(report.rows.values())
    typer.echo(
        f"{report.path}: {report.patients} patients, {len(report.rows)} tables, {total:,} rows, "
        f"{report.images} CXR images in {report.cxr_root} ({report.seconds:.1f} s)"
    )
