"""EHRSQL 2024 conformance: the organisers' view of the MIMIC-IV demo rebuilt over a clinseek store.

EHRSQL 2024 (``../shared/data/samples/ehrsql-2024-mimic-iv-demo/``) asks questions of the MIMIC-IV
demo *after the organisers' preprocessing* (``glee4810/ehrsql-2024``, ``preprocess/``): 17 tables
with their own columns, every string lower-cased and stripped, ICD codes written ``icd9|4019``, and
each patient's times shifted by whole 365-day steps so that their first admission falls in 2100;
anything after "now" (2100-12-31 23:59:00) is dropped (event rows) or NULL (discharge and out
times). This module rebuilds that view as one ``WITH`` prefix of DuckDB SQL over clinseek's own
tables (:func:`view_prefix`): prefixed to a gold query, the prefix's CTEs take the EHRSQL table
names, so the gold SQL runs as written inside a sealed episode through ``ehr.run_sql_query``.

What the rebuild can and cannot reproduce is documented in ``docs/sql.md``; in short:

- ``chartevents`` is absent from the open demo (the file is not carried), so its questions are
  listed as *data absent*; ``cost`` is the organisers' random numbers (numpy draws) and is not
  rebuilt (no single-patient question reads it).
- Two steps depend on the source files' row order ("keep the first"): the de-duplication of
  ``d_icd_diagnoses`` by title and the most frequent dose unit per drug. The store does not keep
  file order, so :class:`Recreation` reads it from the demo's CSV files.
- The organisers also dropped labels shared between ``d_labitems``, ``d_items`` and
  ``prescriptions.drug`` using a list derived from full MIMIC-IV frequencies; it cannot be derived
  from the demo and is not applied. Questions it changes are found by running the gold SQL in
  SQLite itself on the rebuilt tables (:meth:`Recreation.classify`) and listed as *re-creation
  differs*.

The reference for "what SQLite returns on this view" is SQLite (the standard library's ``sqlite3``)
over the same rows (:meth:`Recreation.sqlite_answer`): a question is *reproducible* when SQLite
over the patient's own rows returns the gold answer, and *cross-patient* when its answer depends on
other patients' rows (SQLite over every patient returns the gold answer, over the patient's own rows
it does not) or when it names no patient.
"""

from __future__ import annotations

import datetime as dt
import json
import random
import re
import sqlite3
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

import duckdb

NOW = "2100-12-31 23:59:00"
"""The organisers' "current time" (their scorer writes it for ``current_time`` in the gold SQL)."""
START = "2100-01-01 00:00:00"
"""Event rows shifted before this are dropped by the organisers' preprocessing."""
_CLIP = f"CAST('{NOW}' AS TIMESTAMP)"
_EXCLUDED_DX_TITLES = (
    "artificial insemination",
    "dental examination",
    "insertion of intrauterine contraceptive device",
)
"""Diagnosis titles the organisers drop (they are also procedure titles)."""
_VITAL_RANGES = {
    "temperature": (35.5, 38.1),
    "sao2": (95.0, 100.0),
    "heart rate": (60.0, 100.0),
    "respiration": (12.0, 18.0),
    "systolic bp": (90.0, 120.0),
    "diastolic bp": (60.0, 90.0),
    "mean bp": (60.0, 110.0),
}
"""Normal ranges the organisers' scorer writes for ``<vital>_lower``/``<vital>_upper`` placeholders."""

