"""The tool-level leakage audit, shared by the direct path (test_tool_leakage.py) and MCP (tests/mcpserver).

For a (patient, cutoff) pair, every value every tool returns must have been known before the cutoff,
checked on each tool's structured rows (the text is rendered from them): only the episode's
subject_id; every TIMESTAMP before the cutoff (at or before it under the multimodal policy) and
every DATE d with d + 1 day before it; masked columns NULL while the store says their value was
not yet known; no code of the target admission / ED stay; label-source tables absent.
"""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from clinseek.policy import MM_POLICY, TEXT_POLICY
from clinseek.schema import get_table
from clinseek.store import connect_store
from clinseek.tools import Limits, ToolResult

PAIRS_PER_STORE = 4
_AUDIT_KEY = {
    "icu.ingredientevents": ("orderid", "itemid", "starttime"),
    # episodes renumber microevent_id (the policy hides pending cultures' row counts)
    "hosp.microbiologyevents": ("micro_specimen_id", "test_itemid", "org_itemid", "ab_itemid", "isolate_num"),
}
AUDIT_LIMITS = Limits(max_rows=1_000_000, max_tool_chars=100_000_000, max_cell_chars=100, max_unique_values=100_000)


def audit_cases(store: Path, n: int, seed: int) -> list[dict[str, Any]]:
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


def masked_in_store(store: Path, key: Any, op: str) -> dict[str, dict[tuple[Any, ...], set[str]]]:
    """table -> {row key: masked columns that must be NULL} from the store's own values."""
    con = connect_store(store)
    out: dict[str, dict[tuple[Any, ...], set[str]]] = {}
    try:
        for name in _present(con):
            table = get_table(name)
            keys = _AUDIT_KEY.get(name, table.key)
            if not keys:  # no row key to match tool rows with; tests/episode/test_audit.py covers it
                continue
            shown = _shown_keys(con, table, keys, key, op)
            for mask in table.masks:
                active = "TRUE" if mask.known_at is None else f"NOT coalesce(({mask.known_at}) {op} ?, FALSE)"
                params = [key.subject_id] + ([] if mask.known_at is None else [key.prediction_time])
                vias = [r.via for r in table.renumbered]
                rows = con.execute(
                    f"SELECT {', '.join('t.' + k for k in (*keys, *vias))} FROM {name} t WHERE t.subject_id = ? "
                    f"AND {active}",
                    params[:1] + params[1:],
                ).fetchall()
                for row in rows:
                    out.setdefault(name, {}).setdefault(shown(row), set()).update(mask.columns)
    finally:
        con.close()
    return out


def _shown_keys(con: Any, table: Any, keys: tuple[str, ...], key: Any, op: str) -> Callable[[tuple[Any, ...]], tuple[Any, ...]]:
    """A store row's key values ``(*keys, *vias)`` -> the key as an episode shows it: a renumbered counter
    (``clinseek.schema.Sequence``) as its number among the owner's visible rows by (event time, counter)."""
    maps = {}
    for r in table.renumbered:
        if r.column in keys and r.sequence not in maps:
            owner = get_table(r.sequence.owner)
            assert owner.event_time is not None and owner.event_time.parent is None
            seq = r.sequence
            parts = "".join(f", t.{c}" for c in seq.partition)
            ordered = con.execute(
                f"SELECT t.{seq.id}{parts} FROM {owner.qualified} t WHERE t.subject_id = ? AND "
                f"({owner.event_time.expr}) {op} ? ORDER BY {owner.event_time.expr}, t.{seq.counter}, t.{seq.id}",
                [key.subject_id, key.prediction_time],
            ).fetchall()
            counted: dict[tuple[Any, ...], int] = {}
            maps[seq] = {}
            for i, *group in ordered:  # numbered per partition values (notes: per note type)
                n = counted[tuple(group)] = counted.get(tuple(group), 0) + 1
                maps[seq][i] = (n, "-".join([str(key.subject_id), *map(str, group), str(n)]))

    def shown(row: tuple[Any, ...]) -> tuple[Any, ...]:
        values = dict(zip(keys, row[: len(keys)], strict=True))
        vias = dict(zip((r.via for r in table.renumbered), row[len(keys):], strict=True))
        for r in table.renumbered:
            if r.column in keys:
                found = maps[r.sequence].get(vias[r.via])
                values[r.column] = None if found is None else found[1 if r.part == "id" else 0]
        return tuple(values[k] for k in keys)

    return shown


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


ToolCall = Callable[[str, dict[str, Any]], Awaitable[ToolResult]]
"""Runs one tool of the audited episode by name with arguments (directly, or through an MCP client)."""


async def audit_episode(call: ToolCall, tables: dict[str, int], auditor: Auditor) -> None:
    """Call every tool that returns rows on every patient table of the episode (``tables``: its row
    counts) and check each value with ``auditor``."""
    subject = str(auditor.key.subject_id)
    loaded = await call("ehr.load_ehr", {})
    assert not any(t.startswith(("cxr.chexpert", "cxr.negbio", "cxr.split")) for t in loaded.data["tables"])
    for table, n_rows in sorted(tables.items()):
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
            auditor.check(table, await call(name, args), f"{name}({args})")
        probe = _probe_column(spec) if n_rows else None
        if probe is not None:  # one column per table through the unique-values path
            result = await call(
                "ehr.get_unique_values", {"table_name": table, "column_name": probe}
            )
            assert result.ok, result.content
            for value, _ in result.data["rows"]:
                assert auditor.known(value), f"get_unique_values {table}.{probe}: {value}"
    later = await call(
        "ehr.get_event_counts_by_time",
        {"start_time": auditor.key.prediction_time.isoformat(sep=" "), "end_time": "2500-01-01"},
    )
    if auditor.inclusive:
        later = await call(
            "ehr.get_event_counts_by_time",
            {
                "start_time": (auditor.key.prediction_time + dt.timedelta(seconds=1)).isoformat(sep=" "),
                "end_time": "2500-01-01",
            },
        )
    assert sum(later.data["counts"].values()) == 0, later.data


