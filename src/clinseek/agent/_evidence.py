"""``baseline:evidence``: a deterministic evidence-seeking policy (rules in ``_baselines`` and docs/agent.md)."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping, Sequence
from functools import cache
from typing import Any

from ..bench import TEXT_TASKS, TaskSpec
from ..models import GenerateConfig, Message, ModelResponse
from ._baselines import (
    _PRESSORS,
    PromptFacts,
    _answer_block,
    _call,
    _response,
    rank_candidates,
    read_prompt,
    risk_points,
    risk_threshold,
)

_PIPE = re.compile(r"(?<!\\)\|")
_DATE = re.compile(r"\d{4}-\d\d-\d\d ")
_TIME_OF_DAY = re.compile(r"\d\d:\d\d(?::\d\d(?:\.\d+)?)?(?:[+-]\d\d:\d\d)?")
_SQL_TOOL = "ehr.run_sql_query"
_INVENTORY = re.compile(r"^- (?:\w+\.)?(\w+): (\d+)", re.M)
_DICT_ICU = "JOIN icu.d_items d ON e.itemid = d.itemid"
# table -> (FROM clause, name expression, time expression)
_HISTORY: dict[str, tuple[str, str, str]] = {
    "hosp.labevents": ("hosp.labevents e JOIN hosp.d_labitems d ON e.itemid = d.itemid", "d.label", "e.charttime"),
    "icu.chartevents": (f"icu.chartevents e {_DICT_ICU}", "d.label", "e.charttime"),
    "icu.datetimeevents": (f"icu.datetimeevents e {_DICT_ICU}", "d.label", "e.charttime"),
    "icu.outputevents": (f"icu.outputevents e {_DICT_ICU}", "d.label", "e.charttime"),
    "icu.inputevents": (f"icu.inputevents e {_DICT_ICU}", "d.label", "e.starttime"),
    "icu.ingredientevents": (f"icu.ingredientevents e {_DICT_ICU}", "d.label", "e.starttime"),
    "icu.procedureevents": (f"icu.procedureevents e {_DICT_ICU}", "d.label", "e.starttime"),
    "hosp.prescriptions": ("hosp.prescriptions e", "e.drug", "e.starttime"),
    "hosp.emar": ("hosp.emar e", "e.medication", "e.charttime"),
    "ed.medrecon": ("ed.medrecon e", "e.name", "e.charttime"),
    "ed.pyxis": ("ed.pyxis e", "e.name", "e.charttime"),
    "hosp.microbiologyevents": ("hosp.microbiologyevents e", "e.test_name",
                                "coalesce(e.charttime, CAST(e.chartdate AS TIMESTAMP))"),
    "hosp.omr": ("hosp.omr e", "e.result_name", "CAST(e.chartdate AS TIMESTAMP)"),
    "hosp.poe": ("hosp.poe e", "e.order_type", "e.ordertime"),
    "hosp.transfers": ("hosp.transfers e", "e.careunit", "e.intime"),
    "hosp.services": ("hosp.services e", "e.curr_service", "e.transfertime"),
    "hosp.diagnoses_icd": ("hosp.diagnoses_icd e JOIN hosp.d_icd_diagnoses d ON e.icd_code = d.icd_code "
                           "AND e.icd_version = d.icd_version", "d.long_title", "CAST(NULL AS TIMESTAMP)"),
    "hosp.procedures_icd": ("hosp.procedures_icd e JOIN hosp.d_icd_procedures d ON e.icd_code = d.icd_code "
                            "AND e.icd_version = d.icd_version", "d.long_title", "CAST(e.chartdate AS TIMESTAMP)"),
    "ed.diagnosis": ("ed.diagnosis e", "e.icd_title", "CAST(NULL AS TIMESTAMP)"),
    "note.radiology_detail": ("note.radiology_detail e", "e.field_value", "CAST(NULL AS TIMESTAMP)"),
}
_CODES = "CAST(c.icd_code AS VARCHAR) = e.icd_code AND CAST(c.icd_version AS VARCHAR) = CAST(e.icd_version AS VARCHAR)"
_AGENTEHR_HISTORY: dict[str, tuple[str, str, str]] = {
    "diagnoses_ccs_candidates": (f"hosp.diagnoses_icd e JOIN candidates.diagnoses_ccs_candidates c ON {_CODES}",
                                 "c.candidate", "CAST(NULL AS TIMESTAMP)"),
    "diagnoses_ccs_candidates+ed": (f"ed.diagnosis e JOIN candidates.diagnoses_ccs_candidates c ON {_CODES}",
                                    "c.candidate", "CAST(NULL AS TIMESTAMP)"),
    "procedures_ccs_candidates": (f"hosp.procedures_icd e JOIN candidates.procedures_ccs_candidates c ON {_CODES}",
                                  "c.candidate", "CAST(e.chartdate AS TIMESTAMP)"),
    "labevents_candidates": ("hosp.labevents e JOIN hosp.d_labitems d ON e.itemid = d.itemid "
                             "JOIN candidates.labevents_candidates c ON c.candidate = d.label", "c.candidate", "e.charttime"),
    "microbiologyevents_candidates": ("hosp.microbiologyevents e JOIN candidates.microbiologyevents_candidates c "
                                      "ON c.candidate = e.test_name", "c.candidate",
                                      "coalesce(e.charttime, CAST(e.chartdate AS TIMESTAMP))"),
    "prescriptions_candidates": ("hosp.prescriptions e JOIN candidates.prescriptions_candidates c ON c.candidate = e.drug",
                                 "c.candidate", "e.starttime"),
    "transfers_candidates": ("hosp.transfers e JOIN candidates.transfers_candidates c ON c.candidate = e.careunit",
                             "c.candidate", "e.intime"),
}
"""AgentEHR-Bench: the patient's history in the task's table, named through the episode's candidate table
(diagnoses also from the ED diagnoses of finished ED stays, the only codes visible during an admission)."""
_FEATURES = {
    "f_age": "SELECT anchor_age AS f_age FROM hosp.patients",
    "f_admissions": "SELECT count(*) AS f_admissions FROM hosp.admissions",
    "f_icu_stays": "SELECT count(*) AS f_icu_stays FROM icu.icustays",
    "f_abnormal": "SELECT count(*) AS f_abnormal FROM hosp.labevents WHERE flag = 'abnormal' "
                  "AND charttime >= TIMESTAMP '{t}' - INTERVAL 48 HOUR",
    "f_acuity": "SELECT min(acuity) AS f_acuity FROM ed.triage",
    "f_pressors": "SELECT count(*) AS f_pressors FROM hosp.prescriptions WHERE "
                  + " OR ".join(f"lower(drug) LIKE '%{p}%'" for p in _PRESSORS),
}
_FEATURE_NAMES = {"f_age": "age", "f_admissions": "admissions", "f_icu_stays": "icu_stays",
                  "f_abnormal": "abnormal_labs_48h", "f_acuity": "acuity", "f_pressors": "pressors"}


@cache
def _tasks_by_instruction() -> dict[str, TaskSpec]:
    return {t.instruction.strip(): t for t in TEXT_TASKS}


def task_for(facts: PromptFacts) -> TaskSpec | None:
    """The registry task whose instruction is the prompt's (exact text), else ``None``."""
    return _tasks_by_instruction().get(facts.instruction.strip())