SCHEMA: dict[str, tuple[tuple[str, str], ...]] = {
    # the organisers' DDL (data/mimic_iv/mimic_iv.sql): column -> SQLite declared type (its affinity)
    "patients": (("row_id", "INT"), ("subject_id", "INT"), ("gender", "VARCHAR"), ("dob", "TIMESTAMP"), ("dod", "TIMESTAMP")),
    "admissions": (
        ("row_id", "INT"), ("subject_id", "INT"), ("hadm_id", "INT"), ("admittime", "TIMESTAMP"),
        ("dischtime", "TIMESTAMP"), ("admission_type", "VARCHAR"), ("admission_location", "VARCHAR"),
        ("discharge_location", "VARCHAR"), ("insurance", "VARCHAR"), ("language", "VARCHAR"),
        ("marital_status", "VARCHAR"), ("age", "INT"),
    ),
    "d_icd_diagnoses": (("row_id", "INT"), ("icd_code", "VARCHAR"), ("long_title", "VARCHAR")),
    "d_icd_procedures": (("row_id", "INT"), ("icd_code", "VARCHAR"), ("long_title", "VARCHAR")),
    "d_labitems": (("row_id", "INT"), ("itemid", "INT"), ("label", "VARCHAR")),
    "d_items": (("row_id", "INT"), ("itemid", "INT"), ("label", "VARCHAR"), ("abbreviation", "VARCHAR"), ("linksto", "VARCHAR")),
    "diagnoses_icd": (("row_id", "INT"), ("subject_id", "INT"), ("hadm_id", "INT"), ("icd_code", "VARCHAR"), ("charttime", "TIMESTAMP")),
    "procedures_icd": (("row_id", "INT"), ("subject_id", "INT"), ("hadm_id", "INT"), ("icd_code", "VARCHAR"), ("charttime", "TIMESTAMP")),
    "labevents": (
        ("row_id", "INT"), ("subject_id", "INT"), ("hadm_id", "INT"), ("itemid", "INT"), ("charttime", "TIMESTAMP"),
        ("valuenum", "DOUBLE PRECISION"), ("valueuom", "VARCHAR"),
    ),
    "prescriptions": (
        ("row_id", "INT"), ("subject_id", "INT"), ("hadm_id", "INT"), ("starttime", "TIMESTAMP"), ("stoptime", "TIMESTAMP"),
        ("drug", "VARCHAR"), ("dose_val_rx", "VARCHAR"), ("dose_unit_rx", "VARCHAR"), ("route", "VARCHAR"),
    ),
    "inputevents": (
        ("row_id", "INT"), ("subject_id", "INT"), ("hadm_id", "INT"), ("stay_id", "INT"), ("starttime", "TIMESTAMP"),
        ("itemid", "INT"), ("totalamount", "DOUBLE PRECISION"), ("totalamountuom", "VARCHAR"),
    ),
    "outputevents": (
        ("row_id", "INT"), ("subject_id", "INT"), ("hadm_id", "INT"), ("stay_id", "INT"), ("charttime", "TIMESTAMP"),
        ("itemid", "INT"), ("value", "DOUBLE PRECISION"), ("valueuom", "VARCHAR"),
    ),
    "microbiologyevents": (
        ("row_id", "INT"), ("subject_id", "INT"), ("hadm_id", "INT"), ("charttime", "TIMESTAMP"),
        ("spec_type_desc", "VARCHAR"), ("test_name", "VARCHAR"), ("org_name", "VARCHAR"),
    ),
    "icustays": (
        ("row_id", "INT"), ("subject_id", "INT"), ("hadm_id", "INT"), ("stay_id", "INT"), ("first_careunit", "VARCHAR"),
        ("last_careunit", "VARCHAR"), ("intime", "TIMESTAMP"), ("outtime", "TIMESTAMP"),
    ),
    "transfers": (
        ("row_id", "INT"), ("subject_id", "INT"), ("hadm_id", "INT"), ("transfer_id", "INT"), ("eventtype", "VARCHAR"),
        ("careunit", "VARCHAR"), ("intime", "TIMESTAMP"), ("outtime", "TIMESTAMP"),
    ),
}  # fmt: skip
"""The 15 EHRSQL tables the rebuild provides (``chartevents`` and ``cost`` are not rebuilt)."""
ABSENT = {
    "chartevents": "data absent: icu/chartevents.csv.gz is not in the open demo copy",
    "cost": "not rebuilt: random numbers drawn by the organisers",
}
"""EHRSQL tables the rebuild does not provide, with the reason quoted for their questions."""
DICTIONARIES = frozenset({"d_icd_diagnoses", "d_icd_procedures", "d_labitems", "d_items"})
_TABLE_WORD = re.compile(r"\b(" + "|".join([*SCHEMA, *ABSENT]) + r")\b")


@dataclass(frozen=True)
class Item:
    """One EHRSQL question: gold SQL after the organisers' scorer normalisation, gold answer rows."""

    id: str
    split: str
    question: str
    sql: str | None
    answer: str | None
    """The gold answer as the organisers store it: the scorer's text of the sorted rows."""

    @property
    def subjects(self) -> set[int]:
        """The patient ids the gold SQL names (``subject_id = N``)."""
        return {int(s) for s in re.findall(r"subject_id\s*=\s*(\d+)", self.sql or "")}

    @property
    def tables(self) -> set[str]:
        """EHRSQL table names the gold SQL mentions."""
        return set(_TABLE_WORD.findall(self.sql or ""))


