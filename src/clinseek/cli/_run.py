"""``clinseek run``: run a benchmark with a model in agent and/or curated mode (thin shell over ``clinseek.run``)."""

from __future__ import annotations

import os
from dataclasses import replace
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer

from ._app import app, choice
from ._out import EXIT_INFRA_ERRORS, EXIT_INVALID_INPUT, check_out

if TYPE_CHECKING:
    from ..agent import ToolTransport
    from ..knowledge import KnowledgeConfig
    from ..runner import RunSettings, RunSummary


class _Mode(StrEnum):
    agent = "agent"
    curated = "curated"
    both = "both"


class _Knowledge(StrEnum):
    offline = "offline"
    web = "web"
    off = "off"


class _SearchBackend(StrEnum):
    serper = "serper"
    brave = "brave"
    searxng = "searxng"
    duckduckgo = "duckduckgo"


def _knowledge_config(kind: _Knowledge, backend: _SearchBackend | None, search_url: str | None, cache: Path | None,
                      docs: list[Path] | None, replay: bool, store: Path | None) -> KnowledgeConfig | None:
    """The browser tools' source: the offline index (cached under ``cache``), a web backend, or none.
    Serper / Brave keys come from ``SERPER_API_KEY`` / ``BRAVE_API_KEY`` (only the CLI reads the environment)."""
    from ..knowledge import KnowledgeConfig
    from ._knowledge import _KEY_ENV, _default_cache

    if kind is _Knowledge.off:
        return None
    if kind is _Knowledge.web and backend is None:
        raise typer.BadParameter("--knowledge web needs --search-backend serper|brave|searxng|duckduckgo",
                                 param_hint="--search-backend")
    name = backend.value if kind is _Knowledge.web and backend else "offline"
    env = _KEY_ENV.get(name)
    return KnowledgeConfig(
        backend=name, api_key=os.environ.get(env) if env else None, base_url=search_url,  # type: ignore[arg-type]
        cache_dir=cache or _default_cache(), cache_mode="replay" if replay else "read_write",
        store=store if name == "offline" else None, folders=tuple(docs or ()),
    )


def store_source(value: str, *, must_exist: bool = True, param_hint: str = "--store") -> Path | str:
    """A ``--store`` value: a PostgreSQL URL as given, or the path of a store file (that exists, with ``must_exist``;
    else opening it names what is wrong).

    Raises:
        typer.BadParameter: ``must_exist`` and a path that is not a file.
    """
    from ..store import is_postgres_url

    if is_postgres_url(value):
        return value
    from ..store import store_file_problem

    path = Path(value)
    problem = store_file_problem(path) if must_exist else None
    if problem and not path.is_dir():
        problem += " (give a clinseek store, or postgresql://user:password@host:port/db)"
    if problem:
        raise typer.BadParameter(problem, param_hint=param_hint)
    return path


def _default_knowledge(model: str) -> _Knowledge:
    """Offline browser tools, except for the offline baselines (they never call a tool, and building the
    index for a store costs ~10 s and ~70 MB of cache)."""
    from ..agent import is_scripted_baseline

    return _Knowledge.off if is_scripted_baseline(model) else _Knowledge.offline


def _protocol(value: str) -> Literal["native", "text"]:
    if value not in ("native", "text"):
        raise typer.BadParameter(f"expected 'native' or 'text', got {value!r}", param_hint="--tool-protocol")
    return "text" if value == "text" else "native"


def _executor(value: str) -> Literal["local", "ray"]:
    if value not in ("local", "ray"):
        raise typer.BadParameter(f"expected 'local' or 'ray', got {value!r}", param_hint="--executor")
    return "ray" if value == "ray" else "local"


def _layout(layout: str, split: str | None) -> Literal["clinseek", "reference"]:
    """``--layout`` checked with ``--split`` (usage errors for bad values)."""
    if layout not in ("clinseek", "reference"):
        raise typer.BadParameter(f"expected 'clinseek' or 'reference', got {layout!r}", param_hint="--layout")
    if split is not None and (layout != "reference" or not split or "/" in split or split in (".", "..")):
        raise typer.BadParameter("one folder name (full1800, smoke20), with --layout reference", param_hint="--split")
    return "reference" if layout == "reference" else "clinseek"


_MODEL, _RUN, _BUDGET, _SOURCES = "Model", "Run", "Budget", "Sources"
"""Help panels of ``clinseek run``: the groups of ``RunSettings`` (the tool limits keep their defaults)."""


