"""``clinseek mcp serve | http | token | tokens | revoke``: the MCP server of sealed episodes (docs/mcp.md)."""

from __future__ import annotations

import inspect
import json
import typing
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer

from ._app import app, choice

if TYPE_CHECKING:
    from ..mcpserver import EpisodeSpec

mcp_app = typer.Typer(
    help="Serve sealed episodes over MCP: one over stdio, or many over HTTP with a bearer token each.",
    no_args_is_help=True,
)
app.add_typer(mcp_app, name="mcp")

_Opt = typer.Option
_F = TypeVar("_F", bound=Callable[..., Any])


class _Names(StrEnum):
    dotted = "dotted"
    safe = "safe"


class _McpKnowledge(StrEnum):
    offline = "offline"
    off = "off"


def _param(name: str, kind: Any, default: Any, *decls: str, **kwargs: Any) -> inspect.Parameter:
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default,
                             annotation=Annotated[kind, typer.Option(*decls, **kwargs)])


_EPISODE = "Episode"
_SERVED = "Tools"
_EPISODE_OPTIONS = [
    _param("spec", Path | None, None, "--spec", exists=True, dir_okay=False, rich_help_panel=_EPISODE,
           help="A JSON episode spec (the fields of clinseek.mcpserver.EpisodeSpec) instead of the options below."),
    _param("store", str | None, None, "--store", rich_help_panel=_EPISODE,
           help="The store file, or a mimic-code PostgreSQL database (postgresql://user:password@host:port/db)."),
    _param("subject_id", int | None, None, "--subject-id", rich_help_panel=_EPISODE,
           help="The patient (hosp.patients.subject_id), with --prediction-time."),
    _param("prediction_time", str | None, None, "--prediction-time", rich_help_panel=_EPISODE,
           help="The cutoff 'YYYY-MM-DD HH:MM:SS' (MIMIC's shifted clock)."),
    _param("policy", str, "clinseek-text-v1", "--policy", rich_help_panel=_EPISODE, help="Policy version."),
    _param("target_hadm_id", int | None, None, "--target-hadm-id", rich_help_panel=_EPISODE,
           help="Admission whose codes are hidden."),
    _param("target_stay_id", int | None, None, "--target-stay-id", rich_help_panel=_EPISODE,
           help="ED stay whose codes are hidden."),
    _param("study_id", list[int] | None, None, "--study-id", rich_help_panel=_EPISODE,
           help="A linked CXR study (repeat; multimodal policy)."),
    _param("dicom_id", list[str] | None, None, "--dicom-id", rich_help_panel=_EPISODE,
           help="A linked CXR image (repeat; multimodal policy)."),
    _param("hide_cxr_reports", bool, False, "--hide-cxr-reports", rich_help_panel=_EPISODE,
           help="Hide the linked studies' report text."),
    _param("candidates", list[str] | None, None, "--candidates", rich_help_panel=_EPISODE,
           help="TASK=FILE, one candidate per line; repeat."),
    _param("bench", Path | None, None, "--bench", rich_help_panel=_EPISODE,
           help="A benchmark manifest or folder: serve question --qid's episode (never its label)."),
    _param("qid", str | None, None, "--qid", rich_help_panel=_EPISODE, help="The question of --bench."),
    _param("tool", list[str] | None, None, "--tool", rich_help_panel=_SERVED,
           help="Offer only this tool (repeat; default: as clinseek.open_episode offers them)."),
    _param("tool_names", _Names, _Names.dotted, "--tool-names", rich_help_panel=_SERVED, **choice(_Names),
           help="MCP tool names: dotted (ehr.run_sql_query, the reference's) or safe (ehr__run_sql_query, "
                "for clients that refuse dots, such as Claude Desktop)."),
    _param("max_rows", int | None, None, "--max-rows", min=1, rich_help_panel=_SERVED, help="Rows shown per call."),
    _param("sql_timeout", float | None, None, "--sql-timeout", min=0.01, rich_help_panel=_SERVED,
           help="Seconds a query may run."),
    _param("max_tool_chars", int | None, None, "--max-tool-chars", min=1, rich_help_panel=_SERVED,
           help="Characters of a call's text before it is cut (as the agent loop cuts it)."),
    _param("knowledge", _McpKnowledge, _McpKnowledge.off, "--knowledge", rich_help_panel=_SERVED, **choice(_McpKnowledge),
           help="offline: add the browser.* tools over the offline knowledge index."),
    _param("knowledge_cache", Path | None, None, "--knowledge-cache", rich_help_panel=_SERVED,
           help="Offline index cache (default $CLINSEEK_CACHE_DIR/knowledge or ~/.cache/clinseek/knowledge)."),
    _param("docs", list[Path] | None, None, "--docs", exists=True, rich_help_panel=_SERVED,
           help="A folder of .md/.html/.txt/.pdf added to the offline corpus (repeatable)."),
    _param("cxr_root", Path | None, None, "--cxr-root", exists=True, rich_help_panel=_SERVED,
           help="MIMIC-CXR root: adds the image.* tools on the episode's linked images."),
    _param("imaging_weights", Path | None, None, "--imaging-weights", exists=True, rich_help_panel=_SERVED,
           help="Folder of imaging model weights (docs/imaging.md)."),
    _param("imaging_device", str, "cpu", "--imaging-device", rich_help_panel=_SERVED,
           help="torch device of the imaging models."),
    _param("candidate_tables", Path | None, None, "--candidate-tables", exists=True, rich_help_panel=_SERVED,
           help="AgentEHR's candidate_table.db (AgentEHR-Bench questions)."),
    _param("pictures", bool, True, "--pictures/--no-pictures", rich_help_panel=_SERVED,
           help="Send the pictures image.* tools make as image blocks (else a note says they were not shown)."),
]
_EPISODE_NAMES = [p.name for p in _EPISODE_OPTIONS]


