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
    postgres: Annotated[
        str | None,
        typer.Option("--postgres", metavar="URL", help="A mimic-code PostgreSQL database "
                     "(postgresql://user:password@host:port/db): its mimiciv_* schemas, for the modules whose files are not given."),
    ] = None,
    memory_limit: Annotated[
        str | None, typer.Option(help="DuckDB memory limit (default 1.5GB); it spills beyond it.")
    ] = None,
    threads: Annotated[int | None, typer.Option(help="DuckDB threads (default: all cores).")] = None,
    temp_dir: Annotated[Path | None, typer.Option(help="Spill directory (default: <out>.tmp).")] = None,
    progress: Annotated[bool, typer.Option(help="Show a per-table progress bar on stderr.")] = True,
) -> None:
    """Ingest MIMIC-IV (+ ED, Note, CXR) CSV files, or a mimic-code PostgreSQL database, into a typed DuckDB
    store; re-running resumes."""
    from ..store import StoreLimits, ingest

    check_out(out, "file", example="mimic.duckdb")
    if temp_dir is not None:
        check_out(temp_dir, "dir", "--temp-dir")
    limits = StoreLimits(threads=threads, temp_directory=temp_dir)
    if memory_limit is not None:
        limits = dataclasses.replace(limits, memory_limit=memory_limit)
    report = ingest(out, mimic_iv=mimic_iv, ed=ed, note=note, cxr=cxr, postgres=postgres, limits=limits,
                    progress=progress)
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

    check_out(out, "file", example="synthetic.duckdb")
    report = synthesize(out, patients=patients, seed=seed, progress=progress)
    total = sum(report.rows.values())
    typer.echo(
        f"{report.path}: {report.patients} patients, {len(report.rows)} tables, {total:,} rows, "
        f"{report.images} CXR images in {report.cxr_root} ({report.seconds:.1f} s)"
    )


@data_app.command("pg-index")
def pg_index_cmd(
    url: Annotated[str, typer.Argument(metavar="URL", help="The mimic-code PostgreSQL database "
                                       "(postgresql://user:password@host:port/db), as a role that owns its tables.")],
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print the CREATE INDEX statements; change nothing.")] = False,
) -> None:
    """Index subject_id on every patient table of a mimic-code PostgreSQL database, and (subject_id, key) where
    the policy looks rows up by key (emar_id, poe_id, note_id, ...): per-patient reads of a live
    --store postgresql://... source scan whole tables without them. Indexes already there are left alone."""
    from ..store import PgIndex, pg_index

    def show(entry: PgIndex) -> None:
        if entry.status == "planned":
            typer.echo(f"{entry.sql};")
        elif entry.status == "exists":
            typer.echo(f"{entry.relation} ({', '.join(entry.columns)}): already indexed ({entry.name})")
        else:
            typer.echo(f"{entry.relation} ({', '.join(entry.columns)}): created {entry.name} ({entry.seconds:.1f} s)")

    done = pg_index(url, dry_run=dry_run, on_table=show)
    created = sum(e.status == "created" for e in done)
    if not dry_run:
        typer.echo(f"{created} index(es) created, {len(done) - created} already there")
