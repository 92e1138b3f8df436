"""The ClinSeekAgent loop: a model calls EHR tools on one sealed episode until it calls ``ehr.finish``.

Differences from the reference loop (ref_agent_tools.md §6.1, (b) 19-21, 27): the prompt comes
from an explicit mode; tool names are canonical (the provider maps them, unknown names are errors,
never repaired); the parallel calls of one turn run in one hand-off to a worker thread (through a channel:
concurrently) and are returned in order;
``ToolError`` goes back to the model as a structured error while any other exception ends the run
as ``infra_error`` with the partial transcript kept; a turn without a tool call gets a reminder,
and when the model still calls no tool, an answer it wrote in text is read by the one extractor
(``extract_answer``; its ``parse_mode`` is recorded and the scorer can leave it out); near the budget the model is told to finish; old tool outputs are compacted near the context
limit, the size of the next request counted in tokens; every call (failed ones too) with its
attempts, usage, cost and latency, and every tool's timing are recorded.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import anyio

from .._threads import run_cpu_bound
from ..errors import ClinseekError
from ..models import (
    ESTIMATE,
    ContextLengthExceeded,
    GenerateConfig,
    ImageRef,
    Message,
    ModelCallError,
    ModelResponse,
    PromptRefused,
    TokenCounter,
    ToolCall,
    accepts_images,
    messages_tokens,
    messages_tokens_bound,
    price_known,
)
from ..records import CallRecord
from ..tools import Limits, ToolContext, ToolResult, available_tools, strip_ansi, tool_names, tool_schemas
from ._answer import finish_items
from ._budget import AgentBudget
from ._channel import ToolChannel
from ._extract import ParseMode
from ._outcome import AgentOutcome, StopReason
from ._prompts import (
    FINISH_NOW,
    PROMPT_VERSION,
    REMINDER,
    LinkedEvidence,
    agent_messages_text,
)
from ._reading import AnswerReading, answer_vocabulary, correction_message, read_finish, read_text_answer
from ._records import Transcript
from ._toolturn import call_offered_turn, cap_output, tool_record, tool_turn_text

if TYPE_CHECKING:
    from ..bench import Question
    from ..models import ChatModel

FINISH_TOOL = "ehr.finish"
_COMPACTED = "[older tool output compacted to save context: {chars} characters from {name}; call the tool again if needed]"


def default_tools(limits: Limits | None = None) -> tuple[str, ...]:
    """The tools an agent run offers by default: every registered ``ehr.*`` tool that can run
    under ``limits`` (default ``Limits()``): the semantic candidate tool only when its model and
    extra are there (:func:`clinseek.tools.semantic_available`)."""
    return available_tools(tool_names("ehr"), limits or Limits())


def task_messages(question: Question, tools: Sequence[str], *, images: Sequence[ImageRef] = (),
                  linked: LinkedEvidence | None = None, vision: bool = True) -> list[Message]:
    """The system and task turns an agent run starts with (never the gold label).

    Args:
        question: the question (its ``benchmark`` field picks the task prompt).
        tools: the tools offered (the browser tools add the browser part of the system prompt).
        images: images attached to the task turn by reference; without ``vision`` they are not attached
            and the task turn says how many were not shown.
        linked: what the multimodal ``<run_context>`` lists.
        vision: the model is sent images.
    """
    withheld = 0 if vision or question.benchmark == "clinseek-bench-mm" else len(images)
    system, user = agent_messages_text(question, linked, vision=vision,
                                       browser=any(t.startswith("browser.") for t in tools), images_withheld=withheld)
    return [Message.system(strip_ansi(system)), Message.user(strip_ansi(user), list(images) if vision else [])]


class _Run:
    """Mutable state of one loop run (one question, one run index)."""

    def __init__(self, model: ChatModel, ctx: ToolContext, question: Question, budget: AgentBudget,
                 config: GenerateConfig, tools: Sequence[str], images: Sequence[ImageRef] = (),
                 linked: LinkedEvidence | None = None, vision: bool = True,
                 counter: TokenCounter = ESTIMATE, channel: ToolChannel | None = None,
                 on_end: Callable[[], None] | None = None) -> None:
        self.model = model
        self.on_end = on_end
        self.end_error: Exception | None = None
        self.channel = channel
        self.counter = counter
        self.ctx = ctx
        self.question = question
        self.budget = budget
        self.config = config.model_copy(update={"max_output_tokens": budget.max_output_tokens})
        self.schemas = channel.schemas() if channel is not None else tool_schemas(tools)
        self.offered = frozenset(tools)
        self.vision = vision
        self.images_sent = len(images) if vision else 0
        self.images_not_sent = 0 if vision else len(images)
        self.messages: list[Message] = task_messages(question, tools, images=images, linked=linked, vision=vision)
        self.transcript = Transcript(priced=price_known(model))
        self.turn = 0
        self.reminders = 0
        self.corrections = 0
        self.compactions = 0
        self.finish_notice_sent = False
        self.sent_len = 0
        """Messages already sent in the last request (the rest is counted with ``counter``)."""

    def outcome(self, status: str, stop_reason: StopReason, *, answer: list[str] | None = None,
                invalid: Sequence[str] = (), error: str | None = None, error_type: str | None = None,
                parse_mode: ParseMode | None = None) -> AgentOutcome:
        t = self.transcript
        return AgentOutcome(
            mode="agent", status=status, completed=stop_reason == "finish_tool_call",  # type: ignore[arg-type]
            stop_reason=stop_reason, error=error, error_type=error_type, answer=answer, parse_mode=parse_mode,
            invalid_answer=list(invalid), messages=list(self.messages), calls=list(t.calls),
            tools=list(t.tools), usage=t.usage, cost_usd=t.total_cost_usd, turns=self.turn,
            reminders=self.reminders, compactions=self.compactions, prompt_version=PROMPT_VERSION,
            images_sent=self.images_sent, images_not_sent=self.images_not_sent,
        )

    # -- budget and context ------------------------------------------------------------------
    def maybe_notify_finish(self) -> None:
        turns_left = self.budget.max_turns - self.turn
        tokens_used = self.transcript.usage.total_tokens
        near = turns_left <= self.budget.finish_notice_turns or tokens_used >= (
            self.budget.finish_notice_at * self.budget.max_total_tokens
        )
        if near and not self.finish_notice_sent:
            self.messages.append(Message.user(FINISH_NOW))
            self.finish_notice_sent = True

    async def context_exceeds(self, limit: float) -> bool:
        """Whether the next request holds more than ``limit`` tokens: the last prompt and reply as the provider
        counted them, plus the messages added since, counted with ``counter`` (the whole request when no usage
        was reported). Nothing is counted when a bound by characters (``messages_tokens_bound``) is within
        ``limit`` already."""
        ok = [c for c in self.transcript.calls if c.status == "ok"]
        last = ok[-1] if ok else None
        if last is not None and last.usage_reported and last.usage.input_tokens:
            pending, tools = self.messages[self.sent_len :], []
            base = last.usage.total_tokens
        else:
            pending, tools, base = list(self.messages), list(self.schemas), 0
        bound = messages_tokens_bound(self.counter, pending, tools)
        if bound is not None and base + bound <= limit:
            return False
        count = functools.partial(messages_tokens, self.counter, pending, tools)
        return base + (await run_cpu_bound(count) if self.counter.exact else count()) > limit

    def compact(self, keep: int) -> bool:
        """Replace all but the newest ``keep`` tool outputs by a short notice; True if anything changed."""
        tool_idx = [i for i, m in enumerate(self.messages) if m.role == "tool"]
        changed = False
        for i in tool_idx[: max(0, len(tool_idx) - keep)]:
            m = self.messages[i]
            if m.content.startswith("[older tool output compacted"):
                continue
            note = _COMPACTED.format(chars=len(m.content), name=m.name or "tool")
            self.messages[i] = m.model_copy(update={"content": note})
            changed = True
        self.compactions += changed
        return changed

    # -- model calls ---------------------------------------------------------------------------
    async def generate(self) -> ModelResponse:
        if await self.context_exceeds(self.budget.compact_at * self.budget.context_window_tokens):
            self.compact(self.budget.keep_recent_tool_outputs)
        try:
            return await self.call()
        except ContextLengthExceeded:
            if not self.compact(1):
                raise
            return await self.call()

    async def call(self) -> ModelResponse:
        """One model call, recorded whether it succeeds or fails."""
        self.sent_len = len(self.messages)
        started = time.perf_counter()
        try:
            response = await self.model.generate(self.messages, self.schemas, self.config)
        except ModelCallError as err:
            self.transcript.add_call(failed_call_record(self.turn, err, time.perf_counter() - started,
                                                        self.transcript.priced))
            raise
        self.transcript.add_call(_call_record(self.turn, response, time.perf_counter() - started))
        if response.stop_reason == "context_length":  # Claude's model_context_window_exceeded: the reply filled
            # the window, so the next request cannot fit either; compacted and asked again, as a refused prompt is
            raise ContextLengthExceeded(f"the reply stopped at the context window ({response.raw_stop_reason})",
                                        model=response.model)
        return response

    # -- tools ---------------------------------------------------------------------------------
    async def run_tools(self, calls: Sequence[ToolCall]) -> list[tuple[ToolCall, ToolResult]]:
        """The turn's calls, in order: in process with one hand-off for all of them (``call_offered_turn``),
        through a channel concurrently. The first infrastructure failure is raised once every call ran."""
        if self.channel is None:
            readable = [c for c in calls if c.error_kind is None]
            ran = iter(await call_offered_turn(self.ctx, self.offered, [(c.name, c.arguments) for c in readable]))
            return self.record_tools([(c, next(ran) if c.error_kind is None else _unread(c)) for c in calls])
        channel = self.channel
        results: list[ToolResult | None] = [None] * len(calls)
        crashes: list[Exception] = []

        async def one(i: int, call: ToolCall) -> None:
            try:
                results[i] = await self.run_tool(channel, call)
            except Exception as err:  # not a ToolError: an infrastructure failure, raised after the batch
                crashes.append(err)

        async with anyio.create_task_group() as tg:
            for i, call in enumerate(calls):
                tg.start_soon(one, i, call)
        if crashes:
            raise crashes[0]
        return self.record_tools([(c, r) for c, r in zip(calls, results, strict=True) if r is not None])

    def record_tools(self, done: list[tuple[ToolCall, ToolResult]]) -> list[tuple[ToolCall, ToolResult]]:
        """The tool turns of ``done`` added to the messages and the transcript; ``done``."""
        for call, result in done:
            content = cap_output(result.content, self.budget.max_tool_chars)
            self.messages.append(self.tool_message(call, result, content))
            self.transcript.tools.append(tool_record(self.turn, call.name, result, self.budget.max_tool_chars))
        return done

    def tool_message(self, call: ToolCall, result: ToolResult, content: str) -> Message:
        """The tool turn; pictures a tool made go back by reference to a model that takes images, else a note."""
        if result.images and not self.vision:
            self.images_not_sent += len(result.images)
        message = Message.tool(call, tool_turn_text(content, result, vision=self.vision), is_error=not result.ok)
        if result.images and self.vision:
            self.images_sent += len(result.images)
            message = message.model_copy(update={"images": [ImageRef(path=p) for p in result.images]})
        return message

    @staticmethod
    async def run_tool(channel: ToolChannel, call: ToolCall) -> ToolResult:
        """One call through ``channel`` (a call that could not be read is answered here)."""
        if call.error_kind is not None:
            return _unread(call)
        return await channel.call(call.name, call.arguments)

    # -- finish --------------------------------------------------------------------------------
    def read(self, reading: AnswerReading) -> AgentOutcome:
        """The outcome of a run whose answer was read as ``reading``."""
        return self.outcome(reading.status, reading.stop_reason, answer=reading.answer,
                            invalid=reading.invalid_answer, error=reading.error, parse_mode=reading.parse_mode)

    async def finish(self, done: list[tuple[ToolCall, ToolResult]]) -> AgentOutcome | None:
        """The outcome when this turn finished the run, else ``None`` (an invalid answer sent back)."""
        finishes = [(c, r) for c, r in done if c.name == FINISH_TOOL and r.ok]
        if not finishes:
            return None
        call, result = finishes[-1]
        items = finish_items(result.data.get("answer", _first_value(call.arguments)))
        if self.question.candidates:
            reading = read_finish(items, self.question.candidates)
        else:  # the vocabulary is read from the episode: off the event loop, with the run's end when it ends here

            def read_and_end() -> AnswerReading:
                found = read_finish(items, answer_vocabulary(self.ctx, self.question))
                if not self.corrects(found):
                    self.end()
                return found

            reading = await run_cpu_bound(read_and_end)
        if self.corrects(reading):
            self.corrections += 1
            self.messages.append(Message.user(correction_message(reading.invalid_answer)))
            return None
        return self.read(reading)

    def corrects(self, reading: AnswerReading) -> bool:
        """Whether ``reading``'s invalid items are sent back for a correction (the run goes on)."""
        return bool(reading.invalid_answer) and self.corrections < self.budget.answer_corrections

    def end(self) -> None:
        """Run ``on_end`` (blocking) unless it ran already; what it raises is kept for :meth:`run` to raise."""
        on_end, self.on_end = self.on_end, None
        if on_end is not None:
            try:
                on_end()
            except Exception as err:  # raised by run() after the outcome, as the caller's own close would be
                self.end_error = err

    def text_answer(self) -> AgentOutcome:
        """The model stopped calling tools without ``ehr.finish``: the answer its last replies wrote in
        text (``read_text_answer``; the replies since its last tool call, newest first), else no answer."""
        replies: list[str] = []
        for message in reversed(self.messages):
            if message.role == "assistant" and message.tool_calls:
                break
            if message.role == "assistant":
                replies.append(message.content)
        return self.read(read_text_answer(replies, self.question.candidates))

    async def step(self) -> AgentOutcome | None:
        self.turn += 1
        response = await self.generate()
        self.messages.append(response.message)
        calls = response.message.tool_calls
        if not calls:
            # Claude's refusal: "continuing without resetting will result in continued refusals" (Anthropic's docs)
            refused = response.raw_stop_reason == "refusal"
            if self.reminders < self.budget.reminders and not refused:
                self.reminders += 1
                self.messages.append(Message.user(REMINDER))
                return None
            outcome = self.text_answer()
            why = self.stopped_by(response)
            return outcome.model_copy(update={"error": why}) if why and outcome.status == "no_answer" else outcome
        done = await self.run_tools(calls)
        return await self.finish(done)

    def stopped_by(self, response: ModelResponse) -> str | None:
        """Why a reply without a call or an answer stopped, when the provider stopped it (else ``None``)."""
        if response.stop_reason == "max_tokens":  # a thinking model that spent the whole budget thinking
            return (f"the last reply was cut at the output-token limit ({self.config.max_output_tokens} tokens) "
                    "before it called a tool or answered; a larger --max-output-tokens lets it finish")
        if response.stop_reason == "content_filter":
            return (f"the provider stopped the last reply ({response.raw_stop_reason}: a refusal or its content "
                    "filter) before it called a tool or answered")
        return None

    async def run(self) -> AgentOutcome:
        outcome = await self.turns()
        if self.on_end is not None:
            await run_cpu_bound(self.end)
        if self.end_error is not None:
            raise self.end_error
        return outcome

    async def turns(self) -> AgentOutcome:
        try:
            while self.turn < self.budget.max_turns:
                if self.transcript.usage.total_tokens >= self.budget.max_total_tokens:
                    return self.outcome("no_answer", "token_budget", error="total token budget used up")
                self.maybe_notify_finish()
                outcome = await self.step()
                if outcome is not None:
                    return outcome
            return self.outcome("no_answer", "max_turns", error=f"no ehr.finish within {self.budget.max_turns} turns")
        except ContextLengthExceeded as err:
            return self.outcome("no_answer", "context_length", error=str(err), error_type=type(err).__name__)
        except PromptRefused as err:  # the same prompt gets the same refusal: no answer, not an infra error
            return self.outcome("no_answer", "content_filter", error=str(err), error_type=type(err).__name__)
        except Exception as err:  # STYLE rule 7: anything but ToolError is an infrastructure failure
            return self.outcome("infra_error", "exception", error=f"{type(err).__name__}: {err}",
                                error_type=type(err).__name__)


