"""Candidate tables of the AgentEHR-Bench tasks: built from a store's dictionaries, or imported from AgentEHR.

AgentEHR-Bench prompts name no answers; the agent finds them in the episode's ``<task>_candidates`` table
(``candidates.<task>_candidates``). A question's table comes, in this order, from:

1. its own ``candidates`` list (built text benchmarks inline theirs);
2. AgentEHR's ``candidate_table.db`` when a user has it (:func:`load_agentehr_tables`);
3. the store (:func:`store_candidate_table`), as the task's ``TaskSpec.candidate_table`` declares
   (``docs/tasks.md`` lists each task's candidates): the rows, ``candidate`` first, then dictionary
   columns.

The diagnosis and procedure CCS tables and the lab table are dictionaries (the same for every patient).
MIMIC-IV has no dictionary of microbiology tests, drugs or care units, so those three vocabularies are
read from the store's event rows **of the other patients only**: a name is in patient S's table when at least one patient other
than S has it. The table of S therefore never depends on S's own records (nothing of S's future, nor
of S's past, can be read from it). Every table, imported or built, passes the sealed episode's check
(:func:`clinseek.episode.check_candidate_table`: no id, time or date column).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Mapping
from functools import lru_cache
from pathlib import Path

import pyarrow as pa

from ..episode import CandidateSource, check_candidate_table
from ..errors import ClinseekError, EpisodeError
from ..store import open_store
from ._question import Question
from ._spec import CandidateTable
from ._tasks import AGENTEHR_TASKS, find_task

AGENTEHR_TABLE_NAMES: dict[str, tuple[str, ...]] = {
    t.name: t.candidate_table.imported for t in AGENTEHR_TASKS if t.candidate_table is not None
}
"""Table names in AgentEHR's ``candidate_table.db`` per task (its prescriptions table holds ATC names)."""

CANDIDATE_DB = "candidate_table.db"
"""File name of AgentEHR's candidate database (``<data root>/database/candidate_table.db``)."""


def table_name(task: str) -> str:
    """The episode table of a task's candidates without schema: ``labevents`` → ``labevents_candidates``."""
    return "".join(c if c.isalnum() else "_" for c in task.lower()) + "_candidates"


# --- built from the store ---------------------------------------------------------------------------------

def _store_key(store: Path | str) -> tuple[str, int, int]:
    path = Path(store).resolve()
    try:
        stat = path.stat()
    except OSError as err:
        raise ClinseekError(f"{path}: cannot read the store ({err})") from err
    return str(path), stat.st_mtime_ns, stat.st_size


def _query(store: str, sql: str, needs: str) -> pa.Table:
    handle = open_store(store)
    if not handle.has_table(needs):
        raise ClinseekError(f"{store}: the store has no {needs}, so no candidate table can be built from it")
    con = handle.connect()
    try:
        return con.sql(sql).to_arrow_table()
    finally:
        con.close()


def _coded(names: tuple[str, ...], codes: list[tuple[str, int, str]], mapper: Callable[[str, int], tuple[str, ...]]
           ) -> pa.Table:
    """Rows (candidate, icd_code, icd_version, long_title): every code under each category it maps to,
    then one bare row per category no dictionary code maps to (so every category can be answered)."""
    rows: list[tuple[str, str | None, int | None, str | None]] = []
    for code, version, title in codes:
        rows += [(name, code, version, title) for name in mapper(code, version)]
    covered = {r[0] for r in rows}
    rows += [(name, None, None, None) for name in names if name not in covered]
    rows.sort(key=lambda r: (r[0], r[2] or 0, r[1] or ""))
    columns = list(zip(*rows, strict=True)) if rows else [(), (), (), ()]
    return pa.table({
        "candidate": pa.array(columns[0], pa.string()), "icd_code": pa.array(columns[1], pa.string()),
        "icd_version": pa.array(columns[2], pa.int64()), "long_title": pa.array(columns[3], pa.string()),
    })


def _rule(task: str) -> CandidateTable:
    spec = find_task(task, "agentehr-bench")
    if spec is None or spec.candidate_table is None:
        known = ", ".join(t.name for t in AGENTEHR_TASKS)
        raise ClinseekError(f"no candidate table for task {task!r}; AgentEHR tasks: {known}")
    return spec.candidate_table


@lru_cache(maxsize=16)
def _dictionary_table(store: str, mtime_ns: int, size: int, task: str) -> pa.Table:
    """The (patient-independent) table of a ``dictionary`` or ``coded`` task, read once per store file version."""
    rule = _rule(task)
    if rule.kind == "dictionary":
        return _query(store, rule.sql, rule.needs)
    assert rule.categories is not None and rule.mapper is not None
    found = _query(store, rule.sql, rule.needs)
    codes = list(zip(*(found.column(c).to_pylist() for c in ("icd_code", "icd_version", "long_title")), strict=True))
    return _coded(rule.categories(), codes, rule.mapper)


@lru_cache(maxsize=16)
def _vocabulary(store: str, mtime_ns: int, size: int, task: str) -> pa.Table:
    rule = _rule(task)
    return _query(store, f"SELECT * FROM ({rule.sql}) ORDER BY candidate", rule.needs)