def post_process(sql: str) -> str:
    """The organisers' scorer normalisation of a gold query (``scoring_program/postprocessing.py``):
    whitespace folded, ``current_time`` -> ``'2100-12-31 23:59:00'``, vital-range placeholders -> numbers,
    ``%y`` -> ``%Y`` and ``%j`` -> ``%J``."""
    sql = re.sub(" +", " ", sql.replace("\n", " ")).strip()
    sql = sql.replace("> =", ">=").replace("< =", "<=").replace("! =", "!=")
    sql = sql.replace("current_time", f"'{NOW}'")
    lower = re.findall(r"[ \n]+([a-zA-Z0-9_]+_lower)", sql)
    upper = re.findall(r"[ \n]+([a-zA-Z0-9_]+_upper)", sql)
    if lower and upper:
        names = {lower[0].removesuffix("_lower"), upper[0].removesuffix("_upper")}
        if len(names) == 1 and (name := names.pop().replace("_", " ")) in _VITAL_RANGES:
            lo, hi = _VITAL_RANGES[name]
            sql = sql.replace(lower[0], str(lo)).replace(upper[0], str(hi))
    return sql.replace("%y", "%Y").replace("%j", "%J")


def load_split(data: Path, split: str) -> list[Item]:
    """The questions of one split (``train``/``valid``) with gold SQL (``None`` = abstain) and answers."""
    folder = data / split
    questions = json.loads((folder / "data.json").read_text())["data"]
    labels = json.loads((folder / "label.json").read_text())
    answers = json.loads((folder / "answer.json").read_text())
    out = []
    for q in questions:
        sql = labels[q["id"]]
        answer = answers[q["id"]]
        out.append(
            Item(
                q["id"], split, q["question"], None if sql == "null" else post_process(sql),
                None if answer == "null" else answer,
            )
        )  # fmt: skip
    return out


def process_answer(rows: Iterable[Sequence[Any]]) -> str:
    """Rows as the organisers' scorer compares them: floats rounded to 3 decimals, every value a string,
    rows sorted, at most 100, the whole written as Python text. DuckDB's booleans count as SQLite's
    1/0 and its timestamps as their text."""
    return str(sorted([[_value(v) for v in row] for row in rows])[:100])


def _value(v: Any) -> str:
    if isinstance(v, bool):
        v = int(v)
    elif isinstance(v, Decimal):
        v = float(v)
    if isinstance(v, float):
        v = round(v, 3)
    return str(v)


def dob_day_offset() -> int:
    """Days after 1 January of the birth year the organisers give every ``dob`` (Python ``random`` seeded 0,
    ``randint(0, days in year)``: the same for 365- and 366-day years)."""
    offsets = set()
    for days in (365, 366):
        random.seed(0)
        offsets.add(random.randint(0, days))
    assert len(offsets) == 1
    return offsets.pop()