def _unread(call: ToolCall) -> ToolResult:
    """The result of a call the provider's name map or JSON parser could not read (never repaired)."""
    return ToolResult.failed(call.error_kind or "bad_argument", call.error or "the call could not be read")


def _first_value(arguments: dict[str, Any]) -> Any:
    return next(iter(arguments.values()), None)


def _call_record(turn: int, response: ModelResponse, total_s: float) -> CallRecord:
    """The record of a call that returned ``response`` after ``total_s`` seconds (all attempts)."""
    usage = response.usage
    return CallRecord(
        turn=turn, latency_s=response.latency_s, total_s=total_s, attempts=list(response.attempts),
        usage=usage, usage_reported=response.usage_reported,
        cost_usd=None if response.cost_usd is None else float(response.cost_usd),
        stop_reason=response.raw_stop_reason or response.stop_reason, request_id=response.request_id,
        tool_calls_source=response.tool_calls_source,
    )


def failed_call_record(turn: int, err: ModelCallError, total_s: float, priced: bool | None) -> CallRecord:
    """The record of a call that failed (every attempt); it costs 0 when the model is priced (error
    replies are not billed), else its cost is unknown."""
    return CallRecord(
        turn=turn, latency_s=0.0, total_s=total_s, status="failed", error=str(err),
        error_type=type(err).__name__, attempts=list(err.attempts), cost_usd=0.0 if priced is True else None,
    )


