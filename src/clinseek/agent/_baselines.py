"""Offline baseline policies ``baseline:null`` and ``baseline:evidence``: no network, same loop, same tools.

They are ``ChatModel`` providers registered with the models ``@provider`` decorator, so they run
through exactly the code an LLM runs through (prompts, tool calls, validation, results). They are
stateless: each reply is derived from the conversation so far, so concurrent runs never share state.
They read the task prompt as a model would (``<patient_info>``, ``<candidate_answers>``,
``<task_instruction>``) and, in agent mode, only the tools' outputs. Usage is zero tokens, cost $0.

``baseline:null`` answers "no" to yes/no questions and nothing (an empty list) otherwise, in one
call: the floor that exposes benchmarks rewarding doing nothing.

``baseline:evidence`` is a deterministic evidence-seeking policy, documented in ``docs/agent.md``:

1. ``ehr.load_ehr`` (the inventory of visible tables).
2. One turn of parallel ``ehr.run_sql_query`` calls:

   * decision-making tasks: the patient's own history in the task's table (the table named by
     the task registry for the instruction; e.g. lab labels for ``labevents``), as
     (name, count, last time, in the latest batch); AgentEHR-Bench prompts (no candidate list, a
     ``<task>_candidates`` table named instead): that history joined to the candidate table (ICD codes
     to their CCS categories, lab labels, test names, drugs, care units), so every name is a candidate;
   * risk tasks: evidence features — age, visible admissions, ICU stays, abnormal labs in the
     last 48 h, best ED triage acuity, vasopressor orders.
3. ``ehr.finish``:

   * decision: candidates ranked by count × recency (weight ``1 / (1 + days_before_cutoff / 7)``)
     of the history names matching them (exact after normalisation, else rapidfuzz
     ``token_set_ratio`` ≥ 80); it answers as many as the latest batch had names (1..20);
     ``next_event`` ranks event tables by their visible row counts;
   * risk: points — age ≥ 75: 2, ≥ 65: 1; ≥ 2 admissions: 1; an ICU stay: 1; abnormal labs in
     48 h ≥ 15: 2, ≥ 5: 1; triage acuity 1: 2, 2: 1; vasopressor: 2 — "yes" when the points reach
     the category threshold (mortality 5, readmission 3, length of stay 3, escalation of care 3,
     otherwise 4).

In Curated Input mode (no tools offered) it reads the evidence package text instead: candidates
ranked by how often they occur in it; risk points from ``anchor_age``/``age``, the words
"abnormal", "ICU" and vasopressor names.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from rapidfuzz import fuzz, process

from ..errors import ModelError
from ..models import GenerateConfig, Message, ModelResponse, ProviderOptions, ToolCall, Usage, provider
from ._answer import normalise_item

YES_NO = ("yes", "no")
_TAG = re.compile(r"<(?P<tag>task_instruction|patient_info|candidate_answers|question)>\s*(?P<body>.*?)\s*</(?P=tag)>", re.S)
_YES_NO_ASK = re.compile(r"\byes or no\b", re.I)
_CANDIDATE_TABLE = re.compile(r"\bcandidate table (\w+_candidates)\b")
_PRESSORS = ("norepinephrine", "epinephrine", "vasopressin", "phenylephrine", "dopamine")
_THRESHOLDS = {"mortality": 5, "readmission": 3, "length_of_stay": 3, "escalation_of_care": 3}


@dataclass(frozen=True, slots=True)
class PromptFacts:
    """What a baseline reads from the task prompt."""

    instruction: str
    subject_id: int | None
    prediction_time: dt.datetime | None
    candidates: tuple[str, ...]
    candidate_table: str | None = None
    """The ``<task>_candidates`` table the instruction points at (AgentEHR-Bench prompts), if any."""

    @property
    def is_yes_no(self) -> bool:
        """True for risk-prediction (yes/no) questions."""
        return {normalise_item(c) for c in self.candidates} == set(YES_NO)


def read_prompt(messages: Sequence[Message]) -> PromptFacts:
    """Parse the first user turn's tagged blocks (the prompts of ``clinseek.agent``).

    A multimodal ``<question>`` that asks for "yes or no" counts as a yes/no question.
    """
    text = next((m.content for m in messages if m.role == "user"), "")
    blocks = {m.group("tag"): m.group("body") for m in _TAG.finditer(text)}
    info = blocks.get("patient_info", "")
    subject = re.search(r"Subject ID:\s*(\d+)", info)
    when = re.search(r"Current Time:\s*([0-9T:\- ]+)", info)
    try:
        candidates = tuple(str(c) for c in json.loads(blocks.get("candidate_answers", "[]")))
    except json.JSONDecodeError:
        candidates = ()
    if not candidates and _YES_NO_ASK.search(blocks.get("question", "")):
        candidates = YES_NO  # a multimodal question that asks "Answer yes or no."
    table = _CANDIDATE_TABLE.search(blocks.get("task_instruction", ""))
    return PromptFacts(
        instruction=blocks.get("task_instruction", "").splitlines()[0] if blocks.get("task_instruction") else "",
        subject_id=int(subject.group(1)) if subject else None,
        prediction_time=dt.datetime.fromisoformat(when.group(1).strip()) if when else None,
        candidates=candidates,
        candidate_table=table.group(1) if table else None,
    )


def _response(name: str, message: Message) -> ModelResponse:
    return ModelResponse(
        model=name, message=message, usage=Usage(), cost_usd=Decimal(0), latency_s=0.0,
        stop_reason="tool_calls" if message.tool_calls else "end_turn",
    )


def _call(turn: int, index: int, name: str, arguments: dict[str, Any]) -> ToolCall:
    return ToolCall(id=f"baseline_{turn}_{index}", name=name, arguments=arguments)


def _answer_block(items: Sequence[str]) -> str:
    return "<answer>\n" + "".join(f"{i}\n" for i in items) + "</answer>"


class NullBaseline:
    """``baseline:null``: "no" for yes/no questions, nothing otherwise; one call, no evidence."""

    supports_native_tools = True
    supports_vision = True
    priced = True
    """An offline baseline costs nothing: its cost is a known $0."""
    """Images are accepted (and ignored): the baseline reads only the text."""

    def __init__(self) -> None:
        self.name = "baseline:null"

    async def generate(self, messages: Sequence[Message], tools: Sequence[Mapping[str, Any]] = (),
                       config: GenerateConfig | None = None) -> ModelResponse:
        """Answer at once (``ehr.finish`` with tools, an ``<answer>`` block without)."""
        facts = read_prompt(messages)
        answer = ["no"] if facts.is_yes_no else []
        if not tools:
            return _response(self.name, Message(role="assistant", content=_answer_block(answer)))
        call = _call(1, 0, "ehr.finish", {"response": answer})
        return _response(self.name, Message(role="assistant", tool_calls=[call]))

    async def aclose(self) -> None:
        """Nothing to release."""


BASELINE_PROVIDER = "baseline"
"""The provider of the scripted offline baselines (``baseline:null``, ``baseline:evidence``)."""


def is_scripted_baseline(model: str) -> bool:
    """Whether ``model`` (``provider:model`` as results record it) is a scripted baseline, not a model:
    it never browses, is not ClinSeekAgent, and its trajectories are not training data."""
    return model.strip().lower().startswith(BASELINE_PROVIDER + ":")


@provider(BASELINE_PROVIDER)
def _baseline_provider(model_id: str, options: ProviderOptions) -> Any:
    """``baseline:null`` and ``baseline:evidence`` (offline; options are ignored)."""
    from ._evidence import EvidenceBaseline

    if model_id == "null":
        return NullBaseline()
    if model_id == "evidence":
        return EvidenceBaseline()
    raise ModelError(f"unknown baseline {model_id!r}; known: baseline:null, baseline:evidence")


def rank_candidates(history: Sequence[tuple[str, float]], candidates: Sequence[str], k: int) -> list[str]:
    """The ``k`` candidates with the highest summed weight of the history names matching them.

    A history name matches a candidate when equal after normalisation, else the best candidate
    with rapidfuzz ``token_set_ratio`` ≥ 80. Ties keep the candidates' order.
    """
    index = {normalise_item(c): c for c in candidates}
    scores: dict[str, float] = {}
    for name, weight in history:
        hit = index.get(normalise_item(name))
        if hit is None and candidates:
            best = process.extractOne(name, list(candidates), scorer=fuzz.token_set_ratio, score_cutoff=80)
            hit = best[0] if best else None
        if hit is not None:
            scores[hit] = scores.get(hit, 0.0) + weight
    order = {c: i for i, c in enumerate(candidates)}
    ranked = sorted(scores, key=lambda c: (-scores[c], order[c]))
    return ranked[: max(0, k)]


def risk_points(features: Mapping[str, float | None]) -> int:
    """Points of the documented risk rules from evidence ``features`` (missing = no points)."""
    def get(key: str) -> float:
        value = features.get(key)
        return float(value) if value is not None else 0.0

    age, acuity = get("age"), features.get("acuity")
    points = 2 if age >= 75 else 1 if age >= 65 else 0
    points += get("admissions") >= 2
    points += get("icu_stays") >= 1
    points += 2 if get("abnormal_labs_48h") >= 15 else 1 if get("abnormal_labs_48h") >= 5 else 0
    points += 2 if acuity is not None and acuity <= 1 else 1 if acuity is not None and acuity <= 2 else 0
    points += 2 if get("pressors") >= 1 else 0
    return int(points)


def risk_threshold(category: str | None) -> int:
    """Points needed to answer "yes" for a task of ``category``."""
    return _THRESHOLDS.get(category or "", 4)
