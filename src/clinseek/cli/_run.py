"""``clinseek run``: run a benchmark with a model in agent and/or curated mode (thin shell over ``run_benchmark``)."""

from __future__ import annotations

import os
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

import typer

from ._app import app
from ._out import EXIT_INFRA_ERRORS, EXIT_INVALID_INPUT, check_out

if TYPE_CHECKING:
    from ..bench import InvalidRow
    from ..knowledge import KnowledgeConfig


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
                      docs: list[Path] | None, replay: bool, store: Path) -> KnowledgeConfig | None:
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
        store=store if name == "offline" and store.is_file() else None, folders=tuple(docs or ()),
    )


def _default_knowledge(model: str) -> _Knowledge:
    """Offline browser tools, except for the offline baselines (they never call a tool, and building the
    index for a store costs ~10 s and ~70 MB of cache)."""
    from ..agent import is_scripted_baseline

    return _Knowledge.off if is_scripted_baseline(model) else _Knowledge.offline


def _protocol(value: str) -> Literal["native", "text"]:
    if value not in ("native", "text"):
        raise typer.BadParameter(f"expected 'native' or 'text', got {value!r}", param_hint="--tool-protocol")
    return "text" if value == "text" else "native"


def _layout(layout: str, split: str | None) -> Literal["clinseek", "reference"]:
    """``--layout`` checked with ``--split`` (usage errors for bad values)."""
    if layout not in ("clinseek", "reference"):
        raise typer.BadParameter(f"expected 'clinseek' or 'reference', got {layout!r}", param_hint="--layout")
    if split is not None and (layout != "reference" or not split or "/" in split or split in (".", "..")):
        raise typer.BadParameter("one folder name (full1800, smoke20), with --layout reference", param_hint="--split")
    return "reference" if layout == "reference" else "clinseek"


