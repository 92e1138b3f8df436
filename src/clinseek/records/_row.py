"""The on-disk result row: one line of ``results.jsonl`` per (qid, run_index) of a run, versioned.

Schema versions: 1 (calls carried ``input_tokens``, ``output_tokens`` and ``cached_input_tokens`` as
fields of their own; the oldest rows have no ``parse_mode``) and 2 (each call carries a :class:`Usage`, the one shape of token counts). A row
of an older version is upgraded when it is read; rows are always written at :data:`SCHEMA_VERSION`.
"""

from __future__ import annotations

from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ..refformat import implied_parse_mode
from ._calls import CallRecord, ToolRecord
from ._usage import Usage

SCHEMA_VERSION: Final = 2
"""The version of the rows clinseek writes (see the module docstring)."""
_CALL_TOKENS = ("input_tokens", "output_tokens", "cached_input_tokens")

Status = Literal["answered", "no_answer", "infra_error", "invalid_input"]
Mode = Literal["agent", "curated"]


class ResultRow(BaseModel):
    """One finished run of one question, as written to ``results.jsonl``.

    It keeps the reference's fields (``qid``, ``run_index``, ``runs_per_question``, ``session_id``,
    ``messages``, ``completed``, ``status``, ``stop_reason``, ``error``, the question's manifest
    fields) and adds what the reference never recorded: tokens, cost, latency per call and per
    tool, the prompt and policy versions and the run-configuration hash that keys resume.
    ``status`` is ours (the reference's success/incomplete/error mixed infrastructure failures
    into wrong answers): ``answered`` (a valid answer was given), ``no_answer`` (the run ended
    without one; scored 0), ``infra_error`` (the harness or provider failed; not scored,
    redone on resume) and ``invalid_input`` (the manifest row could not be run: it does not
    validate, names an unknown task, or the store cannot answer it honestly; ``error`` says why;
    scored as a missing question, recorded again on resume).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: Literal[2] = SCHEMA_VERSION
    """The row's format version; rows of version 1 are upgraded when read."""
    qid: str
    run_index: int
    """0-based run of this question (``runs_per_question`` runs per question)."""
    runs_per_question: int = 1
    session_id: str
    """``<qid>__run_<run_index>__<config_hash[:8]>``; unique per run, names nothing secret."""
    benchmark: str
    task: str
    task_type: str
    category: str | None = None
    mode: Mode
    model: str
    """``provider:model`` as given to the runner."""
    config_hash: str
    """Hash of the run configuration (model, mode, prompts, policy, budgets, generation settings)."""
    question_hash: str | None = None
    """SHA-256 of the question's content (``clinseek.runner.question_hash``): qids are positions that
    every benchmark build reuses, so resume and pairing check this too. ``None`` in rows written
    before it existed (unknown question: redone on resume, paired only with rows that lack it too)."""
    store_id: str | None = None
    """Identity of the store the run read (``clinseek.runner.store_identity``); ``None`` when the
    store file was absent (a curated run on verbatim packages) or the row predates the field."""
    prompt_version: str
    policy_version: str
    status: Status
    completed: bool
    """True when the run ended on ``ehr.finish`` (agent) or a parsed ``<answer>`` block (curated)."""
    stop_reason: str
    """finish_tool_call | answer_block | text_answer (an answer read from text by a fallback of the
    extractor) | no_tool_call | max_turns | token_budget | context_length | content_filter (the provider refused
    the prompt) | parse_error | exception |
    invalid_input (the manifest row could not run)."""
    error: str | None = None
    """What went wrong (infra errors: the exception; no_answer: why); never contains credentials."""
    error_type: str | None = None
    """Class name of the exception for infra errors (``RateLimited``, ``ProviderUnavailable``...)."""
    answer: list[str] | None = None
    """Valid answer items (in the candidate list when the question has one), or ``None``."""
    invalid_answer: list[str] = Field(default_factory=list)
    """Items the model gave that are not candidates; reported, never scored as valid."""
    parse_failures: int = 0
    """Curated mode: 1 when the reply did not keep the format (exactly one ``<answer>`` block), even
    when a fallback of the extractor read an answer (``parse_mode`` says which)."""
    parse_mode: str | None = None
    """How the answer was read: ``finish_call`` (agent), ``answer_tag`` (curated), or a fallback of
    the one extractor — ``response_json``, ``final_answer``, ``candidate_match`` (docs/agent.md,
    "Answers and parse modes"); ``None`` when nothing was read, or in rows written before it existed."""
    gold: list[str] = Field(default_factory=list)
    gold_aliases: list[list[str]] = Field(default_factory=list)
    """Per gold item, its other accepted names (parallel to ``gold``; empty when no item has any)."""
    answer_type: str | None = None
    """Multimodal questions: the answer subtype the scorer routes on (``yes_no``, ``count``...); else ``None``."""
    candidates: list[str] = Field(default_factory=list)
    subject_id: int | None = None
    hadm_id: int | None = None
    prediction_time: str | None = None
    """ISO 8601, naive, MIMIC's shifted clock."""
    manifest: dict[str, Any] = Field(default_factory=dict)
    """The other fields of the question (ids, instruction, source...), never the gold label."""
    messages: list[dict[str, Any]] = Field(default_factory=list)
    """The full trajectory (kept on errors); tool calls structured; images by path, never base64."""
    usage: Usage = Field(default_factory=Usage)
    """Tokens summed over the run's model calls."""
    cost_usd: float | None = None
    """Summed cost in USD; ``None`` whenever it is unknown: the model is not in the price table (also
    for rows without a successful call, infrastructure errors included), or a call reported no usage.
    A priced model's failed calls cost 0 (error replies are not billed)."""
    latency_s: float = 0.0
    """Wall time of the whole run in seconds (episode build included)."""
    turns: int = 0
    tool_calls: dict[str, int] = Field(default_factory=dict)
    """Number of calls per canonical tool name."""
    calls: list[CallRecord] = Field(default_factory=list)
    tools: list[ToolRecord] = Field(default_factory=list)
    reminders: int = 0
    compactions: int = 0
    images_sent: int = 0
    """Images sent to the model by reference (task turn and tool pictures)."""
    images_not_sent: int = 0
    """Images the run had but did not send because the model does not take images (``vision`` off);
    the prompt said how many instead. Never a silent drop."""
    input_warnings: list[str] = Field(default_factory=list)
    """What an explicit flag let this question run with: a ``prediction_time`` outside the patient's
    record (``--allow-outside-record``), linked CXR studies or images missing from the store
    (``--allow-missing-cxr``)."""
    started_at: str | None = None
    finished_at: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _upgrade(cls, data: Any) -> Any:
        """A row of schema version 1 in the current shape: each call's token fields become its ``usage``, and
        a row written before ``parse_mode`` existed gets the one its ``stop_reason`` implies
        (``clinseek.refformat.implied_parse_mode``)."""
        if not isinstance(data, dict) or data.get("schema_version", 1) != 1:
            return data
        calls = [_upgrade_call(c) for c in data.get("calls") or []]
        parse_mode = data.get("parse_mode") or implied_parse_mode(data.get("status"), data.get("stop_reason"))
        return {**data, "schema_version": SCHEMA_VERSION, "calls": calls, "parse_mode": parse_mode}

    @property
    def key(self) -> tuple[str, int, str]:
        """(qid, run_index, config_hash): one row per key in a compacted file."""
        return (self.qid, self.run_index, self.config_hash)

    @property
    def answers(self) -> tuple[str | None, str | None]:
        """(question_hash, store_id): what question, on what store, this row answers."""
        return (self.question_hash, self.store_id)


def _upgrade_call(call: Any) -> Any:
    """A version-1 call record with its token fields moved into ``usage``."""
    if not isinstance(call, dict) or "usage" in call:
        return call
    usage = {k: call[k] for k in _CALL_TOKENS if k in call}
    return {**{k: v for k, v in call.items() if k not in _CALL_TOKENS}, "usage": usage}