def _with_episode_options(fn: _F) -> _F:
    """Add the episode options to a command whose signature ends with ``**episode``."""
    sig = inspect.signature(fn)
    hints = typing.get_type_hints(fn, include_extras=True)  # this module's annotations are strings
    own = [p.replace(annotation=hints.get(p.name, p.annotation)) for p in sig.parameters.values()
           if p.kind is not inspect.Parameter.VAR_KEYWORD]
    fn.__signature__ = sig.replace(parameters=own + _EPISODE_OPTIONS)  # type: ignore[attr-defined]
    return fn


def _spec(options: dict[str, Any]) -> EpisodeSpec:
    """The episode spec the options (or ``--spec``) describe.

    Raises:
        typer.BadParameter: no episode, two of them, or a spec file that does not validate.
    """
    from pydantic import ValidationError

    from ..mcpserver import EpisodeSpec
    from ._knowledge import _default_cache
    from ._run import store_source
    from ._tool import _parse_time, _read_candidates

    given = {k: v for k, v in options.items() if k in _EPISODE_NAMES}
    if given["spec"] is not None:
        try:
            return EpisodeSpec.model_validate_json(Path(given["spec"]).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError) as err:
            raise typer.BadParameter(f"{given['spec']}: cannot read the episode spec: {err}", param_hint="--spec") from None
        except ValidationError as err:  # one line: each problem's field and message
            problems = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'the file'}: "
                                 f"{e['msg'].removeprefix('Value error, ')}" for e in err.errors())
            raise typer.BadParameter(f"{given['spec']}: not an episode spec: {problems}", param_hint="--spec") from None
    if given["store"] is None:
        raise typer.BadParameter("give --store (with --subject-id/--prediction-time or --bench/--qid) or --spec",
                                 param_hint="--store")
    limits = {k: v for k, v in (("max_rows", given["max_rows"]), ("sql_timeout_s", given["sql_timeout"])) if v is not None}
    offline = given["knowledge"] is _McpKnowledge.offline
    fields: dict[str, Any] = dict(
        store=store_source(given["store"]), policy=given["policy"], target_hadm_id=given["target_hadm_id"],
        target_stay_id=given["target_stay_id"], study_ids=tuple(given["study_id"] or ()),
        dicom_ids=tuple(given["dicom_id"] or ()), hide_cxr_reports=given["hide_cxr_reports"],
        candidates=_read_candidates(given["candidates"] or []), bench=given["bench"], qid=given["qid"],
        subject_id=given["subject_id"],
        prediction_time=_parse_time(given["prediction_time"]) if given["prediction_time"] else None,
        tools=tuple(given["tool"]) if given["tool"] else None, limits=limits, max_tool_chars=given["max_tool_chars"],
        knowledge=given["knowledge"].value, knowledge_cache=(given["knowledge_cache"] or _default_cache()) if offline else None,
        docs=tuple(given["docs"] or ()), cxr_root=given["cxr_root"], imaging_weights=given["imaging_weights"],
        imaging_device=given["imaging_device"], candidate_tables=given["candidate_tables"],
        tool_names=given["tool_names"].value, pictures=given["pictures"])
    try:
        return EpisodeSpec(**fields)
    except ValidationError as err:
        raise typer.BadParameter("; ".join(e["msg"].removeprefix("Value error, ") for e in err.errors()),
                                 param_hint="--subject-id/--prediction-time or --bench/--qid") from None


