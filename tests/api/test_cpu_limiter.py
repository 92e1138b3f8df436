"""The front door's episode openings run on the event loop's CPU limiter, not on anyio's default threads."""

from __future__ import annotations

from pathlib import Path

import anyio
from _cpu_limit import on_the_cpu_limiter
from _tool_cases import pick_case

import clinseek
from clinseek.agent import EpisodeSession


def test_open_episode_async_waits_for_a_cpu_token(synthetic_store: Path) -> None:
    case = pick_case(synthetic_store)

    async def main() -> tuple[int, bool]:
        session = await on_the_cpu_limiter(lambda: clinseek.open_episode_async(
            synthetic_store, case.subject_id, case.prediction_time))
        async with session:
            reply = await session.call_tool_async("ehr.get_table_names")
            return session.key.subject_id, reply.ok

    assert anyio.run(main) == (case.subject_id, True)


def test_open_question_episode_async_waits_for_a_cpu_token(small_bench: Path, synthetic_store: Path) -> None:
    from clinseek.bench import load_questions

    question = load_questions(small_bench)[0]

    async def main() -> EpisodeSession:
        session = await on_the_cpu_limiter(lambda: clinseek.open_question_episode_async(
            small_bench, question.qid, synthetic_store))
        await session.aclose()
        return session

    session = anyio.run(main)
    assert session.closed and session.key.subject_id == question.subject_id
    assert [m.role for m in session.messages] == ["system", "user"]
