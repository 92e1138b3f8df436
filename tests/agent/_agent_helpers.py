"""A scripted ChatModel (inspect_ai's mockllm idea) and helpers to build questions on a real store."""

from __future__ import annotations

import datetime as dt
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from decimal import Decimal
from pathlib import Path
from typing import Any

import duckdb

from clinseek.bench import Question
from clinseek.models import GenerateConfig, Message, ModelResponse, ToolCall, Usage

Step = Message | BaseException | Callable[[Sequence[Message]], Message]


def call(name: str, _id: str | None = None, **arguments: Any) -> ToolCall:
    return ToolCall(id=_id or f"c_{name}_{len(arguments)}", name=name, arguments=arguments)


def assistant(*calls: ToolCall, content: str = "") -> Message:
    return Message(role="assistant", content=content, tool_calls=list(calls))


class ScriptedModel:
    """Replies from a script: a Message, an exception to raise, or a function of the messages."""

    supports_native_tools = True

    def __init__(self, steps: Sequence[Step], *, name: str = "scripted:test", usage: Usage | None = None,
                 cost: Decimal | None = Decimal("0.001")) -> None:
        self.name = name
        self.steps: deque[Step] = deque(steps)
        self.requests: list[tuple[list[Message], list[Mapping[str, Any]], GenerateConfig | None]] = []
        self.usage = usage or Usage(input_tokens=100, output_tokens=10)
        self.cost = cost

    async def generate(self, messages: Sequence[Message], tools: Sequence[Mapping[str, Any]] = (),
                       config: GenerateConfig | None = None) -> ModelResponse:
        self.requests.append((list(messages), list(tools), config))
        step = self.steps.popleft() if self.steps else assistant(call("ehr.finish", response=[]))
        if isinstance(step, BaseException):
            raise step
        message = step(messages) if callable(step) else step
        return ModelResponse(model=self.name, message=message, usage=self.usage, cost_usd=self.cost,
                             latency_s=0.001, stop_reason="tool_calls" if message.tool_calls else "end_turn")

    async def aclose(self) -> None:
        pass


def store_admissions(store: Path, n: int = 5) -> list[tuple[int, int, dt.datetime]]:
    """(subject_id, hadm_id, admittime) of the first admissions in the store."""
    con = duckdb.connect(str(store), read_only=True)
    try:
        return con.execute(
            "SELECT subject_id, hadm_id, admittime FROM hosp.admissions ORDER BY subject_id, admittime LIMIT ?", [n]
        ).fetchall()
    finally:
        con.close()


def make_question(subject_id: int, prediction_time: dt.datetime, *, qid: str = "q1", task: str = "Inpatient_Mortality",
                  candidates: Sequence[str] = ("yes", "no"), label: Sequence[str] = ("no",),
                  task_type: str = "risk_prediction", instruction: str | None = None, **extra: Any) -> Question:
    from clinseek.bench import get_task

    spec = get_task(task)
    return Question(
        qid=qid, benchmark="clinseek-bench-text", source="clinseek-build", task=task,
        task_type=task_type, category=spec.category, subject_id=subject_id,
        prediction_time=prediction_time, policy="clinseek-text-v1", candidates=tuple(candidates),
        label=tuple(label), instruction=instruction or spec.instruction, **extra,
    )