@mcp_app.command("serve")
@_with_episode_options
def serve_cmd(**episode: Any) -> None:
    """Serve one sealed episode over stdio (an MCP client starts this command; docs/mcp.md has the
    Claude Desktop, Claude Code and generic configurations).

    The patient and the cutoff are fixed here, never by the client. Give the episode by patient and
    cutoff (--store --subject-id --prediction-time ...), by benchmark question (--store --bench --qid),
    or as a JSON spec (--spec).
    """
    import anyio

    from ..mcpserver import serve_stdio

    anyio.run(serve_stdio, _spec(episode))


@mcp_app.command("token")
@_with_episode_options
def token_cmd(
    tokens: Annotated[Path, _Opt("--tokens", dir_okay=False, help="The token file (created if needed; mode 0600).")],
    expires_in: Annotated[str, _Opt("--expires-in", help="Lifetime: 30m, 8h, 7d, or never.")] = "8h",
    note: Annotated[str, _Opt("--note", help="Who or what the token is for (listed by `clinseek mcp tokens`).")] = "",
    **episode: Any,
) -> None:
    """Mint a bearer token for one episode of the HTTP mode and print it (it is stored only as a hash).

    The token selects the episode: a client sends it as `Authorization: Bearer <token>` to
    `clinseek mcp http`. It works until it expires or `clinseek mcp revoke` removes it. The episode is
    opened once first (no token for one that cannot be opened); its paths are stored absolute.
    """
    import anyio

    from ..mcpserver import check_spec, mint_token, parse_duration

    lifetime = parse_duration(expires_in)
    spec = _spec(episode)
    anyio.run(check_spec, spec)  # the episode opens (store, patient or question, policy, tools) or nothing is minted
    token, record = mint_token(tokens, spec, expires_in=lifetime, note=note)
    expiry = record.expires_at.isoformat(timespec="seconds") if record.expires_at else "never"
    typer.echo(f"{record.id}: {spec.describe()}; expires {expiry}", err=True)
    typer.echo(token)


@mcp_app.command("tokens")
def tokens_cmd(
    tokens: Annotated[Path, _Opt("--tokens", exists=True, dir_okay=False, help="The token file.")],
) -> None:
    """List the tokens of a token file, one JSON object a line (id, episode, expiry, state; never the token)."""
    from ..mcpserver import describe_record, read_token_file
    from ..mcpserver._tokens import utc_now

    now = utc_now()
    for record in read_token_file(tokens).tokens:
        typer.echo(json.dumps(describe_record(record, now)))


@mcp_app.command("revoke")
def revoke_cmd(
    token_id: Annotated[str, typer.Argument(help="The token's id (tk_..., from `clinseek mcp tokens`).")],
    tokens: Annotated[Path, _Opt("--tokens", exists=True, dir_okay=False, help="The token file.")],
) -> None:
    """Revoke a token: a running `clinseek mcp http` refuses it from its next request."""
    from ..mcpserver import revoke_token

    record = revoke_token(tokens, token_id)
    typer.echo(f"revoked {record.id} ({record.spec.describe()})")


@mcp_app.command("http")
def http_cmd(
    tokens: Annotated[Path, _Opt("--tokens", exists=True, dir_okay=False, help="The token file (`clinseek mcp token`).")],
    host: Annotated[str, _Opt("--host", help="Interface to listen on.")] = "127.0.0.1",
    port: Annotated[int, _Opt("--port", min=0, max=65535, help="Port to listen on.")] = 8765,
    path: Annotated[str, _Opt("--path", help="The MCP endpoint.")] = "/mcp",
    max_episodes: Annotated[int, _Opt("--max-episodes", min=1, help="Episodes open at once at most.")] = 16,
    idle_close: Annotated[float, _Opt("--idle-close", min=1.0, help="Seconds before an unused episode is closed.")] = 300.0,
    rate: Annotated[float, _Opt("--rate", min=0.001, help="Requests per second per token (average).")] = 20.0,
    burst: Annotated[int, _Opt("--burst", min=1, help="Requests a token may send at once.")] = 40,
) -> None:
    """Serve many episodes over streamable HTTP, each selected by its own bearer token.

    Read-only towards the store, rate-limited per token (HTTP 429), bounded (at most --max-episodes open;
    idle ones closed). An unknown, revoked or expired token gets HTTP 401 and nothing else.
    """
    import anyio

    from ..mcpserver import HttpSettings, serve_http

    if not path.startswith("/"):
        raise typer.BadParameter(f"{path!r}: an endpoint path starts with '/' (/mcp)", param_hint="--path")
    settings = HttpSettings(max_open=max_episodes, idle_close_s=idle_close, rate_per_s=rate, burst=burst, path=path,
                            host=host)
    typer.echo(f"serving the episodes of {tokens} on http://{host}:{port}{path}", err=True)
    anyio.run(lambda: serve_http(tokens, settings, port))