def _opt(*names: str, panel: str, **kwargs: Any) -> Any:
    return typer.Option(*names, rich_help_panel=panel, **kwargs)


@app.command("run")
def run_cmd(
    bench: Annotated[Path, typer.Option("--bench", help="A manifest file or a benchmark directory.")],
    store: Annotated[str, typer.Option("--store", help="The DuckDB store episodes are built from, or a mimic-code PostgreSQL database (postgresql://user:password@host:port/db; a read-only role suffices).")],
    model: Annotated[str, typer.Option("--model", help="provider:model, e.g. openai:gpt-5.1 or baseline:evidence.")],
    out: Annotated[Path, typer.Option("--out", help="Results root: OUT/<benchmark>/<mode>/<model-slug>/.")],
    mode: Annotated[_Mode, typer.Option("--mode", help="agent (tool loop), curated (one shot) or both.", **choice(_Mode))] = _Mode.agent,
    limit: Annotated[int | None, typer.Option("--limit", min=1, help="Run at most K questions: a stratified subset (round-robin over tasks and task types; a larger K keeps a smaller K's questions).")] = None,
    tasks: Annotated[list[str] | None, typer.Option("--tasks", help="Only these tasks (repeatable).")] = None,
    base_url: Annotated[list[str] | None, _opt("--base-url", panel=_MODEL, help="OpenAI-compatible endpoint (vLLM, SGLang, Ollama...). Repeat it for replicas of one model: each question goes to one of them, every turn to the same one.")] = None,
    tool_protocol: Annotated[str, _opt("--tool-protocol", panel=_MODEL, help="native, or text for endpoints without tool calling.")] = "native",
    api_key_env: Annotated[str | None, _opt("--api-key-env", panel=_MODEL, help="Environment variable holding the key.")] = None,
    prices: Annotated[Path | None, _opt("--prices", panel=_MODEL, help="Price-table override (JSON or TOML).")] = None,
    temperature: Annotated[float | None, _opt("--temperature", panel=_MODEL, min=0.0, help="Sampling temperature, >= 0 (default: the provider's).")] = None,
    request_timeout: Annotated[float, _opt("--request-timeout", panel=_MODEL, min=1.0, help="Seconds one model request may take before it is retried.")] = 180.0,
    max_attempts: Annotated[int, _opt("--max-attempts", panel=_MODEL, min=1, help="Attempts per model call (the first included) on rate limits, 5xx, timeouts.")] = 6,
    requests_per_s: Annotated[float | None, _opt("--requests-per-s", panel=_MODEL, min=0.001, help="Request rate cap per provider (> 0).")] = None,
    cache_dir: Annotated[Path | None, _opt("--cache-dir", panel=_MODEL, help="On-disk response cache (reruns are free).")] = None,
    vision: Annotated[bool | None, _opt("--vision/--no-vision", panel=_MODEL, help="Send images to the model (default: the model's declared capability).")] = None,
    preflight: Annotated[bool, _opt("--preflight/--no-preflight", panel=_MODEL, help="Check the endpoint, model and tool support with one small request before the first question.")] = True,
    runs_per_question: Annotated[int, _opt("--runs-per-question", panel=_RUN, min=1, help="Independent runs of each question (run_index 0..R-1).")] = 1,
    concurrency: Annotated[int, _opt("--concurrency", panel=_RUN, min=1, help="Question runs in flight at once.")] = 8,
    stop_after_no_reply: Annotated[int | None, _opt("--stop-after-no-reply", panel=_RUN, min=0, help="Stop the run after this many model calls in a row got no reply after their retries (connection failed, timed out, 502/503/504); default max(8, --concurrency); 0 never stops.")] = None,
    seed: Annotated[int, _opt("--seed", panel=_RUN, help="Base seed of the model calls (run r of a question uses seed*1000+r); part of the resume key.")] = 0,
    progress: Annotated[bool, _opt("--progress/--no-progress", panel=_RUN, help="Show a progress bar on stderr.")] = True,
    layout: Annotated[str, _opt("--layout", panel=_RUN, help="clinseek: OUT/<benchmark>/<mode>/<model-slug>/; reference: the reference's OUT/<ehr_bench|mm_bench|agent_ehr_bench>/<agentic|oneshot>/<split>/<model>/ (rows in its shape, clinseek's fields beside).")] = "clinseek",
    split: Annotated[str | None, _opt("--split", panel=_RUN, help="With --layout reference: the split folder (default full<N>, or smoke<N> for part of a benchmark).")] = None,
    allow_outside_record: Annotated[bool, _opt("--allow-outside-record", panel=_RUN, help="Run questions whose prediction_time is before the patient's first record or more than 24 h after the last (recorded in the row's input_warnings); refused by default.")] = False,
    allow_missing_cxr: Annotated[bool, _opt("--allow-missing-cxr", panel=_RUN, help="Run multimodal questions whose linked CXR studies or images are not in the store (recorded in the row's input_warnings); refused by default.")] = False,
    executor: Annotated[str, _opt("--executor", panel=_RUN, help="local (this process) or ray (Ray actors on a cluster or this machine; the [ray] extra, docs/ray.md). Not part of the resume key.")] = "local",
    ray_address: Annotated[str | None, _opt("--ray-address", panel=_RUN, help="With --executor ray: the cluster to join (auto, ray://head:10001, host:6379); default RAY_ADDRESS, else a Ray started on this machine.")] = None,
    workers: Annotated[int | None, _opt("--workers", panel=_RUN, min=1, help="With --executor ray: worker actors (default one per node); --concurrency is shared among them.")] = None,
    stage_store: Annotated[bool, _opt("--stage-store", panel=_RUN, help="With --executor ray: ship a copy of the store to every node (else every node reads --store at the same path).")] = False,
    worker_gpus: Annotated[float, _opt("--worker-gpus", panel=_RUN, min=0.0, help="With --executor ray: GPUs each worker reserves when image.* tools are offered (a fraction shares one); set --imaging-device cuda.")] = 0.0,
    tools: Annotated[list[str] | None, _opt("--tools", panel=_RUN, help="Route of the agent's tool calls: direct (default: in process), mcp (an in-memory MCP client of each run's episode), mcp-stdio (a `clinseek mcp serve` subprocess per run), and mcp+URL (an external MCP server's tools offered beside ours; repeatable). Same tool outputs on every route; the route is recorded in the run manifest.")] = None,
    max_turns: Annotated[int, _opt("--max-turns", panel=_BUDGET, min=1, help="Model turns per agent run before it stops without an answer.")] = 40,
    max_output_tokens: Annotated[int, _opt("--max-output-tokens", panel=_BUDGET, min=1, help="Output-token cap of each model call (agent and curated; recorded once, in the manifest's budget).")] = 8192,
    context_window: Annotated[int, _opt("--context-window", panel=_BUDGET, min=1024, help="The model's context window in tokens: agent runs compact old tool outputs at 75 % of it.")] = 128_000,
    curated_budget: Annotated[int, _opt("--curated-budget", panel=_BUDGET, min=256, help="Tokens of a Curated Input package rendered from the store (newest event blocks first).")] = 16_000,
    knowledge: Annotated[_Knowledge | None, _opt("--knowledge", panel=_SOURCES, **choice(_Knowledge), help="Source of the browser tools in agent mode: offline index, web search, or off (no browser tools). Default: offline; off for baseline:* models, which never browse.")] = None,
    search_backend: Annotated[_SearchBackend | None, _opt("--search-backend", panel=_SOURCES, **choice(_SearchBackend), help="Web backend for --knowledge web.")] = None,
    search_url: Annotated[str | None, _opt("--search-url", panel=_SOURCES, help="Endpoint of the web backend (required for searxng).")] = None,
    knowledge_cache: Annotated[Path | None, _opt("--knowledge-cache", panel=_SOURCES, help="Offline index and web-response cache (default $CLINSEEK_CACHE_DIR/knowledge or ~/.cache/clinseek/knowledge).")] = None,
    docs: Annotated[list[Path] | None, _opt("--docs", panel=_SOURCES, help="A folder of .md/.html/.txt/.pdf added to the offline corpus (repeatable).")] = None,
    search_replay: Annotated[bool, _opt("--search-replay", panel=_SOURCES, help="Web searches and pages only from the response cache (network off).")] = False,
    browser_max_calls: Annotated[int, _opt("--browser-max-calls", panel=_SOURCES, min=1, help="Browser calls per question run.")] = 40,
    cxr_root: Annotated[Path | None, _opt("--cxr-root", panel=_SOURCES, help="MIMIC-CXR root for linked images (default: the store's own image folder, if any).")] = None,
    imaging_weights: Annotated[Path | None, _opt("--imaging-weights", panel=_SOURCES, help="Folder of imaging model weights (docs/imaging.md).")] = None,
    imaging_device: Annotated[str, _opt("--imaging-device", panel=_SOURCES, help="torch device of the imaging models.")] = "cpu",
    candidate_tables: Annotated[Path | None, _opt("--candidate-tables", panel=_SOURCES, help="AgentEHR's candidate_table.db, or its data folder (DIR/database/candidate_table.db), for AgentEHR-Bench questions (default: each task's table built from the store's dictionaries).")] = None,
) -> None:
    """Run a benchmark; resumes an interrupted run in the same OUT (same configuration).

    Every valid row runs; a row that does not validate, names an unknown task, or that the store
    cannot answer honestly is recorded as an invalid_input result with its reason. Exit code 3
    when rows with infrastructure errors remain (kept; rerunning resumes and redoes them), or when the
    run stopped because the model endpoint stopped answering (--stop-after-no-reply), else 4 when
    invalid_input rows were recorded.
    """
    from ..agent import AgentBudget
    from ..api import run
    from ..imaging import ImagingConfig, store_cxr_root
    from ..models import GenerateConfig
    from ..runner import EndpointGone, ModelSettings, RetryPolicy, RunOptions, RunSettings, Sources
    from ..tools import PageBrowserLimits

    source = store_source(store, must_exist=False)
    file = source if isinstance(source, Path) and source.is_file() else None
    settings = RunSettings(
        model=ModelSettings(
            base_url=base_url[0] if base_url else None, endpoints=tuple(base_url[1:] if base_url else ()), tool_protocol=_protocol(tool_protocol), api_key_env=api_key_env, price_table=prices,
            generate=GenerateConfig(temperature=temperature, timeout_s=request_timeout, max_output_tokens=max_output_tokens),
            retry=RetryPolicy(max_attempts=max_attempts), requests_per_s=requests_per_s, cache_dir=cache_dir,
            vision=vision, preflight=preflight),
        run=RunOptions(runs_per_question=runs_per_question, concurrency=concurrency, seed=seed, progress=progress,
                       layout=_layout(layout, split), split=split, allow_outside_record=allow_outside_record,
                       allow_missing_cxr=allow_missing_cxr, executor=_executor(executor), ray_address=ray_address,
                       workers=workers, stage_store=stage_store, worker_gpus=worker_gpus,
                       stop_after_no_reply=stop_after_no_reply),
        budget=AgentBudget(max_turns=max_turns, max_output_tokens=max_output_tokens,
                           context_window_tokens=context_window, curated_budget_tokens=curated_budget),
        sources=Sources(
            knowledge=_knowledge_config(knowledge or _default_knowledge(model), search_backend, search_url,
                                        knowledge_cache, docs, search_replay, file),
            browser=PageBrowserLimits(max_calls=browser_max_calls),
            cxr_root=cxr_root or (store_cxr_root(file) if file else None),
            imaging=ImagingConfig(weights_dir=imaging_weights, device=imaging_device), candidate_tables=candidate_tables),
    )
    if tools:
        settings = replace(settings, run=replace(settings.run, tool_transport=_tool_transport(tools, source, settings)))
    check_out(out, "dir")
    if cache_dir is not None:
        check_out(cache_dir, "dir", "--cache-dir")
    try:
        summary = run(bench, source, model, out, mode=mode.value, tasks=tasks, limit=limit, settings=settings)
    except EndpointGone as gone:  # one message: the endpoint, the last error, the runs left, what to do
        typer.echo(f"error: {gone}; exit code {EXIT_INFRA_ERRORS}", err=True)
        raise typer.Exit(EXIT_INFRA_ERRORS) from None
    _print_summary(summary)