async def run_agent(
    model: ChatModel,
    ctx: ToolContext,
    question: Question,
    *,
    budget: AgentBudget | None = None,
    config: GenerateConfig | None = None,
    tools: Sequence[str] | None = None,
    images: Sequence[ImageRef] = (),
    linked: LinkedEvidence | None = None,
    vision: bool | None = None,
    counter: TokenCounter = ESTIMATE,
    channel: ToolChannel | None = None,
    on_end: Callable[[], None] | None = None,
) -> AgentOutcome:
    """Run ClinSeekAgent mode for one question on one episode.

    Args:
        model: any ``ChatModel`` (a provider, an offline baseline, or a wrapper adding retries,
            rate limits and a response cache).
        ctx: the tool context of this run's own sealed episode (never shared between runs).
        question: the benchmark question (its ``benchmark`` field picks the task prompt).
        budget: turn, token, tool-output and context budgets (defaults: :class:`AgentBudget`).
        config: generation settings; ``max_output_tokens`` is taken from the budget.
        tools: canonical tool names offered (default: every ``ehr.*`` tool).
        images: images attached to the task turn by reference (linked CXR images, multimodal).
        linked: what the multimodal ``<run_context>`` lists (attached images, inlined reports, imaging tools).
        vision: whether the model is sent images (default: its declared ``supports_vision``). When
            ``False``, no image is attached (task turn or tool pictures); the prompt says how many
            were not shown, and the outcome counts them in ``images_not_sent``.
        counter: what the compaction check counts new messages with (the server's tokenizer from the
            runner's pre-flight, else the conservative estimate).
        channel: where the tool calls go (default: the tools of ``ctx`` in process); its ``tool_names``
            are then the tools offered (``tools`` is not read) and its schemas what the model is given.
        on_end: blocking work to do once the run ended, before this returns (the runner closes the episode
            there): in the same hand-off to a worker thread as the last answer's reading when that reads the
            episode (a question without candidates), else in one of its own. Run once, whatever the outcome;
            an exception it raises propagates (the run's outcome is then lost, as any infrastructure error
            outside the loop); not run when the run is cancelled.

    Returns:
        The outcome; it never raises for model, provider or tool failures (those end the run as
        ``infra_error`` with the partial transcript), only on cancellation.

    Raises:
        ClinseekError: ``tools`` does not include ``ehr.finish`` (the run could never end).
    """
    offered = channel.tool_names if channel is not None else tuple(tools) if tools is not None else default_tools(ctx.limits)
    if FINISH_TOOL not in offered:
        raise ClinseekError(f"the agent loop needs {FINISH_TOOL} among the tools; got {list(offered)}")
    sees = accepts_images(model) if vision is None else vision
    run = _Run(model, ctx, question, budget or AgentBudget(), config or GenerateConfig(), offered, images, linked, sees,
               counter, channel, on_end)
    return await run.run()
