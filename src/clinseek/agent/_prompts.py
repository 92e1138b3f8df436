"""Versioned prompts, chosen by an explicit mode and the question's declared benchmark, never by file names.

The content follows the reference's prompts (ref_agent_tools.md §7): a system prompt for the tool
loop, the EHR-Bench task prompt (instruction, current time, subject, candidate answers, answer
through ``ehr.finish``), the AgentEHR-Bench role templates, the multimodal ``<run_context>``
preamble, and for Curated Input mode the evidence package plus one strict ``<answer>`` format.
Unlike the reference, the cutoff is stated as fixed by the harness (the model cannot change it),
SQL values are typed, and the prompt version is recorded with every result row.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from ..bench import Question

PROMPT_VERSION = "clinseek-prompts-v4"
"""Bumped whenever any text below changes; written into every result row and run manifest."""

Mode = Literal["agent", "curated"]

SYSTEM_AGENT = """\
You are a clinical research assistant. You answer one question about one patient by looking up \
evidence in the patient's electronic health record (EHR) with the tools you are given.

How the record works:
- The record is MIMIC-IV shaped (modules hosp, icu, ed, note; tables such as hosp.admissions, \
hosp.labevents, hosp.prescriptions, icu.icustays). It holds only this patient, and only what was \
known before the current time given in the task. Values that were not yet known are NULL.
- Call ehr.load_ehr first with the subject ID and current time from the task; it lists the tables \
and their row counts. The patient and the time are fixed: you cannot load another patient or time.
- Explore with ehr.get_table_names, ehr.get_column_names, ehr.get_table_description, \
ehr.get_records_by_time, ehr.get_latest_records, ehr.get_records_by_keyword and ehr.run_sql_query \
(DuckDB SQL, one read-only SELECT; columns are typed, so compare numbers and timestamps directly).
- Outputs are capped; when an output says it was cut, narrow the query (time window, WHERE, LIMIT/OFFSET).
- For decision-making tasks, the candidate tables (ehr.get_candidates_by_keyword, \
ehr.get_candidates_by_fuzzy_matching) hold the allowed answer names.
- Use ehr.think to note your reasoning when useful.
- When the task links chest X-ray studies, their images and reports are attached to the task; the \
image.* tools (when offered) analyse an image given its dicom_id from <run_context>. A tool that \
reports itself unavailable cannot run here: go on with the other evidence.

Finish by calling ehr.finish with your answer as a list of strings, each copied exactly from the \
candidate answers. Do not answer in plain text: only ehr.finish counts."""

SYSTEM_BROWSER = """\
- The browser tools (browser.search, browser.open, browser.find) look up clinical reference \
knowledge: ICD codes with their CCS groups, phenotype definitions, lab tests with units and \
reference ranges, ICU items and the benchmark task definitions. They never show this patient's \
record; use them to interpret codes and values, not as evidence about the patient."""
"""Added to the system prompt (before the finish rule) when the run offers the browser tools (v3)."""

IMAGES_NOT_SHOWN = "[{count} image(s) available through the image.* tools: they are not attached because this model does not take images]"
IMAGES_NOT_SHOWN_NO_TOOLS = "[{count} linked image(s) not shown: this model does not take images]"
PICTURES_NOT_SHOWN = "[{count} picture(s) made by this tool not shown: this model does not take images]"

SYSTEM_CURATED = """\
You are a clinical expert. You answer one question about one patient from the evidence package \
in the message: the patient's record as it stood at the current time. Use only that evidence and \
general medical knowledge."""

ANSWER_FORMAT = """\
Answer format (strict): end your reply with exactly one block
<answer>
first item
second item
</answer>
with one answer per line, each copied exactly from the candidate answers, and nothing else inside \
the block (no bullets, numbering or explanations)."""

REMINDER = """\
You did not call a tool. Continue the investigation with the EHR tools, or call ehr.finish with \
your answer (a list of items copied exactly from the candidate answers). A plain-text answer is not \
recorded."""

FINISH_NOW = """\
Your budget is nearly used up. Call ehr.finish now with your best answer (a list of items copied \
exactly from the candidate answers)."""