def history_sql(table: str) -> str | None:
    """SQL of the patient's history in ``table``: cand_name, cand_n, cand_last, cand_latest.

    ``table`` is an EHR table (``hosp.labevents``) or an AgentEHR candidate table (``labevents_candidates``:
    the history named by that table's candidates).
    """
    found = _HISTORY.get(table) or _AGENTEHR_HISTORY.get(table)
    if found is None:
        return None
    source, name, time = found
    where = " WHERE e.field_name = 'exam_name'" if table == "note.radiology_detail" else ""
    return (
        f"WITH h AS (SELECT {name} AS nm, {time} AS t FROM {source}{where}), latest AS (SELECT max(t) AS mt FROM h) "
        "SELECT nm AS cand_name, count(*) AS cand_n, max(t) AS cand_last, "
        "max(CASE WHEN t = (SELECT mt FROM latest) THEN 1 ELSE 0 END) AS cand_latest "
        "FROM h WHERE nm IS NOT NULL GROUP BY nm ORDER BY cand_n DESC, cand_name LIMIT 200"
    )


_LISTED_SAME = "same in all rows shown: "
_LISTED_NULL = "NULL in all rows shown: "


def parse_table(content: str) -> list[dict[str, str]]:
    """Rows of a rendered ``ehr.run_sql_query`` result as ``{column: text}`` (NULL is ``""``); ``[]`` for no rows.

    The result's lines: an optional ``Note: ...`` (the query was read as SQLite), optional lines listing
    columns that are the same (``same in all rows shown: a=1, b=x``) or NULL in every row, the ``col|col``
    header, one ``value|value`` line per row, and a closing ``[TRUNCATED ...]`` notice when rows were cut.
    Every row gets the listed columns back, and a time shown as its time of day only (same date as the row
    above) gets its date back.
    """
    lines = content.splitlines()
    if lines and lines[0].startswith("Note: "):
        lines = lines[1:]
    listed: dict[str, str] = {}
    while lines and lines[0].startswith((_LISTED_SAME, _LISTED_NULL)):
        line = lines.pop(0)
        if line.startswith(_LISTED_SAME):
            for item in line.removeprefix(_LISTED_SAME).split(", "):
                name, _, value = item.partition("=")
                listed[name] = value
        else:
            listed.update(dict.fromkeys(line.removeprefix(_LISTED_NULL).split(", "), ""))
    if len(lines) < 2 or lines[0] == "No rows.":
        return []
    header = [c.replace("\\|", "|") for c in _PIPE.split(lines[0])]
    rows: list[dict[str, str]] = []
    for line in lines[1:]:
        if line.startswith(("[TRUNCATED", "(")):
            break
        cells = [c.replace("\\|", "|") for c in _PIPE.split(line)]
        row = dict(zip(header, cells, strict=False))
        if rows:  # a time on the same date as the row above is shown as its time of day only
            above = rows[-1]
            for name, cell in row.items():
                if _TIME_OF_DAY.fullmatch(cell) and _DATE.match(above.get(name, "")):
                    row[name] = above[name][:11] + cell
        rows.append({**listed, **row})
    return rows


