"""The two solvers: ClinSeekAgent mode (tools on the sealed episode) and Curated Input mode (one call).

Both open the sample's question the way ``clinseek run`` does (``clinseek.open_question_episode_async``:
its sealed episode, candidate tables, task turns and linked images; never its gold label), drive
inspect's model, read the answer with clinseek's own readers and record a
:class:`~clinseek.inspect_tasks.SampleOutcome` in the sample's store.

The agent loop keeps clinseek's loop rules (docs/agent.md): ``max_turns`` model calls, one reminder
when a turn calls no tool, then the answer written in text; the finish notice near the budget; one
correction when ``ehr.finish`` names items outside the candidate answers; ``max_total_tokens``. What
clinseek's loop does with the context window (compaction) is left to inspect (its ``--token-limit`` and
its compaction strategies); a sample cut by an inspect limit is recorded as ``no_answer``.
"""

from __future__ import annotations

from pathlib import Path

from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageTool,
    ChatMessageUser,
    execute_tools,
)
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import LimitExceededError

from .._threads import run_cpu_bound
from ..agent import (
    FINISH_NOW,
    FINISH_TOOL,
    REMINDER,
    AgentBudget,
    AnswerReading,
    EpisodeSession,
    Sources,
    ToolRecord,
    ToolReply,
    answer_vocabulary,
    correction_message,
    curated_messages,
    finish_items,
    read_curated_reply,
    read_finish,
    read_text_answer,
    tool_record,
    verbatim_package,
)
from ..api import open_question_episode_async
from ..bench import Question, load_questions
from ..errors import ClinseekError
from ._messages import inspect_name_map, to_inspect
from ._outcome import STORE_KEY, SampleOutcome
from ._tools import episode_tools

_NO_TOOLS = inspect_name_map(())
_LIMIT_STOP = {"token": "token_budget", "cost": "token_budget", "message": "max_turns", "turn": "max_turns"}


def _limit_reading(err: LimitExceededError) -> AnswerReading:
    """A sample an inspect limit ended: no answer, its stop reason named after the limit."""
    return AnswerReading("no_answer", _LIMIT_STOP.get(err.type, "time_limit"), False,  # type: ignore[arg-type]
                         error=f"inspect {err.type} limit: {err.message}")


class _Questions:
    """The benchmark's questions by qid, loaded once (off the event loop) on first use."""

    def __init__(self, bench: str | Path) -> None:
        self.bench = Path(bench)
        self._by_qid: dict[str, Question] | None = None

    async def get(self, qid: str) -> Question:
        if self._by_qid is None:
            questions = await run_cpu_bound(load_questions, self.bench)
            self._by_qid = {q.qid: q for q in questions}
        if qid not in self._by_qid:
            raise ClinseekError(f"{self.bench}: no question {qid!r} (the sample id must be a qid of the benchmark)")
        return self._by_qid[qid]


def _budget(max_turns: int | None, max_tool_chars: int | None) -> AgentBudget:
    fields = {"max_turns": max_turns, "max_tool_chars": max_tool_chars}
    return AgentBudget(**{k: v for k, v in fields.items() if v is not None})


def _sources(cxr_root: str | None) -> Sources:
    return Sources(cxr_root=Path(cxr_root) if cxr_root else None)


@solver
def clinseek_agent(bench: str, store: str, max_turns: int | None = None, max_tool_chars: int | None = None,
                   vision: bool = True, cxr_root: str | None = None) -> Solver:
    """ClinSeekAgent mode: the model calls clinseek's tools on the question's sealed episode until ``ehr.finish``.

    Args:
        bench: the benchmark (manifest file or folder) the samples' qids come from.
        store: the store it was built from.
        max_turns: model calls at most (default ``AgentBudget.max_turns``).
        max_tool_chars: a tool output is cut here, announced (default ``AgentBudget.max_tool_chars``).
        vision: the model is shown images (linked CXR images, tool pictures); else a note says how many.
        cxr_root: the CXR image folder (multimodal questions: images and the ``image.*`` tools).
    """
    questions, budget, sources = _Questions(bench), _budget(max_turns, max_tool_chars), _sources(cxr_root)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        question = await questions.get(str(state.sample_id))
        async with await open_question_episode_async([question], question.qid, store, budget=budget,
                                                     sources=sources, vision=vision) as session:
            run = _AgentRun(session, question, budget)
            await run.start(state)
            try:
                await run.loop(state, generate)
            except LimitExceededError as err:
                run.reading = _limit_reading(err)
                raise
            finally:
                if run.reading is not None:
                    state.store.set(STORE_KEY, run.outcome().model_dump(mode="json"))
        return state

    return solve