INVALID_ANSWER = """\
These items are not in the candidate answers: {items}. Call ehr.finish again with items copied \
exactly from the candidate answers (this is your only chance to correct it)."""

_TASK_RULES = """\
Analyse the patient's records up to the current time only; do not assume events that are not in \
the record. Call ehr.load_ehr first. Submit your final answer by calling ehr.finish; the answer \
must be chosen only from the candidate answers below."""

def _patient_info(question: Question) -> str:
    lines = [f"Current Time: {question.prediction_time.isoformat(sep=' ')}", f"Patient Subject ID: {question.subject_id}"]
    return "<patient_info>\n" + "\n".join(lines) + "\n</patient_info>"


def _candidates_block(question: Question) -> str:
    return "<candidate_answers>\n" + json.dumps(list(question.candidates), ensure_ascii=False) + "\n</candidate_answers>"


def ehr_bench_task_prompt(question: Question) -> str:
    """The EHR-Bench agent prompt: instruction, rules, patient info (cutoff, subject), candidates."""
    instruction = question.instruction or f"Answer the task {question.task} for this patient."
    return "\n".join(
        [
            f"<task_instruction>\n{instruction}\n{_TASK_RULES}\n</task_instruction>",
            _patient_info(question),
            _candidates_block(question),
        ]
    )


def agentehr_task_prompt(question: Question) -> str:
    """The AgentEHR-Bench role template of the question's task (the registry's ``TaskSpec.role``; a task
    without one uses the first AgentEHR-Bench task's)."""
    from ..bench import AGENTEHR_TASKS, find_task

    spec = find_task(question.task, "agentehr-bench")
    role = spec.role if spec is not None and spec.role is not None else AGENTEHR_TASKS[0].role
    assert role is not None
    text = (
        f"You are {role.who}. Objective: from the patient's record up to the current time, predict {role.predicts}.\n"
        f"The allowed names are in the candidate table {question.task}_candidates; search it with the "
        "candidate tools. Submit through ehr.finish a list of several plausible official names, "
        "without codes or extra information."
    )
    parts = [f"<task_instruction>\n{text}\n</task_instruction>", _patient_info(question)]
    if question.candidates:
        parts.append(_candidates_block(question))
    return "\n".join(parts)


REPORT_MAX_CHARS = 4_000
"""Characters of one linked report inlined in the task turn (the reference's cap); longer ones are cut."""


@dataclass(frozen=True, slots=True)
class LinkedEvidence:
    """What a multimodal run attaches to the task turn besides the question (set by the runner).

    Attributes:
        images: ``(dicom_id, path)`` of each image attached to the turn (by reference), in order.
        reports: ``(study_id, text)`` of each visible linked report (empty when hidden).
        reports_hidden: the question hides the linked reports (CXR finding tasks).
        imaging_tools: the ``image.*`` tools are offered in this run.
    """

    images: tuple[tuple[str, str], ...] = ()
    reports: tuple[tuple[int, str], ...] = ()
    reports_hidden: bool = False
    imaging_tools: bool = False


def images_note(count: int, *, imaging_tools: bool) -> str:
    """The text that stands in for ``count`` images a model that does not take images is not sent (v3)."""
    template = IMAGES_NOT_SHOWN if imaging_tools else IMAGES_NOT_SHOWN_NO_TOOLS
    return template.format(count=count)


def agent_system_prompt(*, browser: bool = False) -> str:
    """The agent-mode system prompt: :data:`SYSTEM_AGENT`, plus :data:`SYSTEM_BROWSER` when the browser tools are offered."""
    if not browser:
        return SYSTEM_AGENT
    head, sep, finish = SYSTEM_AGENT.rpartition("\n\nFinish by calling")
    return f"{head}\n{SYSTEM_BROWSER}{sep}{finish}"


def _report_blocks(reports: Sequence[tuple[int, str]]) -> list[str]:
    out = []
    for study_id, text in reports:
        cut = text if len(text) <= REPORT_MAX_CHARS else text[:REPORT_MAX_CHARS] + "\n[report truncated]"
        out.append(f'<linked_radiology_report study_id="{study_id}">\n{cut.strip()}\n</linked_radiology_report>')
    return out