def _values(name: str, columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    rows = list(rows)
    if not rows:
        nulls = ", ".join(f"CAST(NULL AS VARCHAR) AS {c}" for c in columns)
        return f"{name} AS (SELECT {nulls} WHERE 1 = 0)"
    body = ", ".join("(" + ", ".join(_literal(v) for v in row) + ")" for row in rows)
    return f"{name}({', '.join(columns)}) AS (VALUES {body})"


def _literal(v: Any) -> str:
    return "'" + str(v).replace("'", "''") + "'"


def _low(col: str) -> str:
    return f"lower(trim({col}))"


def _sh(col: str) -> str:
    """``col`` moved by the patient's shift (``s.step``), NULL when that is after "now"."""
    return f"CASE WHEN {col} + s.step <= {_CLIP} THEN {col} + s.step END"


def _event(col: str) -> str:
    """The condition under which an event row with raw time ``col`` survives the shift."""
    return f"{col} + s.step BETWEEN CAST('{START}' AS TIMESTAMP) AND {_CLIP}"


def _icd(alias: str) -> str:
    return f"'icd' || CAST({alias}.icd_version AS VARCHAR) || '|' || {_low(alias + '.icd_code')}"


_ROW_ID = "CAST(NULL AS INTEGER) AS row_id"
_SHIFTED = "JOIN _shift s ON s.subject_id = {a}.subject_id"
_ADMITTED = "{a}.hadm_id IN (SELECT hadm_id FROM admissions)"


def view_ctes(
    dx_kept: Iterable[str],
    drug_units: Iterable[tuple[str, str]],
    label_tables: Mapping[str, str] | None = None,
) -> dict[str, tuple[str, tuple[str, ...]]]:
    """The CTEs of the 15 rebuilt EHRSQL tables over a clinseek store's tables (one patient in an
    episode, every patient on the store): name -> (``name AS (...)``, names of the CTEs it reads).

    Args:
        dx_kept: for each diagnosis title shared by several codes that the patient(s) have, the code
            the organisers kept (the first in ``d_icd_diagnoses.csv``), written ``icd9|4019``.
        drug_units: (drug, unit) pairs, lower-case: the most frequent dose unit of each drug the
            patient(s) were prescribed, over the whole demo (ties: first in ``prescriptions.csv``).
        label_tables: the organisers' label disambiguation (label -> the one of ``labevents``,
            ``inputevents``, ``prescriptions`` that keeps it; the label is dropped from the other
            two), when the caller has it; it is not derivable from the demo (module doc).
    """
    dob = dob_day_offset()
    excluded = ", ".join(_literal(t) for t in _EXCLUDED_DX_TITLES)
    dropped = {
        owner: ", ".join(
            _literal(label) for label, keep in sorted((label_tables or {}).items()) if keep != owner
        )
        or "''"  # NOT IN (NULL) would drop every row; an empty label never survives the CSV reader
        for owner in ("labevents", "inputevents", "prescriptions")
    }

    def shifted(a: str) -> str:
        return _SHIFTED.format(a=a)

    def admitted(a: str) -> str:
        return _ADMITTED.format(a=a)

    ctes: dict[str, tuple[str, tuple[str, ...]]] = {
        "_dx_kept": (_values("_dx_kept", ["icd_code"], [[c] for c in sorted(set(dx_kept))]), ()),
        "_drug_unit": (_values("_drug_unit", ["drug", "unit"], sorted(set(drug_units))), ()),
        "_shift": (
            "_shift AS (SELECT subject_id, to_days(CAST((2100 - year(min(admittime))) * 365 AS INTEGER)) AS step "
            "FROM hosp.admissions GROUP BY subject_id)",
            (),
        ),
        "patients": (
            f"patients AS (SELECT {_ROW_ID}, p.subject_id, {_low('p.gender')} AS gender, "
            f"{_sh(f'CAST(make_date(p.anchor_year - p.anchor_age, 1, 1) AS TIMESTAMP) + to_days({dob})')} AS dob, "
            f"{_sh('CAST(p.dod AS TIMESTAMP)')} AS dod FROM hosp.patients p {shifted('p')})",
            ("_shift",),
        ),
        "admissions": (
            f"admissions AS (SELECT {_ROW_ID}, a.subject_id, a.hadm_id, {_sh('a.admittime')} AS admittime, "
            f"{_sh('a.dischtime')} AS dischtime, {_low('a.admission_type')} AS admission_type, "
            f"{_low('a.admission_location')} AS admission_location, "
            f"CASE WHEN {_sh('a.dischtime')} IS NOT NULL THEN {_low('a.discharge_location')} END AS discharge_location, "
            f"{_low('a.insurance')} AS insurance, {_low('a.language')} AS language, "
            f"{_low('a.marital_status')} AS marital_status, year(a.admittime) - p.anchor_year + p.anchor_age AS age "
            f"FROM hosp.admissions a {shifted('a')} JOIN hosp.patients p ON p.subject_id = a.subject_id "
            f"WHERE a.admittime + s.step <= {_CLIP})",
            ("_shift",),
        ),
        "icustays": (
            f"icustays AS (SELECT {_ROW_ID}, i.subject_id, i.hadm_id, i.stay_id, "
            f"{_low('i.first_careunit')} AS first_careunit, {_low('i.last_careunit')} AS last_careunit, "
            f"{_sh('i.intime')} AS intime, {_sh('i.outtime')} AS outtime FROM icu.icustays i {shifted('i')} "
            f"WHERE i.intime + s.step <= {_CLIP} AND {admitted('i')})",
            ("_shift", "admissions"),
        ),
        "transfers": (
            f"transfers AS (SELECT {_ROW_ID}, t.subject_id, t.hadm_id, t.transfer_id, "
            f"{_low('t.eventtype')} AS eventtype, {_low('t.careunit')} AS careunit, "
            f"{_sh('t.intime')} AS intime, {_sh('t.outtime')} AS outtime FROM hosp.transfers t {shifted('t')} "
            f"WHERE t.intime + s.step <= {_CLIP} AND {admitted('t')})",
            ("_shift", "admissions"),
        ),
        "d_icd_diagnoses": (
            f"d_icd_diagnoses AS (SELECT {_ROW_ID}, icd_code, long_title FROM (SELECT {_icd('d')} AS icd_code, "
            f"{_low('d.long_title')} AS long_title, row_number() OVER (PARTITION BY {_low('d.long_title')} "
            f"ORDER BY CASE WHEN {_icd('d')} IN (SELECT icd_code FROM _dx_kept) THEN 0 ELSE 1 END, {_icd('d')}) AS n "
            f"FROM hosp.d_icd_diagnoses d WHERE d.long_title IS NOT NULL AND {_low('d.long_title')} "
            f"NOT IN ({excluded})) x WHERE x.n = 1)",
            ("_dx_kept",),
        ),
        "d_icd_procedures": (
            f"d_icd_procedures AS (SELECT {_ROW_ID}, icd_code, long_title FROM (SELECT {_icd('d')} AS icd_code, "
            f"{_low('d.long_title')} AS long_title, row_number() OVER (PARTITION BY {_low('d.long_title')} "
            f"ORDER BY {_icd('d')}) AS n FROM hosp.d_icd_procedures d WHERE d.long_title IS NOT NULL) x WHERE x.n = 1)",
            (),
        ),
        "d_labitems": (
            f"d_labitems AS (SELECT {_ROW_ID}, d.itemid, {_low('d.label')} AS label FROM hosp.d_labitems d "
            f"WHERE d.label IS NOT NULL AND {_low('d.label')} NOT IN ({dropped['labevents']}))",
            (),
        ),
        "d_items": (
            f"d_items AS (SELECT {_ROW_ID}, d.itemid, {_low('d.label')} AS label, "
            f"{_low('d.abbreviation')} AS abbreviation, {_low('d.linksto')} AS linksto FROM icu.d_items d "
            f"WHERE d.label IS NOT NULL AND {_low('d.linksto')} IN ('inputevents', 'outputevents', 'chartevents') "
            f"AND {_low('d.label')} NOT IN ({dropped['inputevents']}))",
            (),
        ),
        "diagnoses_icd": (
            f"diagnoses_icd AS (SELECT {_ROW_ID}, d.subject_id, d.hadm_id, {_icd('d')} AS icd_code, "
            f"a.admittime + s.step AS charttime FROM hosp.diagnoses_icd d "
            f"JOIN hosp.admissions a ON a.hadm_id = d.hadm_id {shifted('d')} WHERE {admitted('d')} "
            f"AND {_icd('d')} IN (SELECT icd_code FROM d_icd_diagnoses) AND {_event('a.admittime')})",
            ("_shift", "admissions", "d_icd_diagnoses"),
        ),
        "procedures_icd": (
            f"procedures_icd AS (SELECT {_ROW_ID}, subject_id, hadm_id, icd_code, t + step AS charttime FROM "
            f"(SELECT d.subject_id, d.hadm_id, {_icd('d')} AS icd_code, s.step, CASE WHEN CAST(d.chartdate AS TIMESTAMP) "
            "< a.admittime OR CAST(d.chartdate AS TIMESTAMP) > a.dischtime THEN a.dischtime "
            "ELSE CAST(d.chartdate AS TIMESTAMP) END AS t FROM hosp.procedures_icd d "
            f"JOIN hosp.admissions a ON a.hadm_id = d.hadm_id {shifted('d')} WHERE {admitted('d')}) s "
            f"WHERE icd_code IN (SELECT icd_code FROM d_icd_procedures) AND {_event('t')})",
            ("_shift", "admissions", "d_icd_procedures"),
        ),
        "labevents": (
            f"labevents AS (SELECT {_ROW_ID}, l.subject_id, l.hadm_id, l.itemid, l.charttime + s.step AS charttime, "
            f"l.valuenum, {_low('l.valueuom')} AS valueuom FROM hosp.labevents l {shifted('l')} "
            "WHERE l.valuenum IS NOT NULL AND l.valueuom IS NOT NULL AND l.itemid IN (SELECT itemid FROM d_labitems) "
            f"AND {admitted('l')} AND {_event('l.charttime')})",
            ("_shift", "admissions", "d_labitems"),
        ),
        "prescriptions": (
            f"prescriptions AS (SELECT {_ROW_ID}, r.subject_id, r.hadm_id, r.starttime + s.step AS starttime, "
            f"{_sh('r.stoptime')} AS stoptime, {_low('r.drug')} AS drug, "
            "CAST(replace(r.dose_val_rx, ',', '') AS DOUBLE) AS dose_val_rx, "
            f"{_low('r.dose_unit_rx')} AS dose_unit_rx, {_low('r.route')} AS route FROM hosp.prescriptions r "
            f"{shifted('r')} WHERE r.stoptime IS NOT NULL AND r.route IS NOT NULL "
            "AND regexp_full_match(replace(r.dose_val_rx, ',', ''), '[0-9]+') "
            f"AND {_low('r.drug')} NOT IN ({dropped['prescriptions']}) "
            f"AND ({_low('r.drug')}, {_low('r.dose_unit_rx')}) IN (SELECT drug, unit FROM _drug_unit) "
            f"AND {admitted('r')} AND {_event('r.starttime')})",
            ("_shift", "admissions", "_drug_unit"),
        ),
        "inputevents": (
            f"inputevents AS (SELECT {_ROW_ID}, e.subject_id, e.hadm_id, e.stay_id, e.starttime + s.step AS starttime, "
            f"e.itemid, e.totalamount, {_low('e.totalamountuom')} AS totalamountuom FROM icu.inputevents e "
            f"{shifted('e')} WHERE e.stay_id IS NOT NULL AND e.totalamount IS NOT NULL "
            f"AND {_low('e.totalamountuom')} = 'ml' AND e.itemid IN (SELECT itemid FROM d_items) "
            f"AND {admitted('e')} AND {_event('e.starttime')})",
            ("_shift", "admissions", "d_items"),
        ),
        "outputevents": (
            f"outputevents AS (SELECT {_ROW_ID}, e.subject_id, e.hadm_id, e.stay_id, e.charttime + s.step AS charttime, "
            f"e.itemid, e.value, {_low('e.valueuom')} AS valueuom FROM icu.outputevents e {shifted('e')} "
            f"WHERE e.stay_id IS NOT NULL AND e.value IS NOT NULL AND {_low('e.valueuom')} = 'ml' "
            f"AND e.itemid IN (SELECT itemid FROM d_items) AND {admitted('e')} AND {_event('e.charttime')})",
            ("_shift", "admissions", "d_items"),
        ),
        "microbiologyevents": (
            f"microbiologyevents AS (SELECT {_ROW_ID}, m.subject_id, m.hadm_id, "
            "coalesce(m.charttime, CAST(m.chartdate AS TIMESTAMP)) + s.step AS charttime, "
            f"{_low('m.spec_type_desc')} AS spec_type_desc, {_low('m.test_name')} AS test_name, "
            f"{_low('m.org_name')} AS org_name FROM hosp.microbiologyevents m {shifted('m')} "
            f"WHERE {admitted('m')} AND {_event('coalesce(m.charttime, CAST(m.chartdate AS TIMESTAMP))')})",
            ("_shift", "admissions"),
        ),
    }
    return ctes


def view_prefix(ctes: Mapping[str, tuple[str, tuple[str, ...]]], tables: Iterable[str]) -> str:
    """``WITH <the CTEs tables read, dependencies first> `` (the text to put before a query)."""
    order: list[str] = []

    def add(name: str) -> None:
        if name in order or name not in ctes:
            return
        for dep in ctes[name][1]:
            add(dep)
        order.append(name)

    for t in sorted(tables):
        add(t)
    return ("WITH " + ", ".join(ctes[n][0] for n in order) + " ") if order else ""


@dataclass
class Outcome:
    """How one question fared: its class and, when run, the answer and the error text."""

    item: Item
    kind: str
    """``reproducible``, ``cross_patient``, ``data_absent``, ``recreation_differs``, ``abstain``
    (or ``not_loaded`` when the reference holds only some patients)."""
    reason: str = ""
    subject_id: int | None = None
    answer: str | None = None
    error: str | None = None
    rewritten: bool = False
    extra: dict[str, Any] = field(default_factory=dict)


class Recreation:
    """The rebuilt EHRSQL view of one store, its SQLite reference copy and per-patient parameters.

    Args:
        store: a clinseek store ingested from the MIMIC-IV demo.
        demo_csv: the demo's folder (``mimic-iv-demo-2.2``): the file order of
            ``hosp/d_icd_diagnoses.csv.gz`` and ``hosp/prescriptions.csv.gz`` (see the module doc).
    """

    def __init__(
        self,
        store: Path,
        demo_csv: Path,
        label_tables: Mapping[str, str] | None = None,
        subjects: Iterable[int] | None = None,
    ) -> None:
        self.store = store
        self.label_tables = dict(label_tables or {})
        self.subjects = None if subjects is None else sorted(set(subjects))
        """The patients the SQLite reference holds (``None``: all; a test restricts it to stay fast)."""
        con = duckdb.connect(str(store), read_only=True)
        try:
            self._dx_first = self._dx_first_codes(con, demo_csv / "hosp" / "d_icd_diagnoses.csv.gz")
            self._units = self._drug_units(con, demo_csv / "hosp" / "prescriptions.csv.gz")
            self._patient_dx = self._codes_by_patient(con)
            self._patient_drugs = self._drugs_by_patient(con)
            self.prediction_times = dict(
                con.execute(
                    "SELECT subject_id, max(t) + INTERVAL 1 DAY FROM (SELECT subject_id, "
                    "unnest([admittime, dischtime, deathtime, edouttime]) AS t FROM hosp.admissions "
                    "UNION ALL SELECT subject_id, CAST(dod AS TIMESTAMP) FROM hosp.patients "
                    "UNION ALL SELECT subject_id, unnest([intime, outtime]) FROM hosp.transfers "
                    "UNION ALL SELECT subject_id, unnest([charttime, storetime]) FROM hosp.labevents "
                    "UNION ALL SELECT subject_id, unnest([starttime, stoptime]) FROM hosp.prescriptions "
                    "UNION ALL SELECT subject_id, coalesce(storetime, CAST(storedate AS TIMESTAMP) "
                    "+ INTERVAL 1 DAY) FROM hosp.microbiologyevents "
                    "UNION ALL SELECT subject_id, unnest([starttime, endtime, storetime]) FROM icu.inputevents "
                    "UNION ALL SELECT subject_id, unnest([charttime, storetime]) FROM icu.outputevents "
                    "UNION ALL SELECT subject_id, unnest([intime, outtime]) FROM icu.icustays) "
                    "GROUP BY subject_id"
                ).fetchall()
            )
            self._sqlite = self._build_sqlite(con)
        finally:
            con.close()

    # -- parameters -------------------------------------------------------------------------------

    @staticmethod
    def _dx_first_codes(con: duckdb.DuckDBPyConnection, csv: Path) -> dict[str, str]:
        """title -> the first code (file order) of every diagnosis title that several codes share."""
        rows = con.execute(
            "SELECT title, arg_min(code, n) FROM (SELECT 'icd' || icd_version || '|' || lower(trim(icd_code)) AS code, "
            "lower(trim(long_title)) AS title, row_number() OVER () AS n "
            "FROM read_csv(?, all_varchar = true, header = true)) GROUP BY title HAVING count(*) > 1",
            [str(csv)],
        ).fetchall()
        return dict(rows)

    @staticmethod
    def _drug_units(con: duckdb.DuckDBPyConnection, csv: Path) -> dict[str, str]:
        """drug -> its most frequent dose unit among prescriptions the organisers keep (ties: file order)."""
        rows = con.execute(
            "WITH p AS (SELECT lower(trim(drug)) AS drug, lower(trim(dose_unit_rx)) AS unit, row_number() OVER () AS n "
            "FROM read_csv(?, all_varchar = true, header = true) WHERE starttime IS NOT NULL AND stoptime IS NOT NULL "
            "AND dose_unit_rx IS NOT NULL AND route IS NOT NULL AND drug IS NOT NULL "
            "AND regexp_full_match(replace(dose_val_rx, ',', ''), '[0-9]+')), "
            "c AS (SELECT drug, unit, count(*) AS k, min(n) AS first FROM p GROUP BY drug, unit) "
            "SELECT drug, arg_min(unit, [-k, first]) FROM c GROUP BY drug",
            [str(csv)],
        ).fetchall()
        return dict(rows)

    @staticmethod
    def _codes_by_patient(con: duckdb.DuckDBPyConnection) -> dict[int, set[tuple[str, str]]]:
        rows = con.execute(
            "SELECT DISTINCT d.subject_id, 'icd' || d.icd_version || '|' || lower(trim(d.icd_code)), "
            "lower(trim(t.long_title)) FROM hosp.diagnoses_icd d JOIN hosp.d_icd_diagnoses t "
            "ON t.icd_code = d.icd_code AND t.icd_version = d.icd_version"
        ).fetchall()
        out: dict[int, set[tuple[str, str]]] = {}
        for subject, code, title in rows:
            out.setdefault(subject, set()).add((code, title))
        return out

    @staticmethod
    def _drugs_by_patient(con: duckdb.DuckDBPyConnection) -> dict[int, set[str]]:
        out: dict[int, set[str]] = {}
        for subject, drug in con.execute(
            "SELECT DISTINCT subject_id, lower(trim(drug)) FROM hosp.prescriptions WHERE drug IS NOT NULL"
        ).fetchall():
            out.setdefault(subject, set()).add(drug)
        return out

    def prefix(self, subject_id: int | None = None, tables: Iterable[str] = SCHEMA) -> str:
        """The view prefix of ``tables`` for one patient (``None``: every patient of the store)."""
        subjects = [subject_id] if subject_id is not None else (self.subjects or list(self.prediction_times))
        kept = {
            self._dx_first[title]
            for s in subjects
            for _, title in self._patient_dx.get(s, ())
            if title in self._dx_first
        }
        drugs = {d for s in subjects for d in self._patient_drugs.get(s, ())}
        units = [(d, self._units[d]) for d in sorted(drugs) if d in self._units]
        return view_prefix(view_ctes(kept, units, self.label_tables), tables)

    # -- SQLite reference -------------------------------------------------------------------------

    def _build_sqlite(self, con: duckdb.DuckDBPyConnection) -> sqlite3.Connection:
        lite = sqlite3.connect(":memory:", check_same_thread=False)
        for table, columns in SCHEMA.items():
            prefix = self.prefix(None, [table])
            cols = ", ".join(f"{c} {t}" for c, t in columns)
            lite.execute(f"CREATE TABLE {table} ({cols})")
            names = ", ".join(c for c, _ in columns)
            only = (
                f" WHERE subject_id IN ({', '.join(map(str, self.subjects))})"
                if self.subjects is not None and table not in DICTIONARIES
                else ""
            )
            rows = con.execute(f"{prefix}SELECT {names} FROM {table}{only}").fetchall()
            marks = ", ".join("?" for _ in columns)
            lite.executemany(
                f"INSERT INTO {table} VALUES ({marks})", [tuple(map(_to_sqlite, r)) for r in rows]
            )
        lite.commit()
        return lite

    def sqlite_answer(self, sql: str, subject_id: int | None = None) -> str:
        """The processed answer SQLite gives for ``sql`` over every patient's rows, or only
        ``subject_id``'s (and the dictionaries); an error as ``"error: ..."``."""
        with self._only(subject_id):
            try:
                return process_answer(self._sqlite.execute(sql).fetchall())
            except sqlite3.Error as err:
                return f"error: {err}"

    @contextmanager
    def _only(self, subject_id: int | None) -> Iterator[None]:
        if subject_id is None:
            yield
            return
        patient_tables = [t for t in SCHEMA if t not in DICTIONARIES]
        for t in patient_tables:  # temp views shadow the main tables for unqualified names
            self._sqlite.execute(
                f"CREATE TEMP VIEW {t} AS SELECT * FROM main.{t} WHERE subject_id = {int(subject_id)}"
            )
        try:
            yield
        finally:
            for t in patient_tables:
                self._sqlite.execute(f"DROP VIEW temp.{t}")

    def classify(self, item: Item) -> Outcome:
        """Which class ``item`` is in (only ``reproducible`` questions are run in an episode)."""
        if item.sql is None:
            return Outcome(item, "abstain", "the gold answer is to abstain")
        subjects = item.subjects
        absent = sorted(item.tables & set(ABSENT))
        if len(subjects) != 1:
            return Outcome(
                item, "cross_patient", "names no single patient: it asks about the whole population"
            )
        subject = subjects.pop()
        if self.subjects is not None and subject not in self.subjects:
            return Outcome(item, "not_loaded", "its patient is not in this reference's patients", subject)
        if absent:
            return Outcome(item, "data_absent", f"reads {', '.join(absent)} ({ABSENT[absent[0]]})", subject)
        own = self.sqlite_answer(item.sql, subject)
        if self.sqlite_answer(item.sql) != own:
            return Outcome(
                item, "cross_patient", "its answer depends on other patients' rows (SQLite over every patient "
                "and over this patient's own rows disagree)", subject,
            )  # fmt: skip
        if own == item.answer:
            return Outcome(item, "reproducible", "", subject)
        return Outcome(
            item, "recreation_differs", f"SQLite on the rebuilt view returns {own[:120]}, gold {(item.answer or '')[:120]}",
            subject,
        )  # fmt: skip


def _to_sqlite(v: Any) -> Any:
    if isinstance(v, dt.datetime):
        return v.isoformat(sep=" ")
    if isinstance(v, dt.date):
        return v.isoformat()
    if isinstance(v, Decimal):
        return float(v)
    return v


def run_in_episodes(
    rec: Recreation, outcomes: Sequence[Outcome], *, limits: Any = None, run_kind: str = "reproducible"
) -> Iterator[Outcome]:
    """Run every ``run_kind`` outcome's gold SQL, prefixed with the patient's view, through
    ``ehr.run_sql_query`` in the patient's sealed episode (text policy, prediction time one day after
    the patient's last recorded time); yields each outcome with ``answer`` or ``error`` set."""
    import anyio

    from clinseek.episode import EpisodeKey, build_episode
    from clinseek.tools import Limits, ToolContext, call_tool

    wide = limits or Limits(max_rows=1000, max_tool_chars=10_000_000, sql_timeout_s=30)
    by_subject: dict[int, list[Outcome]] = {}
    for o in outcomes:
        if o.kind == run_kind and o.subject_id is not None:
            by_subject.setdefault(o.subject_id, []).append(o)
    for subject, group in sorted(by_subject.items()):
        key = EpisodeKey(subject, rec.prediction_times[subject])
        with build_episode(rec.store, key) as ep:
            ctx = ToolContext(ep, wide)
            for o in group:
                sql = rec.prefix(subject, o.item.tables) + (o.item.sql or "")
                result = anyio.run(call_tool, ctx, "ehr.run_sql_query", {"sql_query": sql})
                if result.ok:
                    o.answer = process_answer(result.data.get("rows", []))
                    o.rewritten = "SQLite" in result.content.split("\n", 1)[0]
                else:
                    o.error = result.content
                yield o
