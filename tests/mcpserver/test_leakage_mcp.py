"""The tool-level leakage audit run through MCP: what a client receives was known at the cutoff.

The same random (patient, cutoff, policy, target encounters) cases and checks as tests/tools/
test_tool_leakage.py (_leak_audit.py), on the structured content an MCP client receives (its ISO time
strings read back as times), in memory and through a real ``clinseek mcp serve`` subprocess.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from _leak_audit import AUDIT_LIMITS, PAIRS_PER_STORE, Auditor, audit_cases, audit_episode, masked_in_store
from _mcp_helpers import retyped, stdio_client
from _tool_cases import CANDIDATES, store_fixture
from mcp import Client

from clinseek.episode import EpisodeKey
from clinseek.mcpserver import EpisodeSpec, open_spec, session_server, tool_result
from clinseek.policy import MM_POLICY
from clinseek.tools import ToolResult


def _spec(store: Path, case: dict[str, Any]) -> EpisodeSpec:
    return EpisodeSpec(store=store, candidates=CANDIDATES, limits=AUDIT_LIMITS.as_dict(), **case)


async def _audit_through(client: Client, auditor: Auditor) -> None:
    async def call(name: str, args: dict[str, Any]) -> ToolResult:
        return retyped(tool_result(await client.call_tool(name, args)))

    loaded = await call("ehr.load_ehr", {})
    await audit_episode(call, loaded.data["tables"], auditor)


def _auditor(store: Path, case: dict[str, Any]) -> Auditor:
    key = EpisodeKey(**case)
    return Auditor(key, masked_in_store(store, key, "<=" if key.policy == MM_POLICY else "<"))


@pytest.mark.parametrize("store_name", ["demo_store", "synthetic_store"])
def test_nothing_an_mcp_client_receives_was_unknown_at_the_cutoff(store_name: str, request: pytest.FixtureRequest) -> None:
    store = store_fixture(request, store_name)
    audited = 0
    for case in audit_cases(store, PAIRS_PER_STORE, seed=2024):
        auditor = _auditor(store, case)

        async def main(case: dict[str, Any] = case, auditor: Auditor = auditor) -> None:
            async with await open_spec(_spec(store, case)) as session, Client(session_server(session)) as client:
                await _audit_through(client, auditor)

        anyio.run(main)
        audited += auditor.checked_rows
    assert audited > 100, "the audit looked at too few rows to mean anything"


@pytest.mark.slow
def test_nothing_a_stdio_client_receives_was_unknown_at_the_cutoff(demo_store: Path, tmp_path: Path) -> None:
    case = audit_cases(demo_store, PAIRS_PER_STORE, seed=2024)[1]  # at discharge, multimodal policy
    auditor = _auditor(demo_store, case)
    spec = tmp_path / "spec.json"
    spec.write_text(_spec(demo_store, case).model_dump_json(), encoding="utf-8")

    async def main() -> None:
        async with stdio_client(["--spec", str(spec)], tmp_path / "stderr.log") as client:
            await _audit_through(client, auditor)

    anyio.run(main)
    assert auditor.checked_rows > 50


def test_a_client_gets_no_server_timing_of_a_call(demo_store: Path) -> None:
    """A call's duration on the server reflects work on rows the key may not see (a table's first load
    filters the patient's later rows out on the store): the structured result carries no ``elapsed_s``,
    only what the tool's text and rows carry; the MCP route of the agent loop times its calls itself."""
    case = audit_cases(demo_store, PAIRS_PER_STORE, seed=2024)[0]

    async def main() -> None:
        async with await open_spec(_spec(demo_store, case)) as session, Client(session_server(session)) as client:
            for name, args in [("ehr.load_ehr", {}), ("ehr.run_sql_query", {"sql_query": "SELECT count(*) FROM labevents"}),
                               ("ehr.get_latest_records", {"table_name": "hosp.no_such_table"})]:
                got = await client.call_tool(name, args)
                assert got.structured_content is not None and "elapsed_s" not in got.structured_content, name
                assert tool_result(got).elapsed_s == 0.0

    anyio.run(main)
