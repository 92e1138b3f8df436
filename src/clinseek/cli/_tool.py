"""``clinseek tool ...``: run one tool in a fresh episode and print its output (debugging, audits)."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ._app import app

if TYPE_CHECKING:
    from ..episode import EpisodeKey
    from ..tools import Limits, ToolResult


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
    try:
        return dt.datetime.fromisoformat(text)
    except ValueError:
        raise typer.BadParameter(
            f"{text!r}: expected 'YYYY-MM-DD HH:MM:SS'", param_hint="--prediction-time"
        ) from None


def run_one_tool(
    store: Path,
    key: EpisodeKey,
    name: str,
    arguments: dict[str, Any],
    *,
    limits: Limits,
    candidates: dict[str, list[str]] | None = None,
) -> ToolResult:
    """Build the episode for ``key`` from ``store``, run tool ``name`` once, close the episode."""
    import anyio

    from ..episode import build_episode
    from ..tools import ToolContext, call_tool

    with build_episode(store, key, candidates=candidates) as episode:
        ctx = ToolContext(episode, limits, candidates or {})
        return anyio.run(call_tool, ctx, name, arguments)


_Opt = typer.Option


@app.command("tool")
def tool_cmd(
    name: Annotated[str, typer.Argument(help="Canonical tool name, e.g. ehr.get_records_by_time.")],
    store: Annotated[Path, _Opt("--store", exists=True, dir_okay=False, help="The store file.")],
    subject_id: Annotated[int, _Opt("--subject-id", help="The patient (hosp.patients.subject_id).")],
    prediction_time: Annotated[str, _Opt("--prediction-time", help="Cutoff 'YYYY-MM-DD HH:MM:SS'.")],
    policy: Annotated[str, _Opt("--policy", help="Policy version.")] = "clinseek-text-v1",
    target_hadm_id: Annotated[
        int | None, _Opt("--target-hadm-id", help="Admission whose codes are hidden.")
    ] = None,
    target_stay_id: Annotated[
        int | None, _Opt("--target-stay-id", help="ED stay whose codes are hidden.")
    ] = None,
    arg: Annotated[
        list[str] | None, _Opt("--arg", help="key=value (JSON if it starts with [ or {); repeat.")
    ] = None,
    candidates: Annotated[
        list[str] | None, _Opt("--candidates", help="TASK=FILE, one per line; repeat.")
    ] = None,
    max_rows: Annotated[int, _Opt("--max-rows", min=1, help="Rows shown per call.")] = 200,
    sql_timeout_s: Annotated[float, _Opt("--sql-timeout", min=0.01, help="Seconds a query may run.")] = 10.0,
    as_json: Annotated[bool, _Opt("--json", help="Print the whole ToolResult as JSON.")] = False,
) -> None:
    """Run one tool in a fresh sealed episode and print its output (exit code 1 when the tool refused)."""
    from ..episode import EpisodeKey
    from ..tools import Limits

    key = EpisodeKey(subject_id, _parse_time(prediction_time), policy, target_hadm_id, target_stay_id)
    limits = Limits(max_rows=max_rows, sql_timeout_s=sql_timeout_s)
    cands = _read_candidates(candidates or [])
    result = run_one_tool(store, key, name, parse_tool_args(arg or []), limits=limits, candidates=cands)
    typer.echo(result.model_dump_json(indent=2) if as_json else result.content)
    if not result.ok:
        raise typer.Exit(1)