class _AgentRun:
    """One sample's agent loop: its session, counters and how it ended."""

    def __init__(self, session: EpisodeSession, question: Question, budget: AgentBudget) -> None:
        self.session, self.question, self.budget = session, question, budget
        self.names = inspect_name_map(session.tool_names)
        self.turns = self.reminders = self.corrections = 0
        self.notice_sent = False
        self.vocabulary: tuple[str, ...] = ()
        self.records: list[ToolRecord] = []
        self.pictures = 0
        """Pictures the tools made (sent to a model that takes images, else a note said how many)."""
        self.replies: list[ToolReply] = []
        """The current turn's replies, as they completed (the calls of a turn run concurrently)."""
        self.finish: ToolReply | None = None
        """The last successful ``ehr.finish`` reply of the current turn, in the model's order."""
        self.reading: AnswerReading | None = None

    async def start(self, state: TaskState) -> None:
        self.vocabulary = tuple(await run_cpu_bound(answer_vocabulary, self.session.context, self.question))
        state.messages = [to_inspect(m, self.names) for m in self.session.messages]
        state.tools = episode_tools(self.session, on_reply=self.on_reply, names=self.names)

    def on_reply(self, reply: ToolReply) -> None:
        self.replies.append(reply)

    def record(self, messages: list[ChatMessage]) -> None:
        """Record the turn's replies in the order of its calls (``messages``: the tool turns inspect
        added, in that order), as clinseek's loop records them; a reply matches its tool turn by name and
        the text the model was shown (replies alike in both are alike in their record too)."""
        pending, ordered = self.replies, []
        for message in messages:
            if not isinstance(message, ChatMessageTool):
                continue
            shown = message.error.message if message.error is not None else message.text
            name = self.names.from_wire(message.function or "")
            found = next((r for r in pending if r.name == name and r.text == shown), None)
            if found is not None:
                pending.remove(found)
                ordered.append(found)
        self.replies = []
        for reply in [*ordered, *pending]:  # a reply no tool turn shows (none expected) is kept last
            self.records.append(tool_record(self.turns, reply.name, reply.result, self.budget.max_tool_chars))
            self.pictures += len(reply.result.images)
            if reply.name == FINISH_TOOL and reply.ok:
                self.finish = reply

    def notify_finish(self, state: TaskState) -> None:
        """The finish notice, once, when the turns or tokens left are few (as clinseek's loop sends it)."""
        near = (self.budget.max_turns - self.turns <= self.budget.finish_notice_turns
                or state.token_usage >= self.budget.finish_notice_at * self.budget.max_total_tokens)
        if near and not self.notice_sent:
            state.messages.append(ChatMessageUser(content=FINISH_NOW))
            self.notice_sent = True

    async def loop(self, state: TaskState, generate: Generate) -> None:
        while self.turns < self.budget.max_turns:
            if state.token_usage >= self.budget.max_total_tokens:
                self.reading = AnswerReading("no_answer", "token_budget", False, error="total token budget used up")
                return
            self.notify_finish(state)
            self.turns += 1
            state = await generate(state, tool_calls="none")
            if state.output.stop_reason == "model_length":
                self.reading = AnswerReading("no_answer", "context_length", False,
                                             error="the model's context window is full")
                return
            if not state.output.message.tool_calls:
                if self.reminders < self.budget.reminders:
                    self.reminders += 1
                    state.messages.append(ChatMessageUser(content=REMINDER))
                    continue
                self.reading = read_text_answer(_replies_since_tools(state), self.question.candidates)
                return
            added = (await execute_tools(state.messages, state.tools)).messages
            state.messages.extend(added)
            self.record(added)
            if self.finished(state):
                return
        self.reading = AnswerReading("no_answer", "max_turns", False, error=f"no ehr.finish within {self.budget.max_turns} turns")

    def finished(self, state: TaskState) -> bool:
        """Read this turn's ``ehr.finish``: the run ends, or the model is asked once to correct its items."""
        finish, self.finish = self.finish, None
        if finish is None:
            return False
        reading = read_finish(finish_items(finish.result.data.get("answer")), self.vocabulary)
        if reading.invalid_answer and self.corrections < self.budget.answer_corrections:
            self.corrections += 1
            state.messages.append(ChatMessageUser(content=correction_message(reading.invalid_answer)))
            return False
        self.reading = reading
        return True

    def outcome(self) -> SampleOutcome:
        assert self.reading is not None
        images = len(self.session.images) + self.pictures
        return SampleOutcome.of(self.reading, mode="agent", turns=self.turns, reminders=self.reminders,
                                tools_offered=list(self.session.tool_names), tools=self.records,
                                images_sent=images if self.session.vision else 0,
                                images_not_sent=0 if self.session.vision else images)