def _tool_transport(values: list[str], store: Path | str, settings: RunSettings) -> ToolTransport | None:
    """``--tools`` as the route of the agent's tool calls (``None``: in process).

    Raises:
        typer.BadParameter: an unknown value, both ``mcp`` and ``mcp-stdio``, or ``mcp-stdio`` with a
            PostgreSQL source (its subprocesses open episodes from a store file).
    """
    routes = {"direct": "direct", "mcp": "memory", "mcp-stdio": "stdio"}
    unknown = [v for v in values if v not in routes and not v.startswith("mcp+")]
    if unknown:
        raise typer.BadParameter(f"{unknown[0]!r}: expected direct, mcp, mcp-stdio or mcp+URL", param_hint="--tools")
    chosen = {routes[v] for v in values if v in routes} or {"direct"}
    if len(chosen) > 1:
        raise typer.BadParameter(f"one route for our tools, got {sorted(v for v in values if v in routes)}",
                                 param_hint="--tools")
    external = tuple(v.removeprefix("mcp+") for v in values if v.startswith("mcp+"))
    route = chosen.pop()
    if route == "direct" and not external:
        return None
    if route == "stdio" and not isinstance(store, Path):
        raise typer.BadParameter("mcp-stdio opens episodes from a store file, not a PostgreSQL URL (use mcp)",
                                 param_hint="--tools")
    from ..mcpserver import McpTransport

    return McpTransport(route=route, external=external, store=store if isinstance(store, Path) else None,  # type: ignore[arg-type]
                        sources=settings.sources)


