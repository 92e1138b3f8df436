"""Tool-level leakage audit: for random (patient, cutoff) pairs on the ingested MIMIC-IV demo and the
synthetic store, every value every tool returns was known before the cutoff.

Checked on each tool's structured rows (the text is rendered from them): only the episode's
subject_id; every TIMESTAMP before the cutoff (at or before it under the multimodal policy) and
every DATE d with d + 1 day before it; masked columns NULL while the store says their value was
not yet known; no code of the target admission / ED stay; label-source tables absent.
"""

from __future__ import annotations

import datetime as dt
import random
from pathlib import Path
from typing import Any

import anyio
import pytest
from _tool_cases import CANDIDATES, store_fixture

from clinseek.policy import MM_POLICY, TEXT_POLICY
from clinseek.schema import get_table
from clinseek.store import connect_store
from clinseek.tools import Limits, ToolContext, ToolResult, call_tool

PAIRS_PER_STORE = 4
_AUDIT_KEY = {
    "icu.ingredientevents": ("orderid", "itemid", "starttime"),
    # episodes renumber microevent_id (the policy hides pending cultures' row counts)
    "hosp.microbiologyevents": ("micro_specimen_id", "test_itemid", "org_itemid", "ab_itemid", "isolate_num"),
}
_WIDE = Limits(max_rows=1_000_000, max_tool_chars=100_000_000, max_cell_chars=100, max_unique_values=100_000)


