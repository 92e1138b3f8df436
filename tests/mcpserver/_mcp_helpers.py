"""What every MCP route must show: the tool listing, every EHR tool, structured output and the refusals.

:func:`check_server` runs one client (in memory, stdio subprocess or HTTP) against the direct session of
the same episode: same tools, same text, same structured result, the same refusals as tool errors.
"""

from __future__ import annotations

import datetime as dt
import re
import sys
from collections.abc import Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import mcp_types as types
from _tool_cases import CANDIDATES, Case
from mcp import Client, StdioServerParameters

from clinseek.agent import EpisodeSession
from clinseek.mcpserver import OUTPUT_SCHEMA, tool_result
from clinseek.tools import ToolResult


def ehr_calls(case: Case) -> list[tuple[str, dict[str, Any]]]:
    """One call of every EHR tool the episode offers by default (the semantic one needs a model)."""
    cutoff = case.prediction_time.isoformat(sep=" ")
    day_before = (case.prediction_time - dt.timedelta(days=1)).isoformat(sep=" ")
    return [
        ("ehr.load_ehr", {}),
        ("ehr.get_table_names", {}),
        ("ehr.get_column_names", {"table_name": "labevents"}),
        ("ehr.get_table_description", {"table_name": "hosp.admissions"}),
        ("ehr.get_unique_values", {"table_name": "labevents", "column_name": "itemid"}),
        ("ehr.get_records_by_time", {"table_name": "labevents", "start_time": day_before, "end_time": cutoff}),
        ("ehr.get_event_counts_by_time", {"start_time": "1800-01-01", "end_time": cutoff}),
        ("ehr.get_latest_records", {"table_name": "labevents", "subject_id": case.subject_id}),
        ("ehr.get_records_by_keyword", {"table_name": "labevents", "keyword": "mg/dL"}),
        ("ehr.get_records_by_value", {"table_name": "admissions", "column_name": "hadm_id",
                                      "value": str(case.open_hadm_id)}),
        ("ehr.run_sql_query", {"sql_query": "SELECT itemid, count(*) AS n, max(charttime) AS last FROM hosp.labevents "
                                            "GROUP BY itemid ORDER BY n DESC, itemid LIMIT 5"}),
        ("ehr.get_candidates_by_keyword", {"table_name": "diagnoses_ccs_candidates", "keyword": "failure"}),
        ("ehr.get_candidates_by_fuzzy_matching", {"table_name": "diagnoses_ccs_candidates",
                                                  "keywords": ["renal failure", "sepsis"]}),
        ("ehr.think", {"response": "Look at the creatinine trend first."}),
        ("ehr.finish", {"response": ["Acute renal failure"]}),
    ]


def refusals(case: Case) -> list[tuple[str, dict[str, Any], str]]:
    """Calls that must come back as tool errors, with their ``error_kind``: another patient, a later time,
    writes, file readers, an unknown tool, a bad argument."""
    other = case.subject_id + 1
    later = (case.prediction_time + dt.timedelta(days=1)).isoformat(sep=" ")
    return [
        ("ehr.load_ehr", {"subject_id": other}, "pinned"),
        ("ehr.run_sql_query", {"sql_query": "SELECT * FROM hosp.patients", "subject_id": str(other)}, "pinned"),
        ("ehr.get_latest_records", {"table_name": "labevents", "subject_id": other}, "pinned"),
        ("ehr.load_ehr", {"timestamp": later}, "pinned"),
        ("ehr.run_sql_query", {"sql_query": "SELECT datetime(CURRENT_TIMESTAMP, '-1 day')"}, "clock"),
        ("ehr.run_sql_query", {"sql_query": "DROP TABLE hosp.patients"}, "read_only"),
        ("ehr.run_sql_query", {"sql_query": "UPDATE hosp.patients SET dod = NULL"}, "read_only"),
        ("ehr.run_sql_query", {"sql_query": "COPY hosp.patients TO '/tmp/clinseek_mcp_leak.csv'"}, "read_only"),
        ("ehr.run_sql_query", {"sql_query": "ATTACH '/tmp/clinseek_mcp_evil.duckdb' AS evil"}, "read_only"),
        ("ehr.run_sql_query", {"sql_query": "SELECT * FROM read_csv('/etc/passwd')"}, "forbidden_function"),
        ("ehr.run_sql_query", {"sql_query": "SELECT * FROM read_text('/etc/passwd')"}, "forbidden_function"),
        ("ehr.run_sql_query", {"sql_query": "SELECT * FROM glob('/*')"}, "forbidden_function"),
        ("ehr.drop_everything", {}, "unknown_tool"),
        ("ehr.get_column_names", {}, "bad_argument"),
    ]


def _without_timing(result: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in result.items() if k != "elapsed_s"}