def _print_summary(summary: RunSummary) -> None:
    """One line per (benchmark, mode), the invalid rows' reasons; exit code 3 when infrastructure errors
    remain, else 4 when invalid_input rows were recorded."""
    for run in summary.runs:
        cost = "unknown (no price for the model)" if run.cost_usd is None else f"${run.cost_usd:.4f}"
        modes = ", ".join(f"{k} {v}" for k, v in run.parse_modes.items())
        typer.echo(f"{run.benchmark} {run.mode} {run.model}: {run.answered} answered"
                   f"{f' ({modes})' if modes else ''}, {run.no_answer} no answer, "
                   f"{run.infra_errors} infra errors{f', {run.invalid_input} invalid input' if run.invalid_input else ''} "
                   f"of {run.total} (resumed {run.resumed}"
                   f"{f', {run.superseded} superseded: rows of another build or store, kept in superseded.jsonl' if run.superseded else ''}); "
                   f"tokens {run.input_tokens + run.output_tokens:,}; cost {cost} -> {run.out_dir}")
    _report_invalid(summary.invalid_reasons)
    failed = sum(run.infra_errors for run in summary.runs)
    if failed:
        _report_infra(summary)
        typer.echo(f"{failed} question runs ended in infrastructure errors; rerun the same command to redo only "
                   f"those (finished rows are kept); exit code {EXIT_INFRA_ERRORS}", err=True)
        raise typer.Exit(EXIT_INFRA_ERRORS)
    if summary.invalid_input:
        raise typer.Exit(EXIT_INVALID_INPUT)


