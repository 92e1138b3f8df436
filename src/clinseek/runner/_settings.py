"""The settings of a run in five groups: model, run, budget, limits and sources (all recorded in the manifest).

``RunSettings`` is the one value ``run_benchmark`` (and ``clinseek.run``) takes; each group is its own
frozen value, so callers that need only part of it (``clinseek.open_episode`` takes budget, limits and
sources) use the same types. The configuration hash reads the groups' fields under the names it has
always used (docs/runner.md, "Resume"), so regrouping never changes the hash of a run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from ..agent import AgentBudget, Sources, ToolTransport
from ..models import GenerateConfig, TokenCounter
from ..tools import Limits
from ._retry import RetryPolicy


@dataclass(frozen=True, slots=True)
class ModelSettings:
    """How the model is reached and called (the model itself is ``run_benchmark``'s ``model`` argument).

    Attributes:
        base_url: OpenAI-compatible endpoint (vLLM, SGLang, Ollama...); ``None`` = the provider's.
        endpoints: more replicas serving the same model as ``base_url`` (``--base-url`` repeated). Each
            question goes to one replica of ``(base_url, *endpoints)`` chosen from its qid, and every turn
            of it goes there too (sticky routing keeps the replica's prefix cache warm). Not part of the
            configuration hash: replicas serve one model, so adding one never forks a run.
        tool_protocol: ``text`` for endpoints without native tool calling (the models layer's strict
            text protocol).
        api_key_env: environment variable holding the API key (``None`` = the provider's default).
        credentials_file: a user file with a ``[keys]`` table, read when the variable is unset.
        price_table: a price-table override merged over the shipped one.
        generate: sampling settings and the request timeout ``timeout_s`` (its ``max_output_tokens`` is
            replaced by the budget's).
        retry: attempts and backoff of model calls on rate limits, 5xx, timeouts.
        requests_per_s: steady request rate per provider (``None`` = only the concurrency cap).
        cache_dir: on-disk response cache (``None`` = off).
        vision: send images to the model (``None`` = the model's declared ``supports_vision``). Without
            vision, images are not attached, a text note says how many, and the row counts them.
        preflight: check the endpoint once before the first question (``clinseek.models.preflight``:
            reachable, model served, tool calls accepted, tokenizer endpoint); a failure raises
            ``ModelError`` before any row is written. ``clinseek run`` turns it on (``--no-preflight`` off).
        token_counter: what token budgets count with (compaction, the Curated Input budget); ``None`` =
            the server's tokenizer found by the pre-flight, else the conservative estimate.
    """

    base_url: str | None = None
    endpoints: tuple[str, ...] = ()
    tool_protocol: Literal["native", "text"] = "native"
    api_key_env: str | None = None
    credentials_file: Path | None = None
    price_table: Path | None = None
    generate: GenerateConfig = field(default_factory=GenerateConfig)
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    requests_per_s: float | None = None
    cache_dir: Path | None = None
    vision: bool | None = None
    preflight: bool = False
    token_counter: TokenCounter | None = None


@dataclass(frozen=True, slots=True)
class RunOptions:
    """How the questions are run and where the rows go.

    Attributes:
        runs_per_question: independent runs of each question (``run_index`` 0..R-1).
        concurrency: question runs in flight at once.
        seed: base seed of the model calls (run r of a question uses ``seed * 1000 + r``); part of the
            resume key.
        tools: tools offered in agent mode (``None`` = every ``ehr.*`` tool, the ``browser.*`` tools with a
            knowledge source, the ``image.*`` tools for multimodal questions with images).
        progress: show a progress bar on stderr.
        layout: ``reference``: write ``OUT/<ehr_bench|mm_bench|agent_ehr_bench>/<agentic|oneshot>/<split>/
            <model>/results.jsonl`` with rows in the reference's shape, clinseek's fields beside.
        split: the split folder of the reference layout (default: ``full<N>`` for a whole benchmark, else
            ``smoke<N>``, N the questions run).
        allow_outside_record: run questions whose ``prediction_time`` is before the patient's first record or
            more than 24 h after the last (recorded in the rows' ``input_warnings``); refused by default.
        allow_missing_cxr: run multimodal questions whose linked CXR studies or images are not in the store
            (recorded likewise); refused by default. Both are read where a manifest is checked against the
            store (``clinseek.run`` with a manifest path; ``clinseek.bench.prepare_run``).
        executor: ``local`` (this process) or ``ray`` (async Ray actors, docs/ray.md; the ``ray`` extra).
            Not part of the configuration hash: a run started on one executor resumes on the other.
        ray_address: the Ray cluster to join (``auto``, ``ray://head:10001``, ``host:6379``); ``None`` =
            ``RAY_ADDRESS``, else a Ray started for this run on this machine.
        workers: Ray worker actors (``None`` = one per node of the cluster); ``concurrency`` is shared
            among them.
        stage_store: ship a copy of the store to every node that runs a worker (through Ray's object
            store) instead of reading it at the same path there (a shared filesystem).
        worker_gpus: GPUs each Ray worker reserves when the run offers ``image.*`` tools (Ray's
            ``num_gpus``: a fraction shares a GPU); the imaging models run on ``sources.imaging.device``.
        tool_transport: the route of agent runs' tool calls (``None``: in process). An MCP client of each
            run's own episode (``clinseek.mcpserver.McpTransport``: in memory, or a ``clinseek mcp serve``
            subprocess, optionally with an external server's tools beside ours) gives the same tool outputs;
            its ``describe()`` goes in the run manifest and the configuration hash.
        stop_after_no_reply: model calls in a row that got no reply after their retries (connection failed,
            request timed out, a gateway's 502/503/504; any reply in between resets the count) after which the
            run stops: no more questions start, those in flight are cancelled without a row, the message names
            the endpoint, and a rerun resumes them (docs/runner.md, "A server that goes away"). ``None`` =
            ``max(8, concurrency)``; ``0`` = never stop. The local executor only. Not in the configuration hash.
    """

    runs_per_question: int = 1
    concurrency: int = 8
    seed: int = 0
    tools: tuple[str, ...] | None = None
    progress: bool = False
    layout: Literal["clinseek", "reference"] = "clinseek"
    split: str | None = None
    allow_outside_record: bool = False
    allow_missing_cxr: bool = False
    executor: Literal["local", "ray"] = "local"
    ray_address: str | None = None
    workers: int | None = None
    stage_store: bool = False
    worker_gpus: float = 0.0
    tool_transport: ToolTransport | None = None
    stop_after_no_reply: int | None = None


@dataclass(frozen=True, slots=True)
class RunSettings:
    """Everything of one run besides questions, store, mode and model, in five groups.

    Attributes:
        model: how the model is reached and called (:class:`ModelSettings`).
        run: runs per question, concurrency, seed, tools, results layout (:class:`RunOptions`).
        budget: the agent loop's turn, token, tool-output and context budgets
            (:class:`~clinseek.agent.AgentBudget`).
        limits: caps and timeouts of every tool call (:class:`~clinseek.tools.Limits`).
        sources: knowledge, images and candidate tables (:class:`~clinseek.agent.Sources`).
    """

    model: ModelSettings = field(default_factory=ModelSettings)
    run: RunOptions = field(default_factory=RunOptions)
    budget: AgentBudget = field(default_factory=AgentBudget)
    limits: Limits = field(default_factory=Limits)
    sources: Sources = field(default_factory=Sources)