async def check_server(client: Client, direct: EpisodeSession, case: Case, *, names: str = "dotted") -> None:
    """``client`` serves ``direct``'s episode: the same tools, texts, structured results and refusals."""
    listed = (await client.list_tools()).tools
    infos = direct.tools()
    wire = [i.name.replace(".", "__") if names == "safe" else i.name for i in infos]
    assert [t.name for t in listed] == wire
    for tool, info in zip(listed, infos, strict=True):
        assert (tool.description, tool.input_schema, tool.output_schema) == (info.description, info.parameters,
                                                                            OUTPUT_SCHEMA)
        assert tool.annotations is not None and tool.annotations.read_only_hint is (info.name != "ehr.finish")
        assert "subject_id" not in tool.input_schema.get("required", [])
    calls = ehr_calls(case)
    assert {name for name, _ in calls} == set(direct.tool_names), "every offered EHR tool is called"
    for name, args in calls:
        got = await client.call_tool(_wire(name, names), args)
        want = await direct.call_tool_async(name, args)
        assert not got.is_error, (name, got.content)
        assert isinstance(got.content[0], types.TextContent) and got.content[0].text == want.text, name
        assert _without_timing(got.structured_content) == _without_timing(want.result.model_dump(mode="json")), name
        assert tool_result(got).content == want.result.content
    for name, args, kind in refusals(case):
        got = await client.call_tool(_wire(name, names), args)
        assert got.is_error, (name, args)
        assert got.structured_content["error_kind"] == kind, (name, args, got.structured_content)
        assert got.content[0].text.startswith(f"Error ({kind}):")


def _wire(name: str, names: str) -> str:
    return name.replace(".", "__") if names == "safe" else name


_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?$")


def retyped(result: ToolResult) -> ToolResult:
    """``result`` with every ISO time string in its rows read back as a datetime (a date when it has no
    time), as the leakage auditor checks them: JSON carries times as strings."""

    def value(v: Any) -> Any:
        if isinstance(v, str) and _TIME.match(v):
            parsed = dt.datetime.fromisoformat(v)
            return parsed.date() if len(v) == 10 else parsed
        return v

    data = dict(result.data)
    if "rows" in data:
        data["rows"] = [[value(v) for v in row] for row in data["rows"]]
    return result.model_copy(update={"data": data})


def serve_args(case: Case, candidates_file: Path, *extra: str) -> list[str]:
    """``clinseek mcp serve`` options for ``case``'s episode with the test candidate list."""
    return ["--store", str(case.store), "--subject-id", str(case.subject_id), "--prediction-time",
            case.prediction_time.isoformat(sep=" "), "--candidates", f"diagnoses_ccs={candidates_file}", *extra]


def candidates_file(folder: Path) -> Path:
    """The test candidate list (``CANDIDATES``) as a file, one a line."""
    path = folder / "diagnoses_ccs.txt"
    path.write_text("\n".join(CANDIDATES["diagnoses_ccs"]) + "\n", encoding="utf-8")
    return path


@asynccontextmanager
async def stdio_client(args: Sequence[str], errlog: Path) -> Any:
    """A client of a real ``clinseek mcp serve`` subprocess (this Python, ``-m clinseek``)."""
    from mcp.client.stdio import stdio_client as spawn

    params = StdioServerParameters(command=sys.executable, args=["-m", "clinseek", "mcp", "serve", *args])
    with errlog.open("w", encoding="utf-8") as log:
        async with Client(spawn(params, errlog=log)) as client:
            yield client


@asynccontextmanager
async def http_client(url: str, token: str | None) -> Any:
    """A client of the HTTP mode sending ``token`` as its bearer token (none when ``None``)."""
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
    async with httpx2.AsyncClient(headers=headers, timeout=60) as http, \
            Client(streamable_http_client(url, http_client=http)) as client:
        yield client


def pick_cases(store: Path, n: int) -> list[Case]:
    """``n`` cases of different patients: each patient's admission with the most lab rows, cut halfway
    through, the patients with the most lab rows first (the first is ``pick_case``'s)."""
    from clinseek.store import connect_store

    con = connect_store(store)
    try:
        rows = con.execute(
            "SELECT subject_id, hadm_id, admittime, dischtime FROM (SELECT a.*, row_number() OVER ("
            "PARTITION BY a.subject_id ORDER BY n DESC, a.hadm_id) AS rank, max(n) OVER (PARTITION BY a.subject_id) AS "
            "best FROM (SELECT a.subject_id, a.hadm_id, a.admittime, a.dischtime, (SELECT count(*) FROM "
            "hosp.labevents l WHERE l.hadm_id = a.hadm_id) AS n FROM hosp.admissions a "
            "WHERE a.dischtime > a.admittime + INTERVAL 2 DAY) a) WHERE rank = 1 ORDER BY best DESC, hadm_id LIMIT ?",
            [n]).fetchall()
    finally:
        con.close()
    return [Case(store, int(s), (admit + (disch - admit) / 2).replace(microsecond=0), int(h))
            for s, h, admit, disch in rows]


@contextmanager
def http_server(app: Any) -> Iterator[str]:
    """Serve the ASGI ``app`` with uvicorn on a free loopback port in a thread; yields its MCP URL."""
    import socket
    import threading
    import time

    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        while not server.started:
            if not thread.is_alive():
                raise RuntimeError("the HTTP server did not start")
            time.sleep(0.01)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        server.should_exit = True
        thread.join(30)
        sock.close()