def multimodal_task_prompt(question: Question, linked: LinkedEvidence | None = None, *, vision: bool = True) -> str:
    """The multimodal agent prompt: a ``<run_context>`` preamble, the manifest's question, the linked reports.

    The preamble says what is attached (images, inlined reports, or that reports are withheld) and
    what is available (the EHR, the imaging tools and the image ids they accept). For a model that
    does not take images (``vision=False``) ``images_attached`` is 0 and a note says how many images
    the image tools can read instead.
    """
    linked = linked or LinkedEvidence()
    reports = "withheld for this question" if linked.reports_hidden else str(len(linked.reports))
    lines = [
        "<run_context>",
        f"images_attached: {len(linked.images) if vision else 0}",
        f"reports_inlined: {reports}",
        f"linked_study_ids: {', '.join(str(s) for s in question.study_ids) or 'none'}",
        "patient_ehr_available: yes",
        f"imaging_tools_available: {'yes' if linked.imaging_tools else 'no'}",
        f"current_time: {question.prediction_time.isoformat(sep=' ')}",
        f"subject_id: {question.subject_id}",
    ]
    if linked.images and not vision:
        lines.append(images_note(len(linked.images), imaging_tools=linked.imaging_tools))
    if linked.images and linked.imaging_tools:
        lines.append("Images (pass the dicom_id or the path to the image.* tools):")
        lines += [f"- {dicom_id}: {path}" for dicom_id, path in linked.images]
    lines += ["Call ehr.load_ehr first; submit the answer through ehr.finish (one item per list entry).", "</run_context>"]
    parts = ["\n".join(lines), question.question_text or question.instruction or "", *_report_blocks(linked.reports)]
    return "\n".join(p for p in parts if p)


def agent_messages_text(question: Question, linked: LinkedEvidence | None = None, *, vision: bool = True,
                        browser: bool = False, images_withheld: int = 0) -> tuple[str, str]:
    """(system, user) texts for ClinSeekAgent mode, chosen by ``question.benchmark``.

    Args:
        question: the question (its ``benchmark`` field picks the task prompt).
        linked: the multimodal run context (images, reports, imaging tools).
        vision: the model takes images; when ``False`` the multimodal ``<run_context>`` says how
            many images were not attached.
        browser: the browser tools are offered (adds :data:`SYSTEM_BROWSER` to the system prompt).
        images_withheld: images of a non-multimodal task turn not attached (a note says so).
    """
    system = agent_system_prompt(browser=browser)
    if question.benchmark == "clinseek-bench-mm":
        return system, multimodal_task_prompt(question, linked, vision=vision)
    user = agentehr_task_prompt(question) if question.benchmark == "agentehr-bench" else ehr_bench_task_prompt(question)
    if images_withheld:
        user += "\n" + images_note(images_withheld, imaging_tools=bool(linked and linked.imaging_tools))
    return system, user


def curated_user_prompt(question: Question, package: str, *, embeds_question: bool, note: str | None = None) -> str:
    """The Curated Input user turn: evidence package, the task, candidates, the strict answer format.

    Args:
        question: the question.
        package: the curated evidence, verbatim from the manifest or rendered from the sealed episode.
        embeds_question: True when ``package`` is the manifest's own rendered question that already
            holds the instruction, patient info and candidates (ClinSeek-Bench-Text ``question``);
            then only the answer format is added.
        note: a line placed right after the package (e.g. :func:`images_note` for images not shown).
    """
    head = package.rstrip() + (f"\n\n{note}" if note else "")
    if embeds_question:
        return head + "\n\n" + ANSWER_FORMAT
    parts = [head]
    if question.benchmark == "clinseek-bench-mm" and question.question_text:
        parts.append(question.question_text)
    else:
        instruction = question.instruction or f"Answer the task {question.task} for this patient."
        parts.append(f"<task_instruction>\n{instruction}\n</task_instruction>")
    parts.append(_patient_info(question))
    if question.candidates:
        parts.append(_candidates_block(question))
    parts.append(ANSWER_FORMAT)
    return "\n\n".join(parts)