def _cases(store: Path, n: int, seed: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    con = connect_store(store)
    try:
        adm = con.execute(
            "SELECT subject_id, hadm_id, admittime, dischtime FROM hosp.admissions "
            "WHERE dischtime > admittime ORDER BY subject_id, hadm_id"
        ).fetchall()
        stays = (
            con.execute("SELECT subject_id, stay_id, intime FROM ed.edstays").fetchall()
            if _has(con, "ed.edstays")
            else []
        )
    finally:
        con.close()
    out = []
    for i, (subject, hadm, admit, disch) in enumerate(rng.sample(adm, n)):
        cutoff = (admit + (disch - admit) * rng.random()).replace(microsecond=0)
        if i in (1, 2):
            cutoff = disch  # exactly at discharge: the boundary differs between the two policies
        open_stays = [s for s in stays if s[0] == subject and s[2] < cutoff]
        out.append(
            {
                "subject_id": subject,
                "prediction_time": cutoff,
                "target_hadm_id": hadm,
                "target_stay_id": rng.choice(open_stays)[1] if open_stays else None,
                "policy": MM_POLICY if i % 2 else TEXT_POLICY,
            }
        )
    return out


def _has(con: Any, name: str) -> bool:
    schema, table = name.split(".")
    q = "SELECT count(*) FROM duckdb_tables() WHERE schema_name = ? AND table_name = ?"
    return bool(con.execute(q, [schema, table]).fetchall()[0][0])


def _masked_in_store(store: Path, key: Any, op: str) -> dict[str, dict[tuple[Any, ...], set[str]]]:
    """table -> {row key: masked columns that must be NULL} from the store's own values."""
    con = connect_store(store)
    out: dict[str, dict[tuple[Any, ...], set[str]]] = {}
    try:
        for name in _present(con):
            table = get_table(name)
            keys = _AUDIT_KEY.get(name, table.key)
            if not keys:  # no row key to match tool rows with; tests/episode/test_audit.py covers it
                continue
            for mask in table.masks:
                active = "TRUE" if mask.known_at is None else f"NOT coalesce(({mask.known_at}) {op} ?, FALSE)"
                params = [key.subject_id] + ([] if mask.known_at is None else [key.prediction_time])
                rows = con.execute(
                    f"SELECT {', '.join('t.' + k for k in keys)} FROM {name} t WHERE t.subject_id = ? AND {active}",
                    params[:1] + params[1:],
                ).fetchall()
                for row in rows:
                    out.setdefault(name, {}).setdefault(tuple(row), set()).update(mask.columns)
    finally:
        con.close()
    return out


def _present(con: Any) -> list[str]:
    rows = con.execute("SELECT table_name FROM clinseek_meta.table_info").fetchall()
    return [r[0] for r in rows if get_table(r[0]).masks]


class Auditor:
    def __init__(self, key: Any, masked: dict[str, dict[tuple[Any, ...], set[str]]]) -> None:
        self.key = key
        self.masked = masked
        self.inclusive = key.policy == MM_POLICY
        self.checked_rows = 0

    def known(self, value: Any) -> bool:
        if isinstance(value, dt.datetime):
            instant = value
        elif isinstance(value, dt.date):
            instant = dt.datetime.combine(value, dt.time()) + dt.timedelta(days=1)
        else:
            return True
        t = self.key.prediction_time
        return instant <= t if self.inclusive else instant < t

    def check(self, table: str, result: ToolResult, where: str) -> None:
        assert result.ok, (where, result.content)
        cols = result.data.get("columns", [])
        rows = result.data.get("rows", [])
        spec = get_table(table) if "." in table and not table.startswith("candidates.") else None
        if spec is None or spec.visibility == "dictionary":
            return
        keys = _AUDIT_KEY.get(table, spec.key)
        for row in rows:
            self.checked_rows += 1
            values = dict(zip(cols, row, strict=True))
            if "subject_id" in values:
                assert values["subject_id"] == self.key.subject_id, (where, values)
            for col, value in values.items():
                assert self.known(value), f"{where}: {table}.{col} = {value} is not known at {self.key}"
            if spec.target_key == "hadm_id" and self.key.target_hadm_id is not None:
                assert values.get("hadm_id") != self.key.target_hadm_id, (where, values)
            if spec.target_key == "stay_id" and self.key.target_stay_id is not None:
                assert values.get("stay_id") != self.key.target_stay_id, (where, values)
            if table in self.masked and all(k in values for k in keys):
                hidden = self.masked[table].get(tuple(values[k] for k in keys), set())
                leaked = {c: values[c] for c in hidden if values.get(c) is not None}
                assert not leaked, f"{where}: {table} masked values visible: {leaked}"


def _probe_column(spec: Any) -> str | None:
    """The first masked column, else the first time column, else None."""
    masked = [c for m in spec.masks for c in m.columns]
    times = [c.name for c in spec.columns if c.is_time]
    return (masked or times or [None])[0]


async def _audit_episode(ep: Any, auditor: Auditor) -> None:
    ctx = ToolContext(ep, _WIDE, CANDIDATES)
    subject = str(auditor.key.subject_id)
    loaded = await call_tool(ctx, "ehr.load_ehr", {})
    assert not any(t.startswith(("cxr.chexpert", "cxr.negbio", "cxr.split")) for t in loaded.data["tables"])
    for table, n_rows in sorted(ep.table_counts().items()):
        spec = get_table(table)
        if not spec.is_patient_table:
            continue  # dictionaries hold no patient data (and are large)
        calls: list[tuple[str, dict[str, Any]]] = [
            ("ehr.run_sql_query", {"sql_query": f"SELECT * FROM {table}"}),
            # the same rows through the SQLite dialect layer (julianday() is SQLite: the query is translated)
            ("ehr.run_sql_query", {"sql_query": f"SELECT * FROM {table} WHERE julianday('now') > 0"}),
        ]
        if n_rows:
            calls += [
                ("ehr.get_records_by_keyword", {"table_name": table, "keyword": subject}),
                (
                    "ehr.get_records_by_value",
                    {"table_name": table, "column_name": "subject_id", "value": subject},
                ),
            ]
        if spec.visibility == "event" and n_rows:
            window = {"start_time": "1800-01-01", "end_time": "2500-01-01"}
            calls += [
                ("ehr.get_records_by_time", {"table_name": table, **window}),
                ("ehr.get_latest_records", {"table_name": table}),
            ]
        for name, args in calls:
            auditor.check(table, await call_tool(ctx, name, args), f"{name}({args})")
        probe = _probe_column(spec) if n_rows else None
        if probe is not None:  # one column per table through the unique-values path
            result = await call_tool(
                ctx, "ehr.get_unique_values", {"table_name": table, "column_name": probe}
            )
            assert result.ok, result.content
            for value, _ in result.data["rows"]:
                assert auditor.known(value), f"get_unique_values {table}.{probe}: {value}"
    later = await call_tool(
        ctx,
        "ehr.get_event_counts_by_time",
        {"start_time": auditor.key.prediction_time.isoformat(sep=" "), "end_time": "2500-01-01"},
    )
    if auditor.inclusive:
        later = await call_tool(
            ctx,
            "ehr.get_event_counts_by_time",
            {
                "start_time": (auditor.key.prediction_time + dt.timedelta(seconds=1)).isoformat(sep=" "),
                "end_time": "2500-01-01",
            },
        )
    assert sum(later.data["counts"].values()) == 0, later.data


@pytest.mark.parametrize("store_name", ["demo_store", "synthetic_store"])
def test_no_tool_shows_anything_unknown_at_the_cutoff(
    store_name: str, request: pytest.FixtureRequest
) -> None:
    from clinseek.episode import EpisodeKey, build_episode

    store = store_fixture(request, store_name)
    audited = 0
    for case in _cases(store, PAIRS_PER_STORE, seed=2024):
        key = EpisodeKey(**case)
        op = "<=" if key.policy == MM_POLICY else "<"
        auditor = Auditor(key, _masked_in_store(store, key, op))
        with build_episode(store, key, candidates=CANDIDATES) as ep:
            anyio.run(_audit_episode, ep, auditor)
        audited += auditor.checked_rows
    assert audited > 100, "the audit looked at too few rows to mean anything"


def test_the_auditor_catches_leaks() -> None:
    from clinseek.episode import EpisodeKey

    key = EpisodeKey(7, dt.datetime(2150, 1, 2), target_hadm_id=70)
    auditor = Auditor(key, {"hosp.admissions": {(71,): {"dischtime"}}})

    def rows(*row: Any) -> ToolResult:
        cols = ["subject_id", "hadm_id", "admittime", "dischtime"]
        return ToolResult(ok=True, content="", data={"columns": cols, "rows": [list(row)]})

    auditor.check("hosp.admissions", rows(7, 72, dt.datetime(2150, 1, 1), None), "fine")
    for bad in (
        rows(8, 72, dt.datetime(2150, 1, 1), None),  # another patient
        rows(7, 72, dt.datetime(2150, 1, 2), None),  # at the cutoff (strict policy)
        rows(7, 71, dt.datetime(2150, 1, 1), dt.datetime(2150, 1, 1, 5)),  # masked value shown
    ):
        with pytest.raises(AssertionError):
            auditor.check("hosp.admissions", bad, "leak")
    with pytest.raises(AssertionError):
        dx = ToolResult(ok=True, content="", data={"columns": ["subject_id", "hadm_id"], "rows": [[7, 70]]})
        auditor.check("hosp.diagnoses_icd", dx, "target code")
    assert not auditor.known(dt.date(2150, 1, 1))  # a date is known at the end of its day
