"""One scripted policy, as inspect's mock model (``mockllm``) and as a clinseek ``ChatModel``.

Both read the task turn the same way (``clinseek.agent.read_prompt``) and answer the same items, so an
inspect eval and ``clinseek.run`` give the same answers: agent mode runs :data:`SCRIPT` (EHR tools,
two calls a turn), then ``ehr.finish``; curated mode replies with one ``<answer>`` block. ``steps``
replaces the agent's first turns with given tool calls (the leakage attacks).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clinseek.agent import read_prompt
from clinseek.models import GenerateConfig, Message, ModelResponse, ToolCall, Usage

if TYPE_CHECKING:  # inspect_ai is imported when a test runs, not when tests are collected
    from inspect_ai.model import ChatMessage, ModelOutput

SQL = "SELECT itemid, charttime, valuenum FROM hosp.labevents ORDER BY charttime DESC, itemid LIMIT 5"
Step = list[tuple[str, dict[str, Any]]]
"""One assistant turn: (canonical tool name, arguments) calls."""
SCRIPT: list[Step] = [
    [("ehr.load_ehr", {}), ("ehr.run_sql_query", {"sql_query": SQL})],  # two calls of one turn run at once
    [("ehr.get_latest_records", {"table_name": "hosp.labevents"}), ("ehr.get_table_names", {})],
]
"""The agent's turns before ``ehr.finish``."""


COMMON_TESTS = ("Sodium", "Potassium", "Glucose")


def answer_for(task_turn: str) -> list[str]:
    """"no" to yes/no questions; else the common lab tests among the candidates and the first non-empty
    candidate (partly right); else "no" (wrong): right, partly right and wrong answers all occur."""
    facts = read_prompt([Message.user(task_turn)])
    if facts.is_yes_no:
        return ["no"]
    named = [c for c in facts.candidates if c.strip()]
    return [c for c in named if c in COMMON_TESTS] + named[:1] or ["no"]


def agent_step(turn: int, task_turn: str, steps: Sequence[Step]) -> Step:
    """The calls of agent turn ``turn`` (0-based)."""
    script = [*steps] if steps else SCRIPT
    if turn < len(script):
        return script[turn]
    return [("ehr.finish", {"response": answer_for(task_turn)})]


def curated_reply(task_turn: str) -> str:
    return "<answer>\n" + "\n".join(answer_for(task_turn)) + "\n</answer>"


def mock_outputs(steps: Sequence[Step] = ()) -> Callable[..., ModelOutput]:
    """``custom_outputs`` for ``get_model("mockllm/model", ...)``: usage set (offline: no tokenizer)."""
    from inspect_ai.model import ChatMessageAssistant, ChatMessageUser, ModelOutput, ModelUsage
    from inspect_ai.tool import ToolCall as InspectToolCall

    def outputs(input: list[ChatMessage], tools: list[Any], tool_choice: Any, config: Any) -> ModelOutput:
        task_turn = next(m.text for m in input if isinstance(m, ChatMessageUser))
        usage = ModelUsage(input_tokens=100, output_tokens=10, total_tokens=110)
        if not tools:
            output = ModelOutput.from_content("mockllm/model", curated_reply(task_turn))
        else:
            turn = sum(isinstance(m, ChatMessageAssistant) for m in input)
            calls = [InspectToolCall(id=f"call_{turn}_{i}", function=name.replace(".", "__"), arguments=args)
                     for i, (name, args) in enumerate(agent_step(turn, task_turn, steps))]
            output = ModelOutput.from_message(ChatMessageAssistant(content="", tool_calls=calls, model="mockllm/model"),
                                              stop_reason="tool_calls")
        output.usage = usage
        return output

    return outputs


class PolicyModel:
    """The same policy as a clinseek ``ChatModel`` for ``clinseek.run``."""

    supports_native_tools = True
    supports_vision = True

    def __init__(self, steps: Sequence[Step] = ()) -> None:
        self.name = "scripted:policy"
        self.steps = steps

    async def generate(self, messages: Sequence[Message], tools: Sequence[Mapping[str, Any]] = (),
                       config: GenerateConfig | None = None) -> ModelResponse:
        task_turn = next(m.content for m in messages if m.role == "user")
        if not tools:
            message = Message(role="assistant", content=curated_reply(task_turn))
        else:
            turn = sum(m.role == "assistant" for m in messages)
            calls = [ToolCall(id=f"call_{turn}_{i}", name=name, arguments=args)
                     for i, (name, args) in enumerate(agent_step(turn, task_turn, self.steps))]
            message = Message(role="assistant", tool_calls=calls)
        return ModelResponse(model=self.name, message=message, usage=Usage(input_tokens=100, output_tokens=10),
                             latency_s=0.001, stop_reason="tool_calls" if message.tool_calls else "end_turn")

    async def aclose(self) -> None:
        pass


@dataclass(frozen=True)
class MockRuns:
    """Where the session's mock evals and runner runs are."""

    logs: dict[tuple[str, str], Path]
    """(kind, mode) -> the .eval log."""
    inspect_runs: Path
    """The logs imported (``clinseek import-inspect``)."""
    clinseek_runs: Path
    """``clinseek.run`` of the same policy."""