def _replies_since_tools(state: TaskState) -> list[str]:
    """The texts of the assistant turns since the last one that called a tool, newest first."""
    replies: list[str] = []
    for message in reversed(state.messages):
        if isinstance(message, ChatMessageAssistant):
            if message.tool_calls:
                break
            replies.append(message.text)
    return replies


@solver
def clinseek_curated(bench: str, store: str, vision: bool = True, cxr_root: str | None = None,
                     curated_budget_tokens: int | None = None) -> Solver:
    """Curated Input mode: one generate call on the question's curated evidence package, no tools.

    The package is the manifest's verbatim one, else rendered from the sealed episode (as ``clinseek run
    --mode curated`` does: ``clinseek.bench.render_curated`` within ``curated_budget_tokens``). The reply
    is read as clinseek reads a Curated Input reply (one ``<answer>`` block, else the one extractor).
    """
    questions, sources = _Questions(bench), _sources(cxr_root)
    budget = AgentBudget() if curated_budget_tokens is None else AgentBudget(curated_budget_tokens=curated_budget_tokens)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        question = await questions.get(str(state.sample_id))
        package, embeds = verbatim_package(question)
        if package is None:
            package = await run_cpu_bound(_render, question, store, budget.curated_budget_tokens)
        state.messages, images = await _curated_turns(question, package, embeds, store, sources, vision)
        state.tools = []
        try:
            state = await generate(state, tool_calls="none")
            reading = read_curated_reply(state.output.completion, question.candidates)
        except LimitExceededError as err:
            state.store.set(STORE_KEY, SampleOutcome.of(_limit_reading(err), mode="curated", turns=1).model_dump(mode="json"))
            raise
        outcome = SampleOutcome.of(reading, mode="curated", turns=1, images_sent=images if vision else 0,
                                   images_not_sent=0 if vision else images)
        state.store.set(STORE_KEY, outcome.model_dump(mode="json"))
        return state

    return solve


async def _curated_turns(question: Question, package: str, embeds: bool, store: str, sources: Sources,
                         vision: bool) -> tuple[list[ChatMessage], int]:
    """The Curated Input turns in inspect's messages, and how many linked images the question has: a
    multimodal question's CXR images go with them as ``clinseek run`` attaches them (only with a CXR
    folder), read while its episode is open (the images are temporary files)."""
    if question.task_type != "multimodal" or sources.cxr_root is None:
        messages = curated_messages(question, package, embeds_question=embeds, vision=vision)
        return [to_inspect(m, _NO_TOOLS) for m in messages], 0
    async with await open_question_episode_async([question], question.qid, store, tools=(), sources=sources,
                                                 vision=vision) as session:
        messages = curated_messages(question, package, embeds_question=embeds, images=session.images, vision=vision)
        return [to_inspect(m, _NO_TOOLS) for m in messages], len(session.images)


def _render(question: Question, store: str, budget_tokens: int) -> str:
    from ..bench import render_curated

    return render_curated(question, store, budget_tokens=budget_tokens).text
