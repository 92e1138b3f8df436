"""Which thread runs a tool call: the loop's own when the calling task is alone on its event loop (nothing could
overlap with the call), else one worker-thread hand-off per model turn for all of its blocking calls; the SQL
time limit holds either way, and each call keeps its own result, time and error."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import pytest
from _tool_cases import pick_case

from clinseek._threads import alone_on_loop, run_cpu_bound
from clinseek.agent import EpisodeSession, open_session
from clinseek.episode import EpisodeKey
from clinseek.tools import (
    DEFAULT_REGISTRY,
    Limits,
    ToolContext,
    ToolRegistry,
    ToolResult,
    call_tool,
    call_tools,
)

_TURN: list[tuple[str, Any]] = [
    ("ehr.run_sql_query", {"sql_query": "SELECT count(*) AS n FROM admissions"}),
    ("ehr.get_latest_records", {"table_name": "admissions"}),
    ("ehr.run_sql_query", '{"sql_query": "SELECT subject_id FROM patients"}'),
]
_SLOW = "SELECT count(*) FROM range(1000000) a, range(1000000) b"


@pytest.fixture(scope="module")
def session(synthetic_store: Path) -> Iterator[EpisodeSession]:
    case = pick_case(synthetic_store)
    with open_session(synthetic_store, EpisodeKey(case.subject_id, case.prediction_time),
                      limits=Limits(sql_timeout_s=0.5)) as opened:
        yield opened


@pytest.fixture()
def statement_threads(session: EpisodeSession, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The thread of each statement the episode runs, in order."""
    seen: list[int] = []
    episode = session.context.episode
    execute = episode.execute

    def recorded(*args: Any, **kwargs: Any) -> Any:
        seen.append(threading.get_ident())
        return execute(*args, **kwargs)

    monkeypatch.setattr(episode, "execute", recorded)
    return seen


async def _beside_another_task(work: Any) -> Any:
    """``await work()`` while another task of the loop waits (as the runner's other questions do)."""
    out: list[Any] = []
    done = anyio.Event()

    async def other() -> None:
        await done.wait()

    async with anyio.create_task_group() as tg:
        tg.start_soon(other)
        out.append(await work())
        done.set()
    return out[0]


def _texts(results: list[ToolResult]) -> list[tuple[bool, str]]:
    return [(r.ok, r.content) for r in results]


def test_a_task_alone_on_its_loop_runs_a_turn_on_the_loop_thread(
        session: EpisodeSession, statement_threads: list[int], hand_offs: list[int]) -> None:
    async def turn() -> tuple[bool, list[ToolResult]]:
        return alone_on_loop(), await call_tools(session.context, _TURN)

    alone, results = anyio.run(turn)
    assert alone and all(r.ok for r in results)
    assert statement_threads and set(statement_threads) == {threading.get_ident()}
    assert hand_offs == []


def test_beside_another_task_a_turn_is_one_hand_off_with_the_same_results(
        session: EpisodeSession, statement_threads: list[int], hand_offs: list[int]) -> None:
    inline = anyio.run(call_tools, session.context, _TURN)
    del statement_threads[:]

    async def turn() -> tuple[bool, list[ToolResult]]:
        async def work() -> tuple[bool, list[ToolResult]]:
            return alone_on_loop(), await call_tools(session.context, _TURN)

        return await _beside_another_task(work)

    alone, handed = anyio.run(turn)
    assert not alone
    assert len(hand_offs) == 1
    assert threading.get_ident() not in statement_threads and len(set(statement_threads)) == 1
    assert _texts(handed) == _texts(inline)
    assert all(r.elapsed_s is not None and r.elapsed_s > 0 for r in handed)


def test_the_sync_twin_runs_the_tool_on_the_callers_thread(
        session: EpisodeSession, statement_threads: list[int], hand_offs: list[int]) -> None:
    reply = session.call_tool("ehr.run_sql_query", {"sql_query": "SELECT count(*) AS n FROM admissions"})
    assert reply.ok
    assert set(statement_threads) == {threading.get_ident()} and hand_offs == []


def test_an_inline_call_still_honours_the_sql_time_limit(
        session: EpisodeSession, statement_threads: list[int]) -> None:
    result = anyio.run(call_tool, session.context, "ehr.run_sql_query", {"sql_query": _SLOW})
    assert not result.ok and result.error_kind in ("timeout", "sql_error"), result.content
    assert set(statement_threads) == {threading.get_ident()}


def _plugin_registry(log: list[str]) -> ToolRegistry:
    """Built-in SQL plus plug-in tools (defined outside clinseek): one that starts an event loop of its own,
    one that fails with an infrastructure error."""
    registry = ToolRegistry()
    registry.register("ehr.run_sql_query", DEFAULT_REGISTRY.get("ehr.run_sql_query").fn)

    def own_loop(ctx: ToolContext) -> ToolResult:
        """Runs an event loop of its own."""
        log.append(f"own_loop on loop thread: {_has_loop()}")
        return ToolResult(ok=True, content=str(asyncio.run(asyncio.sleep(0, result=7))))

    def broken(ctx: ToolContext) -> ToolResult:
        """Fails as infrastructure does."""
        log.append("broken")
        raise RuntimeError("disk on fire")

    for fn in (own_loop, broken):
        registry.register(f"plugin.{fn.__name__}", fn)
    return registry


def _has_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def test_a_plug_in_tool_always_runs_in_a_worker_thread(session: EpisodeSession) -> None:
    log: list[str] = []
    registry = _plugin_registry(log)
    result = anyio.run(lambda: call_tool(session.context, "plugin.own_loop", {}, registry=registry))
    assert (result.ok, result.content) == (True, "7")
    assert log == ["own_loop on loop thread: False"]


def test_each_call_of_a_turn_keeps_its_own_result_and_error(session: EpisodeSession) -> None:
    """Unknown tool, bad arguments, a refusal and an infrastructure error each answer for their own call; the
    calls after an infrastructure error still run, and that error is raised once the turn ran."""
    log: list[str] = []
    registry = _plugin_registry(log)
    turn: list[tuple[str, Any]] = [
        ("ehr.no_such_tool", {}),
        ("ehr.run_sql_query", {"sql": "SELECT 1"}),
        ("ehr.run_sql_query", {"sql_query": "DROP TABLE hosp.patients"}),
        ("ehr.run_sql_query", {"sql_query": "SELECT count(*) AS n FROM admissions"}),
    ]
    results = anyio.run(lambda: call_tools(session.context, turn, registry=registry))
    assert [r.error_kind for r in results[:3]] == ["unknown_tool", "bad_argument", results[2].error_kind]
    assert not results[2].ok and results[3].ok
    alone = [anyio.run(lambda t=t: call_tool(session.context, *t, registry=registry)) for t in turn]
    assert _texts(results) == _texts(alone)

    with pytest.raises(RuntimeError, match="disk on fire"):
        anyio.run(lambda: call_tools(session.context, [("plugin.broken", {}), ("plugin.own_loop", {})],
                                     registry=registry))
    assert log == ["broken", "own_loop on loop thread: False"]


def test_inline_work_may_call_a_sync_twin(session: EpisodeSession) -> None:
    """A sync twin called from work run inline moves its own event loop to a thread of its own."""

    async def main() -> tuple[bool, bool]:
        reply = await run_cpu_bound(session.call_tool, "ehr.run_sql_query", {"sql_query": "SELECT 1 AS one"})
        return alone_on_loop(), reply.ok

    assert anyio.run(main) == (True, True)
