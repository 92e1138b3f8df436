"""The agent runtime: the ClinSeekAgent tool loop, Curated Input one-shot mode, versioned prompts.

``run_agent`` drives any ``ChatModel`` over the EHR tools of one sealed episode until it calls
``ehr.finish``; ``run_curated`` answers from a curated evidence package in one call. Both return
an :class:`AgentOutcome` (status ``answered`` / ``no_answer`` / ``infra_error``, the full
transcript, usage, cost and timings) and never raise for provider or tool failures.
"""

from ..records import CallRecord, ToolRecord
from . import _baselines  # noqa: F401  (registers baseline:null and baseline:evidence)
from ._answer import AnswerFormatError, finish_items, normalise_item, parse_answer_block, validate_answer
from ._baselines import (
    NullBaseline,
    is_scripted_baseline,
    rank_candidates,
    read_prompt,
    risk_points,
    risk_threshold,
)
from ._budget import AgentBudget
from ._channel import ToolChannel, ToolTransport
from ._curated import curated_messages, run_curated, verbatim_package
from ._evidence import EvidenceBaseline, history_sql, parse_table
from ._extract import PARSE_MODES, STRICT_PARSE_MODES, Extracted, ParseMode, extract_answer
from ._linked import linked_evidence
from ._loop import FINISH_TOOL, default_tools, run_agent, task_messages
from ._outcome import AgentOutcome
from ._prompts import (
    ANSWER_FORMAT,
    FINISH_NOW,
    PROMPT_VERSION,
    REMINDER,
    REPORT_MAX_CHARS,
    SYSTEM_AGENT,
    SYSTEM_BROWSER,
    SYSTEM_CURATED,
    LinkedEvidence,
    agent_messages_text,
    agent_system_prompt,
    curated_user_prompt,
    images_note,
)
from ._reading import (
    AnswerReading,
    answer_vocabulary,
    correction_message,
    read_curated_reply,
    read_finish,
    read_text_answer,
)
from ._records import Transcript
from ._session import EpisodeSession, ToolReply, offered_tools, open_question_session, open_session
from ._sources import Sources
from ._toolturn import tool_record

__all__ = [
    "ANSWER_FORMAT",
    "FINISH_NOW",
    "FINISH_TOOL",
    "PARSE_MODES",
    "PROMPT_VERSION",
    "REMINDER",
    "REPORT_MAX_CHARS",
    "STRICT_PARSE_MODES",
    "SYSTEM_AGENT",
    "SYSTEM_BROWSER",
    "SYSTEM_CURATED",
    "AgentBudget",
    "AgentOutcome",
    "AnswerFormatError",
    "AnswerReading",
    "CallRecord",
    "EpisodeSession",
    "EvidenceBaseline",
    "Extracted",
    "LinkedEvidence",
    "NullBaseline",
    "ParseMode",
    "Sources",
    "ToolChannel",
    "ToolRecord",
    "ToolReply",
    "ToolTransport",
    "Transcript",
    "agent_messages_text",
    "agent_system_prompt",
    "answer_vocabulary",
    "correction_message",
    "curated_messages",
    "curated_user_prompt",
    "default_tools",
    "extract_answer",
    "finish_items",
    "history_sql",
    "images_note",
    "is_scripted_baseline",
    "linked_evidence",
    "normalise_item",
    "offered_tools",
    "open_question_session",
    "open_session",
    "parse_answer_block",
    "parse_table",
    "rank_candidates",
    "read_curated_reply",
    "read_finish",
    "read_prompt",
    "read_text_answer",
    "risk_points",
    "risk_threshold",
    "run_agent",
    "run_curated",
    "task_messages",
    "tool_record",
    "validate_answer",
    "verbatim_package",
]
