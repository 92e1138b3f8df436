"""``clinseek tool ...``: run one tool in a fresh episode (``clinseek.open_episode``) and print its output."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Annotated, Any

import typer

from ._app import app
from ._run import _Knowledge, _knowledge_config, _SearchBackend, store_source


def parse_tool_args(items: list[str]) -> dict[str, Any]:
    """``key=value`` pairs as tool arguments; a value starting with ``[`` or ``{`` is read as JSON.

    Raises:
        typer.BadParameter: an item has no ``=`` or its JSON does not parse.
    """
    out: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise typer.BadParameter(f"--arg {item!r}: expected key=value", param_hint="--arg")
        if value.lstrip()[:1] in ("[", "{"):
            try:
                out[key.strip()] = json.loads(value)
            except json.JSONDecodeError as err:
                raise typer.BadParameter(f"--arg {key}: invalid JSON: {err}", param_hint="--arg") from None
        else:
            out[key.strip()] = value
    return out


def _read_candidates(items: list[str]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for item in items:
        task, sep, path = item.partition("=")
        if not sep or not Path(path).is_file():
            raise typer.BadParameter(
                f"{item!r}: expected TASK=FILE with an existing file", param_hint="--candidates"
            )
        lines = Path(path).read_text(encoding="utf-8").splitlines()
        out[task.strip()] = [x.strip() for x in lines if x.strip()]
    return out


def _parse_time(text: str) -> dt.datetime:
    """``--prediction-time``: a naive date and time (``YYYY-MM-DD HH:MM[:SS]``, ISO ``T`` too). A date alone is
    refused (the day's start or its end? the cutoff decides what the model sees), as is a time zone (MIMIC's
    shifted clock has none)."""
    hint = "--prediction-time"
    try:
        when = dt.datetime.fromisoformat(text.strip())
    except ValueError:
        raise typer.BadParameter(f"{text!r}: expected 'YYYY-MM-DD HH:MM:SS'", param_hint=hint) from None
    if len(text.strip()) <= 10:
        day = when.date().isoformat()
        raise typer.BadParameter(f"{text!r} is a date without a time: give the cutoff's time too ('{day} 00:00:00' "
                                 f"is the day's start, '{day} 23:59:59' its end)", param_hint=hint)
    if when.tzinfo is not None:
        raise typer.BadParameter(f"{text!r} has a time zone: give the time as MIMIC's shifted clock writes it, "
                                 "without a zone", param_hint=hint)
    return when


def _tool_name(name: str) -> str:
    from .._suggest import did_you_mean
    from ..tools import tool_names

    known = tool_names()
    if name not in known:
        raise typer.BadParameter(f"unknown tool {name!r}{did_you_mean(name, known)}; `clinseek tools` lists them",
                                 param_hint="NAME")
    return name


_Opt = typer.Option


@app.command("tool")
def tool_cmd(
    name: Annotated[str, typer.Argument(help="Canonical tool name, e.g. ehr.get_records_by_time.")],
    store: Annotated[str, _Opt("--store", help="The store file, or a mimic-code PostgreSQL database (postgresql://user:password@host:port/db).")],
    subject_id: Annotated[int, _Opt("--subject-id", help="The patient (hosp.patients.subject_id).")],
    prediction_time: Annotated[str, _Opt("--prediction-time", help="Cutoff 'YYYY-MM-DD HH:MM:SS'.")],
    policy: Annotated[str, _Opt("--policy", help="Policy version.")] = "clinseek-text-v1",
    target_hadm_id: Annotated[
        int | None, _Opt("--target-hadm-id", help="Admission whose codes are hidden.")
    ] = None,
    target_stay_id: Annotated[
        int | None, _Opt("--target-stay-id", help="ED stay whose codes are hidden.")
    ] = None,
    study_id: Annotated[
        list[int] | None, _Opt("--study-id", help="A CXR study linked to the question (repeat; multimodal policy).")
    ] = None,
    dicom_id: Annotated[
        list[str] | None, _Opt("--dicom-id", help="A CXR image linked to the question (repeat; multimodal policy).")
    ] = None,
    hide_cxr_reports: Annotated[
        bool, _Opt("--hide-cxr-reports", help="Hide the linked studies' report text (as for CXR finding questions).")
    ] = False,
    arg: Annotated[
        list[str] | None, _Opt("--arg", help="key=value (JSON if it starts with [ or {); repeat.")
    ] = None,
    candidates: Annotated[
        list[str] | None, _Opt("--candidates", help="TASK=FILE, one per line; repeat.")
    ] = None,
    max_rows: Annotated[int, _Opt("--max-rows", min=1, help="Rows shown per call.")] = 200,
    sql_timeout_s: Annotated[float, _Opt("--sql-timeout", min=0.01, help="Seconds a query may run.")] = 10.0,
    as_json: Annotated[bool, _Opt("--json", help="Print the whole ToolResult as JSON.")] = False,
    knowledge: Annotated[_Knowledge | None, _Opt("--knowledge", help="Source of the browser.* tools: offline index, web search, or off. Default: offline for a browser.* tool, else off.")] = None,
    search_backend: Annotated[_SearchBackend | None, _Opt("--search-backend", help="Web backend for --knowledge web.")] = None,
    search_url: Annotated[str | None, _Opt("--search-url", help="Endpoint of the web backend (required for searxng).")] = None,
    knowledge_cache: Annotated[Path | None, _Opt("--knowledge-cache", help="Offline index and web-response cache (default $CLINSEEK_CACHE_DIR/knowledge or ~/.cache/clinseek/knowledge).")] = None,
    docs: Annotated[list[Path] | None, _Opt("--docs", help="A folder of .md/.html/.txt/.pdf added to the offline corpus (repeatable).")] = None,
    cxr_root: Annotated[Path | None, _Opt("--cxr-root", help="MIMIC-CXR root the image.* tools read the episode's linked images from (default: the store's own image folder, if any).")] = None,
    imaging_weights: Annotated[Path | None, _Opt("--imaging-weights", help="Folder of imaging model weights (docs/imaging.md).")] = None,
    imaging_device: Annotated[str, _Opt("--imaging-device", help="torch device of the imaging models.")] = "cpu",
) -> None:
    """Run one tool in a fresh sealed episode and print its output (exit code 1 when the tool refused).

    `clinseek tools` lists the tools. The browser.* tools read the offline knowledge index unless
    --knowledge says otherwise; the image.* tools read the episode's linked chest X-rays from
    --cxr-root (or the store's own image folder).
    """
    from ..api import open_episode
    from ..imaging import ImagingConfig, store_cxr_root
    from ..runner import Sources
    from ..tools import BROWSER_TOOLS, IMAGE_TOOLS, Limits

    _tool_name(name)
    source = store_source(store)
    file = source if isinstance(source, Path) else None
    kind = knowledge or (_Knowledge.offline if name in BROWSER_TOOLS else _Knowledge.off)
    sources = Sources(
        knowledge=_knowledge_config(kind, search_backend, search_url, knowledge_cache, docs, False, file),
        cxr_root=(cxr_root or (store_cxr_root(file) if file else None)) if name in IMAGE_TOOLS else None,
        imaging=ImagingConfig(weights_dir=imaging_weights, device=imaging_device))
    with open_episode(source, subject_id, _parse_time(prediction_time), policy=policy, target_hadm_id=target_hadm_id,
                      target_stay_id=target_stay_id, study_ids=study_id or (), dicom_ids=dicom_id or (),
                      hide_cxr_reports=hide_cxr_reports, candidates=_read_candidates(candidates or []), tools=[name],
                      limits=Limits(max_rows=max_rows, sql_timeout_s=sql_timeout_s), sources=sources) as episode:
        reply = episode.call_tool(name, parse_tool_args(arg or []))
    typer.echo(reply.result.model_dump_json(indent=2) if as_json else reply.text)
    if not reply.ok:
        raise typer.Exit(1)
