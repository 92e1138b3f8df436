"""The knowledge and imaging tools over MCP: the offline browser and the image tools of a multimodal episode.

A multimodal episode of the synthetic store (a patient at their first CXR study, linked) served with the
offline knowledge index and the store's CXR images: the client is offered the ``browser.*`` and
``image.*`` tools, gets the direct path's texts, a picture as an MCP image block, and refusals for an
image that is not the episode's.
"""

from __future__ import annotations

import base64
import re
from pathlib import Path

import anyio
import mcp_types as types
import pytest
from mcp import Client

import clinseek
from _cpu_limit import on_the_cpu_limiter
from clinseek.agent import Sources
from clinseek.imaging import store_cxr_root
from clinseek.knowledge import KnowledgeConfig
from clinseek.mcpserver import EpisodeSpec, open_spec, session_server
from clinseek.policy import MM_POLICY
from clinseek.schema import STUDY_TIME_SQL
from clinseek.store import open_store


def _mm_episode(store: Path) -> tuple[int, object, int, tuple[str, ...], str]:
    """(subject_id, study time, study_id, its dicom_ids, another patient's dicom_id)."""
    sql = (f"SELECT subject_id, study_id, min({STUDY_TIME_SQL}) AS t, list(dicom_id ORDER BY dicom_id) "
           "FROM cxr.metadata t GROUP BY subject_id, study_id ORDER BY subject_id, t")
    with open_store(store).connect() as con:
        rows = con.execute(sql).fetchall()
    subject, study, when, dicoms = rows[0]
    other = next(r[3][0] for r in rows if r[0] != subject)
    return int(subject), when, int(study), tuple(dicoms), str(other)


def _own_dir(text: str) -> str:
    """``text`` with the episode's own picture folder (a temporary folder per session) spelt ``IMG``."""
    return re.sub(r"clinseek_img_\w+", "IMG", text)


@pytest.mark.slow  # builds the offline knowledge index of the synthetic store when no other test has
def test_browser_and_image_tools_through_the_in_memory_client(synthetic_store: Path, knowledge_cache: Path) -> None:
    subject, when, study, dicoms, other = _mm_episode(synthetic_store)
    root = store_cxr_root(synthetic_store)
    spec = EpisodeSpec(store=synthetic_store, subject_id=subject, prediction_time=when, policy=MM_POLICY,
                       study_ids=(study,), dicom_ids=dicoms, cxr_root=root, knowledge="offline",
                       knowledge_cache=knowledge_cache)
    calls = [("browser.search", {"query": "acute kidney injury creatinine"}), ("browser.find", {"pattern": "kidney"}),
             ("image.dicom_processor", {"dicom_path": dicoms[0]})]

    async def main() -> None:
        sources = Sources(knowledge=KnowledgeConfig(cache_dir=knowledge_cache, store=synthetic_store), cxr_root=root)
        async with await open_spec(spec) as served, Client(session_server(served)) as client, \
                await clinseek.open_episode_async(synthetic_store, subject, when, policy=MM_POLICY, study_ids=(study,),
                                                  dicom_ids=dicoms, sources=sources) as direct:
            listed = {t.name for t in (await client.list_tools()).tools}
            assert {"browser.search", "browser.open", "browser.find", "image.dicom_processor"} <= listed
            assert listed == set(direct.tool_names)
            for name, args in calls:
                got = await client.call_tool(name, args)
                want = await direct.call_tool_async(name, args)
                assert not got.is_error, (name, got.content)
                assert isinstance(got.content[0], types.TextContent), name
                assert _own_dir(got.content[0].text) == _own_dir(want.text), name
            pictures = [b for b in got.content if isinstance(b, types.ImageContent)]
            assert len(pictures) == 1 and pictures[0].mime_type == "image/png"
            assert base64.b64decode(pictures[0].data).startswith(b"\x89PNG")
            refused = await client.call_tool("image.dicom_processor", {"dicom_path": other})
            assert refused.is_error and refused.structured_content["error_kind"] == (
                await direct.call_tool_async("image.dicom_processor", {"dicom_path": other})).result.error_kind

    anyio.run(main)


def test_a_picture_reply_waits_for_a_cpu_token(synthetic_store: Path) -> None:
    """The picture's MCP content is made on the event loop's CPU limiter, not on anyio's default threads."""
    subject, when, study, dicoms, _ = _mm_episode(synthetic_store)

    async def main() -> types.CallToolResult:
        sources = Sources(cxr_root=store_cxr_root(synthetic_store))
        async with await clinseek.open_episode_async(synthetic_store, subject, when, policy=MM_POLICY,
                                                     study_ids=(study,), dicom_ids=dicoms,
                                                     sources=sources) as session, \
                Client(session_server(session)) as client:
            return await on_the_cpu_limiter(lambda: client.call_tool("image.dicom_processor",
                                                                     {"dicom_path": dicoms[0]}))

    waited = anyio.run(main)
    assert not waited.is_error and isinstance(waited.content[0], types.TextContent)
    pictures = [b for b in waited.content if isinstance(b, types.ImageContent)]
    assert len(pictures) == 1 and base64.b64decode(pictures[0].data).startswith(b"\x89PNG")
