"""The run manifest (``run_manifest.json``): how one results folder was produced."""

from __future__ import annotations

import platform
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError


class RunManifest(BaseModel):
    """Everything needed to know how a results directory was produced. Holds no credential."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: Literal[1] = 1
    benchmark: str
    mode: Literal["agent", "curated"]
    model: str
    """``provider:model``."""
    base_url: str | None = None
    """Endpoint override with any user-info and query string removed."""
    config_hash: str
    prompt_version: str
    policy_versions: list[str]
    """Episode policy versions of the questions run."""
    code_version: str
    """The installed clinseek version."""
    git_commit: str | None = None
    """Commit of the source tree when it is a git checkout, else ``None``."""
    seed: int
    runs_per_question: int
    questions: int
    store_id: str | None = None
    """:func:`~clinseek.runner.store_identity` of the store the run read (``None``: no store file)."""
    concurrency: int
    budget: dict[str, Any]
    """The ``AgentBudget``: turns, ``max_output_tokens`` (the one output cap of every call),
    ``context_window_tokens``, ``curated_budget_tokens``, ... ."""
    limits: dict[str, Any]
    generate: dict[str, Any]
    """The ``GenerateConfig`` without ``max_output_tokens`` (the budget's value is the one used):
    ``timeout_s`` (the request timeout), temperature, seed, ... ."""
    retry: dict[str, Any]
    tools: list[str]
    response_cache: bool
    vision: bool | None = None
    """Images were sent to the model (its declared ``supports_vision`` or the ``--vision`` override);
    ``False``: images were replaced by a text note and counted in each row's ``images_not_sent``."""
    knowledge: dict[str, Any] | None = None
    """The browser tools' knowledge source (``Knowledge.describe()``: backend, corpus version and
    document count or endpoint, response-cache path / mode / counts at the end of the run, deny list,
    corpus problems; plus ``index_dir``, ``folders``, ``store``); ``None`` when no browser tools."""
    browser: dict[str, Any] | None = None
    """Per-episode browser budgets (``PageBrowserLimits``); ``None`` when no browser tools."""
    preflight: dict[str, Any] | None = None
    """What the pre-flight found (``clinseek.models.PreflightReport``: endpoint, served models,
    server context length, tools checked, token counter, probe latency, notes); ``None`` when none ran."""
    token_counter: str | None = None
    """What the token budgets counted with (``server:llama.cpp /tokenize``, ``estimate:…``)."""
    executor: dict[str, Any] | None = None
    """Where the jobs ran: ``{"kind": "local"}`` or ``{"kind": "ray", "address", "workers", "stage_store",
    "worker_gpus"}`` (the executor is not part of the configuration hash: a run resumes on either);
    ``None`` in manifests written before it was recorded."""
    endpoints: list[str] = Field(default_factory=list)
    """Replicas of ``base_url``'s model the questions were routed among (``--base-url`` repeated), without
    user-info or query; empty with one endpoint."""
    tool_transport: dict[str, Any] | None = None
    """The route of the agent runs' tool calls (``RunOptions.tool_transport.describe()``: ``kind``
    ``mcp-memory`` or ``mcp-stdio``, and ``external``: each external MCP server's URL and the tools it
    offered beside ours); ``None``: the tools were called in process."""
    python: str = Field(default_factory=platform.python_version)
    packages: dict[str, str] = Field(default_factory=dict)
    started_at: str = Field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="seconds"))


def read_run_manifest(folder: Path | str) -> RunManifest | None:
    """``run_manifest.json`` of one results folder, or ``None`` when it is absent or does not validate."""
    path = Path(folder) / "run_manifest.json"
    if not path.is_file():
        return None
    try:
        return RunManifest.model_validate_json(path.read_bytes())
    except (ValidationError, ValueError):
        return None