def _number(text: str | None) -> float | None:
    try:
        return float(text) if text not in (None, "") else None
    except ValueError:
        return None


def _weights(rows: list[dict[str, str]], cutoff: dt.datetime | None) -> tuple[list[tuple[str, float]], int]:
    history: list[tuple[str, float]] = []
    latest = 0
    for row in rows:
        n = _number(row.get("cand_n")) or 0.0
        last = row.get("cand_last")
        recency = 0.5
        if last and cutoff:
            days = max((cutoff - dt.datetime.fromisoformat(last)).total_seconds() / 86400, 0.0)
            recency = 1.0 / (1.0 + days / 7.0)
        history.append((row.get("cand_name", ""), n * recency))
        latest += row.get("cand_latest") == "1"
    return history, latest


class EvidenceBaseline:
    """``baseline:evidence``: load the record, query history or risk features, decide by documented rules."""

    supports_native_tools = True
    supports_vision = True
    priced = True
    """An offline baseline costs nothing: its cost is a known $0."""
    """Images are accepted (and ignored): the rules read only the text."""

    def __init__(self) -> None:
        self.name = "baseline:evidence"

    async def generate(self, messages: Sequence[Message], tools: Sequence[Mapping[str, Any]] = (),
                       config: GenerateConfig | None = None) -> ModelResponse:
        """The next step, derived from the conversation so far (stateless)."""
        facts = read_prompt(messages)
        if not tools:
            return _response(self.name, Message(role="assistant", content=_answer_block(self._curated(messages, facts))))
        turn = sum(m.role == "assistant" for m in messages) + 1
        if turn == 1:
            args: dict[str, Any] = {"subject_id": facts.subject_id} if facts.subject_id is not None else {}
            if facts.prediction_time is not None:
                args["timestamp"] = facts.prediction_time.isoformat(sep=" ")
            calls = [_call(turn, 0, "ehr.load_ehr", args)]
        elif turn == 2:
            calls = [_call(turn, i, "ehr.run_sql_query", {"sql_query": q}) for i, q in enumerate(self._queries(facts))]
        else:
            calls = []
        if not calls:
            calls = [_call(turn, 0, "ehr.finish", {"response": self._decide(messages, facts)})]
        return _response(self.name, Message(role="assistant", tool_calls=calls))

    def _queries(self, facts: PromptFacts) -> list[str]:
        if facts.is_yes_no:
            t = (facts.prediction_time or dt.datetime(2200, 1, 1)).isoformat(sep=" ")
            return [q.format(t=t) for q in _FEATURES.values()]
        if facts.candidate_table and not facts.candidates:
            keys = [k for k in _AGENTEHR_HISTORY if k.split("+")[0] == facts.candidate_table]
            return [sql for k in keys if (sql := history_sql(k))]
        spec = task_for(facts)
        sql = history_sql(spec.tables[0]) if spec else None
        return [sql] if sql else []

    def _decide(self, messages: Sequence[Message], facts: PromptFacts) -> list[str]:
        outputs = [m.content for m in messages if m.role == "tool" and not m.is_error]
        tables = [m.content for m in messages if m.role == "tool" and not m.is_error and m.name == _SQL_TOOL]
        spec = task_for(facts)
        if facts.is_yes_no:
            features: dict[str, float | None] = {}
            for content in tables:
                for row in parse_table(content)[:1]:
                    for col, value in row.items():
                        if col in _FEATURE_NAMES:
                            features[_FEATURE_NAMES[col]] = _number(value)
            yes = risk_points(features) >= risk_threshold(spec.category if spec else None)
            return ["yes" if yes else "no"]
        if spec is not None and spec.name == "next_event":
            counts = [(name, float(n)) for content in outputs for name, n in _INVENTORY.findall(content)]
            return rank_candidates(counts, facts.candidates, 3)
        rows = [row for content in tables for row in parse_table(content) if "cand_name" in row]
        history, latest = _weights(rows, facts.prediction_time)
        # AgentEHR-Bench: the history is already named by the candidate table, in the query's order
        candidates = facts.candidates or tuple(dict.fromkeys(name for name, _ in history if name))
        k = min(max(latest, 1), 20) if latest else min(5, len(candidates))
        return rank_candidates(history, candidates, k)

    def _curated(self, messages: Sequence[Message], facts: PromptFacts) -> list[str]:
        text = next((m.content for m in messages if m.role == "user"), "")
        lower = text.lower()
        if facts.is_yes_no:
            age = re.search(r"\b(?:anchor_age|age)\W+(\d{1,3})\b", lower)
            acuity = re.search(r"\bacuity\W+(\d)\b", lower)
            features = {
                "age": float(age.group(1)) if age else None,
                "abnormal_labs_48h": float(lower.count("abnormal")),
                "icu_stays": float("icu" in lower),
                "acuity": float(acuity.group(1)) if acuity else None,
                "pressors": float(any(p in lower for p in _PRESSORS)),
            }
            spec = task_for(facts)
            return ["yes" if risk_points(features) >= risk_threshold(spec.category if spec else None) else "no"]
        history = [(c, float(lower.count(c.lower()))) for c in facts.candidates if c and c.lower() in lower]
        return rank_candidates(history, facts.candidates, min(10, len(history)))

    async def aclose(self) -> None:
        """Nothing to release."""