@app.command("run")
def run_cmd(
    bench: Annotated[Path, typer.Option("--bench", help="A manifest file or a benchmark directory.")],
    store: Annotated[Path, typer.Option("--store", help="The DuckDB store episodes are built from.")],
    model: Annotated[str, typer.Option("--model", help="provider:model, e.g. openai:gpt-5.1 or baseline:evidence.")],
    out: Annotated[Path, typer.Option("--out", help="Results root: OUT/<benchmark>/<mode>/<model-slug>/.")],
    mode: Annotated[_Mode, typer.Option("--mode", help="agent (tool loop), curated (one shot) or both.")] = _Mode.agent,
    base_url: Annotated[str | None, typer.Option("--base-url", help="OpenAI-compatible endpoint (vLLM, SGLang, Ollama...).")] = None,
    runs_per_question: Annotated[int, typer.Option("--runs-per-question", min=1, help="Independent runs of each question (run_index 0..R-1).")] = 1,
    concurrency: Annotated[int, typer.Option("--concurrency", min=1, help="Question runs in flight at once.")] = 8,
    limit: Annotated[int | None, typer.Option("--limit", min=1, help="Run at most K questions: a stratified subset (round-robin over tasks and task types; a larger K keeps a smaller K's questions).")] = None,
    tasks: Annotated[list[str] | None, typer.Option("--tasks", help="Only these tasks (repeatable).")] = None,
    seed: Annotated[int, typer.Option("--seed", help="Base seed of the model calls (run r of a question uses seed*1000+r); part of the resume key.")] = 0,
    cache_dir: Annotated[Path | None, typer.Option("--cache-dir", help="On-disk response cache (reruns are free).")] = None,
    requests_per_s: Annotated[float | None, typer.Option("--requests-per-s", min=0.001, help="Request rate cap per provider (> 0).")] = None,
    max_turns: Annotated[int, typer.Option("--max-turns", min=1, help="Model turns per agent run before it stops without an answer.")] = 40,
    max_output_tokens: Annotated[int, typer.Option("--max-output-tokens", min=1, help="Output-token cap of each model call (agent and curated; recorded once, in the manifest's budget).")] = 8192,
    context_window: Annotated[int, typer.Option("--context-window", min=1024, help="The model's context window in tokens: agent runs compact old tool outputs at 75 % of it.")] = 128_000,
    curated_budget: Annotated[int, typer.Option("--curated-budget", min=256, help="Tokens of a Curated Input package rendered from the store (newest event blocks first).")] = 16_000,
    request_timeout: Annotated[float, typer.Option("--request-timeout", min=1.0, help="Seconds one model request may take before it is retried.")] = 180.0,
    max_attempts: Annotated[int, typer.Option("--max-attempts", min=1, help="Attempts per model call (the first included) on rate limits, 5xx, timeouts.")] = 6,
    preflight: Annotated[bool, typer.Option("--preflight/--no-preflight", help="Check the endpoint, model and tool support with one small request before the first question.")] = True,
    temperature: Annotated[float | None, typer.Option("--temperature", min=0.0, help="Sampling temperature, >= 0 (default: the provider's).")] = None,
    progress: Annotated[bool, typer.Option("--progress/--no-progress", help="Show a progress bar on stderr.")] = True,
    cxr_root: Annotated[Path | None, typer.Option("--cxr-root", help="MIMIC-CXR root for linked images (default: the store's own image folder, if any).")] = None,
    imaging_weights: Annotated[Path | None, typer.Option("--imaging-weights", help="Folder of imaging model weights (docs/imaging.md).")] = None,
    imaging_device: Annotated[str, typer.Option("--imaging-device", help="torch device of the imaging models.")] = "cpu",
    tool_protocol: Annotated[str, typer.Option("--tool-protocol", help="native, or text for endpoints without tool calling.")] = "native",
    api_key_env: Annotated[str | None, typer.Option("--api-key-env", help="Environment variable holding the key.")] = None,
    prices: Annotated[Path | None, typer.Option("--prices", help="Price-table override (JSON or TOML).")] = None,
    knowledge: Annotated[_Knowledge | None, typer.Option("--knowledge", help="Source of the browser tools in agent mode: offline index, web search, or off (no browser tools). Default: offline; off for baseline:* models, which never browse.")] = None,
    search_backend: Annotated[_SearchBackend | None, typer.Option("--search-backend", help="Web backend for --knowledge web.")] = None,
    search_url: Annotated[str | None, typer.Option("--search-url", help="Endpoint of the web backend (required for searxng).")] = None,
    knowledge_cache: Annotated[Path | None, typer.Option("--knowledge-cache", help="Offline index and web-response cache (default $CLINSEEK_CACHE_DIR/knowledge or ~/.cache/clinseek/knowledge).")] = None,
    docs: Annotated[list[Path] | None, typer.Option("--docs", help="A folder of .md/.html/.txt/.pdf added to the offline corpus (repeatable).")] = None,
    search_replay: Annotated[bool, typer.Option("--search-replay", help="Web searches and pages only from the response cache (network off).")] = False,
    browser_max_calls: Annotated[int, typer.Option("--browser-max-calls", min=1, help="Browser calls per question run.")] = 40,
    vision: Annotated[bool | None, typer.Option("--vision/--no-vision", help="Send images to the model (default: the model's declared capability).")] = None,
    allow_outside_record: Annotated[bool, typer.Option("--allow-outside-record", help="Run questions whose prediction_time is before the patient's first record or more than 24 h after the last (recorded in the row's input_warnings); refused by default.")] = False,
    allow_missing_cxr: Annotated[bool, typer.Option("--allow-missing-cxr", help="Run multimodal questions whose linked CXR studies or images are not in the store (recorded in the row's input_warnings); refused by default.")] = False,
    layout: Annotated[str, typer.Option("--layout", help="clinseek: OUT/<benchmark>/<mode>/<model-slug>/; reference: the reference's OUT/<ehr_bench|mm_bench|agent_ehr_bench>/<agentic|oneshot>/<split>/<model>/ (rows in its shape, clinseek's fields beside).")] = "clinseek",
    split: Annotated[str | None, typer.Option("--split", help="With --layout reference: the split folder (default full<N>, or smoke<N> for part of a benchmark).")] = None,
    candidate_tables: Annotated[Path | None, typer.Option("--candidate-tables", help="AgentEHR's candidate_table.db, or its data folder (DIR/database/candidate_table.db), for AgentEHR-Bench questions (default: each task's table built from the store's dictionaries).")] = None,
) -> None:
    """Run a benchmark; resumes an interrupted run in the same OUT (same configuration).

    Every valid row runs; a row that does not validate, names an unknown task, or that the store
    cannot answer honestly is recorded as an invalid_input result with its reason. Exit code 3
    when rows with infrastructure errors remain (kept; rerunning resumes and redoes them), else 4
    when invalid_input rows were recorded.
    """
    import anyio

    from ..agent import AgentBudget
    from ..bench import load_agentehr_tables, prepare_run
    from ..imaging import ImagingConfig, store_cxr_root
    from ..models import GenerateConfig
    from ..runner import RetryPolicy, RunSettings, run_benchmark
    from ..tools import PageBrowserLimits

    settings = RunSettings(
        runs_per_question=runs_per_question, concurrency=concurrency, seed=seed, cache_dir=cache_dir,
        requests_per_s=requests_per_s, base_url=base_url, progress=progress,
        cxr_root=cxr_root or (store_cxr_root(store) if store.is_file() else None),
        imaging=ImagingConfig(weights_dir=imaging_weights, device=imaging_device),
        tool_protocol=_protocol(tool_protocol), api_key_env=api_key_env, price_table=prices,
        budget=AgentBudget(max_turns=max_turns, max_output_tokens=max_output_tokens,
                           context_window_tokens=context_window, curated_budget_tokens=curated_budget),
        generate=GenerateConfig(temperature=temperature, timeout_s=request_timeout, max_output_tokens=max_output_tokens),
        retry=RetryPolicy(max_attempts=max_attempts), preflight=preflight, vision=vision,
        knowledge=_knowledge_config(knowledge or _default_knowledge(model), search_backend, search_url,
                                    knowledge_cache, docs, search_replay, store),
        browser=PageBrowserLimits(max_calls=browser_max_calls), layout=_layout(layout, split), split=split,
        candidate_tables=candidate_tables,
    )
    if candidate_tables is not None:  # a wrong path or table is one error now, not an infra error per question
        load_agentehr_tables(candidate_tables)
    check_out(out, "dir")
    if cache_dir is not None:
        check_out(cache_dir, "dir", "--cache-dir")
    prepared = prepare_run(bench, store, outside_record_ok=allow_outside_record, missing_cxr_ok=allow_missing_cxr)
    summary = anyio.run(lambda: run_benchmark(prepared.questions, store, mode.value, model, out, settings=settings,
                                              limit=limit, tasks=tasks, invalid=prepared.invalid, notes=prepared.notes))
    for run in summary.runs:
        cost = "unknown (no price for the model)" if run.cost_usd is None else f"${run.cost_usd:.4f}"
        modes = ", ".join(f"{k} {v}" for k, v in run.parse_modes.items())
        typer.echo(f"{run.benchmark} {run.mode} {run.model}: {run.answered} answered"
                   f"{f' ({modes})' if modes else ''}, {run.no_answer} no answer, "
                   f"{run.infra_errors} infra errors{f', {run.invalid_input} invalid input' if run.invalid_input else ''} "
                   f"of {run.total} (resumed {run.resumed}"
                   f"{f', {run.superseded} rerun: they answered other questions' if run.superseded else ''}); "
                   f"tokens {run.input_tokens + run.output_tokens:,}; cost {cost} -> {run.out_dir}")
    _report_invalid(prepared.invalid, tasks)
    failed = sum(run.infra_errors for run in summary.runs)
    if failed:
        typer.echo(f"{failed} question runs ended in infrastructure errors; rerun the same command to redo only "
                   f"those (finished rows are kept); exit code {EXIT_INFRA_ERRORS}", err=True)
        raise typer.Exit(EXIT_INFRA_ERRORS)
    if summary.invalid_input:
        raise typer.Exit(EXIT_INVALID_INPUT)


_SHOWN_INVALID = 20


def _report_invalid(invalid: list[InvalidRow], tasks: list[str] | None) -> None:
    """One line per manifest row that could not run (the first 20), with its reason, on stderr."""
    rows = [r for r in invalid if not tasks or r.task in set(tasks)]
    for row in rows[:_SHOWN_INVALID]:
        typer.echo(f"invalid input: {row.reason}", err=True)
    more = f" ({len(rows) - _SHOWN_INVALID} more in the results' error fields)" if len(rows) > _SHOWN_INVALID else ""
    if rows:
        typer.echo(f"{len(rows)} manifest rows could not run and are recorded as invalid_input results{more}; "
                   f"exit code {EXIT_INVALID_INPUT}", err=True)
