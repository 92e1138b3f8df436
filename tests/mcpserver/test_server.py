"""The MCP server of one sealed episode through the SDK's own clients: in memory and a real stdio subprocess.

Each client sees the episode's tools with their schemas, gets from every EHR tool the text and the
structured result the direct path gives, and gets every refusal (another patient, a later time, a
write, a file reader) as a tool error it can read.
"""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from _mcp_helpers import candidates_file, check_server, serve_args, stdio_client
from _tool_cases import CANDIDATES, Case
from mcp import Client

import clinseek
from clinseek.mcpserver import EpisodeSpec, open_spec, session_server


def test_in_memory_client_sees_the_episode_as_the_agent_loop_does(demo_case: Case) -> None:
    async def main() -> None:
        async with await clinseek.open_episode_async(demo_case.store, demo_case.subject_id, demo_case.prediction_time,
                                                     candidates=CANDIDATES) as served, \
                await clinseek.open_episode_async(demo_case.store, demo_case.subject_id, demo_case.prediction_time,
                                                  candidates=CANDIDATES) as direct:
            async with Client(session_server(served), raise_exceptions=True) as client:
                await check_server(client, direct, demo_case)

    anyio.run(main)


def test_safe_names_map_every_dot_one_to_one(synthetic_case: Case) -> None:
    async def main() -> None:
        key = dict(store=synthetic_case.store, subject_id=synthetic_case.subject_id,
                   prediction_time=synthetic_case.prediction_time, candidates=CANDIDATES)
        async with await open_spec(EpisodeSpec(**key, tool_names="safe")) as served, \
                await clinseek.open_episode_async(synthetic_case.store, synthetic_case.subject_id,
                                                  synthetic_case.prediction_time, candidates=CANDIDATES) as direct:
            async with Client(session_server(served, names="safe")) as client:
                await check_server(client, direct, synthetic_case, names="safe")

    anyio.run(main)


@pytest.mark.slow
def test_stdio_subprocess_serves_the_same_episode(demo_case: Case, tmp_path: Path) -> None:
    async def main() -> None:
        args = serve_args(demo_case, candidates_file(tmp_path))
        async with stdio_client(args, tmp_path / "stderr.log") as client, \
                await clinseek.open_episode_async(demo_case.store, demo_case.subject_id, demo_case.prediction_time,
                                                  candidates=CANDIDATES) as direct:
            await check_server(client, direct, demo_case)
            assert client.server_info is not None and client.server_info.name == "clinseek"

    anyio.run(main)