def store_candidate_table(store: Path | str, task: str, subject_id: int) -> pa.Table:
    """The candidate table of an AgentEHR task for one patient, built from ``store`` (see the module doc).

    Args:
        store: a clinseek store.
        task: an AgentEHR-Bench task (its ``TaskSpec.candidate_table`` says how the table is made).
        subject_id: the question's patient; the vocabulary tasks leave this patient's own rows out.

    Returns:
        An Arrow table whose first column is ``candidate`` (text); cached per store file and task.

    Raises:
        ClinseekError: an unknown task, or the store lacks the table the vocabulary comes from.
    """
    rule = _rule(task)
    key = _store_key(store)
    if rule.kind != "others":
        return _dictionary_table(*key, task)
    table = _vocabulary(*key, task)
    n, only = table.column("n").to_pylist(), table.column("only").to_pylist()
    keep = pa.array([count > 1 or sole != subject_id for count, sole in zip(n, only, strict=True)], pa.bool_())
    return table.filter(keep).drop_columns(["n", "only"])


# --- imported from AgentEHR ------------------------------------------------------------------------------


def agentehr_db_path(path: Path | str) -> Path:
    """The ``candidate_table.db`` a user points at: the file itself, ``DIR/candidate_table.db`` or
    ``DIR/database/candidate_table.db`` (AgentEHR's data root, e.g. ``MIMICIVAgentBench``).

    Raises:
        ClinseekError: none of the three exists (the message lists the paths looked at).
    """
    path = Path(path)
    tried = [path] if path.suffix == ".db" else [path / CANDIDATE_DB, path / "database" / CANDIDATE_DB]
    for candidate in tried:
        if candidate.is_file():
            return candidate
    raise ClinseekError(
        f"{path}: no AgentEHR candidate database; looked for {', '.join(str(t) for t in tried)} (AgentEHR's "
        f"layout: <data root>/database/{CANDIDATE_DB}, tables <task>_candidates with a 'candidate' column)"
    )


def _sqlite_table(db: Path, con: sqlite3.Connection, name: str) -> pa.Table:
    cursor = con.execute(f'SELECT * FROM "{name}"')
    columns = [d[0].lower() for d in cursor.description]
    values = list(zip(*cursor.fetchall(), strict=True)) or [() for _ in columns]
    data = {c: pa.array([None if v is None else str(v) for v in col], pa.string())
            for c, col in zip(columns, values, strict=True)}
    table = pa.table(data)
    try:
        check_candidate_table(name, table)
    except EpisodeError as err:
        raise ClinseekError(f"{db}: table {name!r}: {err}") from None
    keep = pa.array([bool(v and v.strip()) for v in table.column("candidate").to_pylist()], pa.bool_())
    return table.filter(keep)


@lru_cache(maxsize=4)
def _agentehr_tables(db: str, mtime_ns: int) -> dict[str, pa.Table]:
    try:
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    except sqlite3.Error as err:
        raise ClinseekError(f"{db}: cannot open the AgentEHR candidate database ({err})") from err
    try:
        names = {r[0].lower(): r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        out: dict[str, pa.Table] = {}
        for task, options in AGENTEHR_TABLE_NAMES.items():
            found = next((names[o] for o in options if o in names), None)
            if found is not None:
                out[task] = _sqlite_table(Path(db), con, found)
        return out
    except sqlite3.Error as err:
        raise ClinseekError(f"{db}: not a readable SQLite candidate database ({err})") from err
    finally:
        con.close()


def load_agentehr_tables(path: Path | str) -> dict[str, pa.Table]:
    """The AgentEHR-Bench candidate tables of AgentEHR's ``candidate_table.db``, by task.

    Every column is read as text (AgentEHR stores TEXT); rows with an empty candidate are dropped; each
    table must pass :func:`clinseek.episode.check_candidate_table`. ``prescriptions_atc_candidates``
    serves the ``prescriptions`` task. Tables of other tasks (``radiology_candidates``) are not read.
    AgentEHR's ``reference_table.db`` is not needed: its ``d_*`` dictionaries are the store's, and the
    candidate tables already carry the code columns (ICD, NDC) of their categories.

    Raises:
        ClinseekError: no database at ``path`` (see :func:`agentehr_db_path`), it is not SQLite, or a
            table breaks the candidate-table rule (file, table and column named).
    """
    db = agentehr_db_path(path)
    return _agentehr_tables(str(db.resolve()), db.stat().st_mtime_ns)


# --- per question -----------------------------------------------------------------------------------------


def question_candidates(question: Question, store: Path | str, imported: Path | str | None = None
                        ) -> dict[str, CandidateSource]:
    """The candidate tables of one question's episode (``{table name: list or Arrow table}``).

    Risk questions get none (yes/no is not a vocabulary). A question with its own ``candidates`` gets
    them; an AgentEHR-Bench question without gets its task's table from ``imported`` (AgentEHR's
    ``candidate_table.db``) when given, else from ``store``. Other questions without candidates get none.

    Raises:
        ClinseekError: ``imported`` lacks the task's table, or the store cannot supply it.
    """
    if question.task_type == "risk_prediction":
        return {}
    name = table_name(question.task)
    if question.candidates:
        return {name: list(question.candidates)}
    if question.benchmark != "agentehr-bench" or find_task(question.task, "agentehr-bench") is None:
        return {}
    if imported is not None:
        tables = load_agentehr_tables(imported)
        if question.task not in tables:
            raise ClinseekError(f"{agentehr_db_path(imported)}: no table for task {question.task!r} "
                                f"(expected {' or '.join(AGENTEHR_TABLE_NAMES[question.task])})")
        return {name: tables[question.task]}
    return {name: store_candidate_table(store, question.task, question.subject_id)}


def candidate_names(tables: Mapping[str, CandidateSource]) -> dict[str, list[str]]:
    """The distinct candidate names of each table, in first-seen order (for prompts and answer checks)."""
    out: dict[str, list[str]] = {}
    for name, source in tables.items():
        values = source.column("candidate").to_pylist() if isinstance(source, pa.Table) else list(source)
        out[name] = list(dict.fromkeys(v for v in values if v))
    return out
