"""The agent loop's hand-offs to worker threads beside other questions: one per model turn for all of its
blocking tool calls, and one for the end of the question (the answer vocabulary and ``on_end``, the runner's
episode close); inline when the run is alone on its event loop."""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import anyio
import anyio.to_thread
import pytest
from _agent_helpers import ScriptedModel, assistant, call, make_question

from clinseek.agent import AgentBudget, AgentOutcome, run_agent
from clinseek.bench import Question, episode_key
from clinseek.episode import build_episode
from clinseek.models import ProviderUnavailable
from clinseek.tools import ToolContext

_T = TypeVar("_T")
TOOLS = ("ehr.run_sql_query", "ehr.get_latest_records", "ehr.think", "ehr.finish")


def _turn() -> Any:
    return assistant(call("ehr.run_sql_query", "a", sql_query="SELECT count(*) AS n FROM admissions"),
                     call("ehr.get_latest_records", "b", table_name="admissions"),
                     call("ehr.think", "c", response="noted"),
                     call("ehr.run_sql_query", "d", sql_query="SELECT hadm_id FROM admissions ORDER BY hadm_id"))


async def _beside_another_task(work: Callable[[], Awaitable[_T]]) -> _T:
    """``await work()`` while another task of the loop waits (as the runner's other questions do)."""
    out: list[_T] = []
    done = anyio.Event()
    async with anyio.create_task_group() as tg:
        tg.start_soon(done.wait)
        out.append(await work())
        done.set()
    return out[0]


def _agent(demo_store: Path, question: Question, steps: list[Any], *, beside: bool,
           ended: list[int]) -> AgentOutcome:
    with build_episode(demo_store, episode_key(question)) as episode:
        ctx = ToolContext(episode)

        async def run() -> AgentOutcome:
            return await run_agent(ScriptedModel(steps), ctx, question, tools=TOOLS,
                                   on_end=lambda: ended.append(threading.get_ident()))

        return anyio.run(lambda: _beside_another_task(run) if beside else run())


def _shown(outcome: AgentOutcome) -> list[tuple[str | None, str]]:
    return [(m.tool_call_id, m.content) for m in outcome.messages if m.role == "tool"]


def test_a_turn_is_one_hand_off_and_the_end_another(demo_store: Path, demo_question: Question,
                                                    hand_offs: list[int]) -> None:
    steps = [_turn(), assistant(call("ehr.finish", response=["no"]))]
    ended: list[int] = []
    handed = _agent(demo_store, demo_question, steps, beside=True, ended=ended)
    assert handed.status == "answered" and handed.answer == ["no"]
    assert len(hand_offs) == 2  # the turn's three blocking calls together; the close
    assert len(ended) == 1 and ended[0] != threading.get_ident()
    assert [r.name for r in handed.tools] == [c.name for c in steps[0].tool_calls] + ["ehr.finish"]
    assert all(r.ok and r.elapsed_s is not None and r.elapsed_s > 0 for r in handed.tools)

    del hand_offs[:], ended[:]
    inline = _agent(demo_store, demo_question, [_turn(), assistant(call("ehr.finish", response=["no"]))],
                    beside=False, ended=ended)
    assert hand_offs == [] and ended == [threading.get_ident()]
    assert _shown(inline) == _shown(handed)


def test_the_vocabulary_and_the_end_share_one_hand_off(demo_store: Path, demo_question: Question,
                                                       hand_offs: list[int]) -> None:
    """A question without candidates reads its answer vocabulary from the episode, then ends: one hand-off."""
    question = make_question(demo_question.subject_id, demo_question.prediction_time, candidates=(),
                             task="labevents", task_type="decision_making", label=("x",))
    ended: list[int] = []
    outcome = _agent(demo_store, question, [assistant(call("ehr.finish", response=["Potassium"]))], beside=True,
                     ended=ended)
    assert outcome.status == "answered" and outcome.answer == ["Potassium"]
    assert len(hand_offs) == 1 and len(ended) == 1


@pytest.mark.parametrize("steps", [
    [ProviderUnavailable("down")],
    [assistant(call("ehr.think", response="hmm"))] * 3,
], ids=["infra_error", "max_turns"])
def test_on_end_runs_once_whatever_the_end(demo_question: Question, steps: list[Any]) -> None:
    ended: list[int] = []
    ctx = ToolContext(episode=None)  # type: ignore[arg-type]  # think never reads the episode
    outcome = anyio.run(lambda: run_agent(ScriptedModel(steps), ctx, demo_question, tools=("ehr.think", "ehr.finish"),
                                          budget=AgentBudget(max_turns=3), on_end=lambda: ended.append(1)))
    assert outcome.status in ("infra_error", "no_answer") and ended == [1]


def test_an_error_of_on_end_is_raised_after_the_run(demo_question: Question) -> None:
    def broken() -> None:
        raise OSError("cannot remove the work folder")

    ctx = ToolContext(episode=None)  # type: ignore[arg-type]  # finish never reads the episode
    with pytest.raises(OSError, match="work folder"):
        anyio.run(lambda: run_agent(ScriptedModel([assistant(call("ehr.finish", response=["no"]))]), ctx,
                                    demo_question, tools=("ehr.think", "ehr.finish"), on_end=broken))