_SHOWN_INVALID = 20
_SHOWN_CAUSES = 3


def _report_infra(summary: RunSummary) -> None:
    """The commonest errors of the infrastructure-error rows (read back from the results files), on stderr:
    the count alone does not say whether the server answered 500, timed out or refused the key."""
    import json
    from collections import Counter

    causes: Counter[str] = Counter()
    for run in summary.runs:
        path = Path(run.out_dir) / "results.jsonl"
        if not run.infra_errors or not path.is_file():
            continue
        with path.open(encoding="utf-8") as lines:
            for line in lines:
                try:
                    row = json.loads(line)
                except ValueError:  # a torn line: resume drops it
                    continue
                if isinstance(row, dict) and row.get("status") == "infra_error":
                    causes[str(row.get("error") or "no error recorded")[:300]] += 1
    for cause, count in causes.most_common(_SHOWN_CAUSES):
        typer.echo(f"infra error ({count} run{'s' if count > 1 else ''}): {cause}", err=True)
    if len(causes) > _SHOWN_CAUSES:
        typer.echo(f"({len(causes) - _SHOWN_CAUSES} other errors in the results' error fields)", err=True)


def _report_invalid(reasons: list[str]) -> None:
    """One line per manifest row that could not run (the first 20), with its reason, on stderr."""
    for reason in reasons[:_SHOWN_INVALID]:
        typer.echo(f"invalid input: {reason}", err=True)
    more = f" ({len(reasons) - _SHOWN_INVALID} more in the results' error fields)" if len(reasons) > _SHOWN_INVALID else ""
    if reasons:
        typer.echo(f"{len(reasons)} manifest rows could not run and are recorded as invalid_input results{more}; "
                   f"exit code {EXIT_INVALID_INPUT}", err=True)
