"""The reference ClinSeekAgent's EHR tool path, re-enacted for side-by-side timing (not part of clinseek).

What it does, per ``../shared/reference/ref_agent_tools.md`` (sections 2.3 and 3):

- per question, ``load_ehr`` reads every table of the patient's own files **whole** with pandas
  (types inferred as pandas does), keeps rows whose *first* column named like ``*time*``/``*date*``
  is before the cutoff (strict ``<``; a date-only column counts at 23:59 of that day; tables without
  such a column are kept whole), empties ``pharmacy``, left-joins the dictionary labels named by
  ``link_information.json`` and keeps every table as a dict of string lists (``astype(str)``:
  missing values become ``nan``);
- per ``run_sql_query`` call it builds a fresh in-memory SQLite database holding every table whose
  name occurs (case-insensitive substring) in the SQL text, each rebuilt as a DataFrame and written
  with ``DataFrame.to_sql`` (all columns TEXT), runs the query with ``pandas.read_sql_query`` and
  renders it with ``DataFrame.to_string(index=False)`` (no row cap).

The reference reads one SQLite file per patient built from the MIMIC-IV CSVs; here the patient's
rows of each MIMIC-IV demo CSV are written once to a folder of CSV files (untimed set-up: the
reference's offline database build), with the reference's build-time extras: ``diagnoses_icd`` gets
``charttime`` = its admission's ``dischtime`` - 1 minute, ED ``diagnosis`` gets ``charttime`` = the
stay's ``outtime`` - 1 minute. Its own shortcomings (text comparisons, no time limit) are kept:
they are what it costs, not what it should do.
"""

from __future__ import annotations

import datetime as dt
import sqlite3
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd

LINKS: dict[str, list[tuple[str, list[str]]]] = {
    "labevents": [("d_labitems", ["itemid"])],
    "diagnoses_icd": [("d_icd_diagnoses", ["icd_code", "icd_version"])],
    "procedures_icd": [("d_icd_procedures", ["icd_code", "icd_version"])],
    "inputevents": [("d_items", ["itemid"])],
    "outputevents": [("d_items", ["itemid"])],
    "procedureevents": [("d_items", ["itemid"])],
    "datetimeevents": [("d_items", ["itemid"])],
    "ingredientevents": [("d_items", ["itemid"])],
}
"""Dictionary labels the reference joins into patient tables (its ``link_information.json``, by table)."""

_DICTIONARIES = {
    "d_labitems": ("hosp", ["itemid", "label", "fluid", "category"]),
    "d_icd_diagnoses": ("hosp", ["icd_code", "icd_version", "long_title"]),
    "d_icd_procedures": ("hosp", ["icd_code", "icd_version", "long_title"]),
    "d_items": ("icu", ["itemid", "label", "abbreviation", "category", "unitname"]),
}
_EMPTY = "No tables are currently loaded or available."


def write_patient_files(data: Path, subject_id: int, out: Path) -> Path:
    """The reference's per-patient database as a folder of CSV files (one per table with ``subject_id``)."""
    folder = out / f"patient_{subject_id}"
    folder.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect()
    try:
        roots = [data / "mimic-iv-demo-2.2" / "hosp", data / "mimic-iv-demo-2.2" / "icu", data / "mimic-iv-ed-demo-2.2" / "ed"]
        for root in roots:
            for path in sorted(root.glob("*.csv.gz")):
                name = path.name.removesuffix(".csv.gz")
                source = f"read_csv('{path}', all_varchar = true)"
                columns = [r[0] for r in con.execute(f"DESCRIBE SELECT * FROM {source}").fetchall()]
                if "subject_id" not in columns:
                    continue
                sql = f"SELECT * FROM {source} WHERE subject_id = '{subject_id}'"
                if name == "diagnoses_icd":
                    adm = f"read_csv('{root / 'admissions.csv.gz'}', all_varchar = true)"
                    sql = (f"SELECT d.*, strftime(CAST(a.dischtime AS TIMESTAMP) - INTERVAL 1 MINUTE, '%Y-%m-%d %H:%M:%S') "
                           f"AS charttime FROM ({sql}) d LEFT JOIN {adm} a USING (hadm_id)")
                elif name == "diagnosis" and root.name == "ed":
                    stays = f"read_csv('{root / 'edstays.csv.gz'}', all_varchar = true)"
                    sql = (f"SELECT d.*, strftime(CAST(s.outtime AS TIMESTAMP) - INTERVAL 1 MINUTE, '%Y-%m-%d %H:%M:%S') "
                           f"AS charttime FROM ({sql}) d LEFT JOIN {stays} s USING (stay_id)")
                con.execute(f"COPY ({sql}) TO '{folder / (name + '.csv')}' (HEADER)")
    finally:
        con.close()
    return folder


def read_dictionaries(data: Path) -> dict[str, pd.DataFrame]:
    """The reference's ``reference_table.db`` (read once per server process)."""
    out = {}
    for name, (module, columns) in _DICTIONARIES.items():
        root = data / "mimic-iv-demo-2.2" / module
        out[name] = pd.read_csv(root / f"{name}.csv.gz", usecols=columns)
    return out


def _time_column(frame: pd.DataFrame) -> str | None:
    for column in frame.columns:
        if "time" in column.lower() or "date" in column.lower():
            return str(column)
    return None


def load_ehr(folder: Path, cutoff: dt.datetime, dictionaries: dict[str, pd.DataFrame]) -> dict[str, dict[str, list[str]]]:
    """The reference's ``load_ehr``: every table of the patient, time-filtered, labels joined, as strings."""
    tables: dict[str, dict[str, list[str]]] = {}
    for path in sorted(folder.glob("*.csv")):
        name = path.stem
        frame = pd.read_csv(path)
        column = _time_column(frame)
        if column is not None:
            values = frame[column].dropna().astype(str).head(10)
            parsed = pd.to_datetime(frame[column], errors="coerce")
            if len(values) and all(len(v) <= 10 or " " not in v for v in values):
                parsed = parsed + pd.Timedelta(hours=23, minutes=59)
            frame = frame[parsed < pd.Timestamp(cutoff)]
        if name == "pharmacy":
            frame = frame.iloc[0:0]
        for table, keys in LINKS.get(name, []):
            frame = frame.merge(dictionaries[table], on=keys, how="left")
        tables[name] = {str(c): frame[c].astype(str).tolist() for c in frame.columns}
    return tables


def run_sql_query(tables: dict[str, dict[str, list[str]]], sql: str) -> str:
    """The reference's ``run_sql_query``: a fresh in-memory SQLite of the named tables, pandas rendering."""
    if not tables:
        return _EMPTY
    lowered = sql.lower()
    named = [name for name in tables if name.lower() in lowered]
    if not named:
        return f"Error: The SQL query does not seem to reference any available tables. Available tables: {list(tables)}"
    con = sqlite3.connect(":memory:")
    try:
        for name in named:
            pd.DataFrame(tables[name]).to_sql(name, con, index=False, if_exists="replace")
        try:
            frame = pd.read_sql_query(sql, con)
        except Exception as err:  # the reference returns the message as text
            return f"SQL Execution Error: {err}"
    finally:
        con.close()
    if frame.empty:
        return "Query executed successfully but returned no results."
    return str(frame.to_string(index=False))


def rows_of(tables: dict[str, dict[str, list[str]]], name: str) -> int:
    """Rows the reference's session holds of one table (0 when absent)."""
    columns: dict[str, Any] = tables.get(name, {})
    return len(next(iter(columns.values()))) if columns else 0
