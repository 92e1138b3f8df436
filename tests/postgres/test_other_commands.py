"""A PostgreSQL source beyond ``clinseek run``: ``clinseek tool`` and ``clinseek mcp serve`` episodes are built from the
database (the same texts as from the DuckDB store), and the password of its URL is never listed."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import anyio
import pytest
from typer.testing import CliRunner

from clinseek.cli import app
from clinseek.store import open_store
from pgserver import PgDatabase

pytest.importorskip("psycopg")

CALLS: list[tuple[str, dict[str, str]]] = [
    ("ehr.get_event_counts_by_time", {"start_time": "1800-01-01", "end_time": "{cutoff}"}),
    ("ehr.run_sql_query", {"sql_query": "SELECT charttime, itemid, valuenum, valueuom FROM labevents "
                                        "ORDER BY charttime DESC, itemid LIMIT 20"}),
    ("ehr.get_latest_records", {"table_name": "admissions"}),
]


def _episode(store: Path) -> tuple[int, Any]:
    """A demo patient with labs, one hour before the discharge of their second-to-last admission's end."""
    with open_store(store).connect() as con:
        subject, dischtime = con.execute(
            "SELECT a.subject_id, max(a.dischtime) FROM hosp.admissions a JOIN hosp.labevents l USING (hadm_id) "
            "GROUP BY a.subject_id ORDER BY count(*) DESC, a.subject_id LIMIT 1").fetchone()
    return int(subject), dischtime - timedelta(hours=1)


def _fill(args: dict[str, str], cutoff: Any) -> dict[str, str]:
    return {k: v.replace("{cutoff}", cutoff.isoformat(sep=" ")) for k, v in args.items()}


def _tool(store: str, name: str, subject: int, cutoff: Any, args: dict[str, str]) -> str:
    argv = ["tool", name, "--store", store, "--subject-id", str(subject), "--prediction-time", cutoff.isoformat(sep=" ")]
    for k, v in args.items():
        argv += ["--arg", f"{k}={v}"]
    result = CliRunner().invoke(app, argv, env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    return result.output


def test_clinseek_tool_reads_the_database_as_it_reads_the_store(demo_store: Path, pg_demo: PgDatabase) -> None:
    subject, cutoff = _episode(demo_store)
    for name, args in CALLS:
        filled = _fill(args, cutoff)
        assert _tool(pg_demo.reader_url, name, subject, cutoff, filled) == _tool(str(demo_store), name, subject, cutoff, filled)


def test_clinseek_tool_names_a_store_path_that_is_not_there(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["tool", "ehr.load_ehr", "--store", str(tmp_path / "nope.duckdb"), "--subject-id", "1",
                                      "--prediction-time", "2150-01-01 00:00:00"], env={"COLUMNS": "200"})
    assert result.exit_code == 2
    assert "nope.duckdb: no such store file" in result.output


def test_an_mcp_episode_of_the_database_serves_the_texts_of_the_store(demo_store: Path, pg_demo: PgDatabase,
                                                                        tmp_path: Path) -> None:
    from mcp import Client

    from clinseek.mcpserver import EpisodeSpec, describe_record, mint_token, open_spec, session_server

    subject, cutoff = _episode(demo_store)
    spec = EpisodeSpec(store=pg_demo.reader_url, subject_id=subject, prediction_time=cutoff)
    assert spec.store == pg_demo.reader_url  # a URL stays a URL (a Path would fold its '//')
    assert EpisodeSpec.model_validate_json(spec.model_dump_json()).store == pg_demo.reader_url
    assert isinstance(EpisodeSpec(store=str(demo_store), subject_id=subject, prediction_time=cutoff).store, Path)

    async def texts(served_spec: EpisodeSpec) -> list[str]:
        out = []
        async with await open_spec(served_spec) as served, Client(session_server(served)) as client:
            for name, args in CALLS:
                result = await client.call_tool(name, _fill(args, cutoff))
                out.append("".join(getattr(block, "text", "") for block in result.content))
        return out

    from_db = anyio.run(texts, spec)
    assert from_db == anyio.run(texts, EpisodeSpec(store=demo_store, subject_id=subject, prediction_time=cutoff))
    assert any("labevents" in text for text in from_db)

    _, record = mint_token(tmp_path / "tokens.json", spec)
    listed = describe_record(record, record.created_at)
    password = pg_demo.reader_url.split("@")[0].rsplit(":", 1)[1]
    assert password not in str(listed) and str(listed["store"]).startswith("postgresql://")
