"""Deterministic offline models and question sets for runner tests (also run in a killed subprocess)."""

from __future__ import annotations

import datetime as dt
import hashlib
import random
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

import anyio

from clinseek.bench import Question
from clinseek.models import GenerateConfig, Message, ModelResponse, ProviderUnavailable, RateLimited, Usage

SECRET = "sk-runner-test-SECRET-9f8e7d6c5b4a"
"""The API key runner tests put in the environment; no file of a run may contain it."""


def curated_questions(n: int, *, prefix: str = "q") -> list[Question]:
    """``n`` yes/no questions that carry their curated package (no episode needed in curated mode)."""
    when = dt.datetime(2150, 1, 1, 8, 0)
    return [
        Question(
            qid=f"{prefix}{i:04d}", benchmark="clinseek-bench-text", source="clinseek-build",
            task="Inpatient_Mortality", task_type="risk_prediction", category="mortality",
            subject_id=1000 + i, prediction_time=when, policy="clinseek-text-v1", candidates=("yes", "no"),
            label=("yes" if i % 3 == 0 else "no",), curated_text=f"## Patient {i}\n- note: case {i}",
            instruction="Please predict whether the patient will die during hospitalization.",
        )
        for i in range(n)
    ]


def expected_answer(text: str) -> str:
    """The deterministic answer of :class:`HashModel` for a prompt."""
    return "yes" if hashlib.sha256(text.encode()).digest()[0] % 2 else "no"


class HashModel:
    """Answers ``<answer>yes|no</answer>`` from a hash of the prompt, after ``delay_s``; injects failures.

    ``fail_rate`` of calls raise (a 429, a 503, or an unexpected RuntimeError), chosen by a seeded RNG.
    """

    supports_native_tools = True

    def __init__(self, *, delay_s: float = 0.0, fail_rate: float = 0.0, seed: int = 1, name: str = "fake:hash") -> None:
        self.name = name
        self.delay_s = delay_s
        self.fail_rate = fail_rate
        self.rng = random.Random(seed)
        self.calls = 0
        self.failures = 0

    async def generate(self, messages: Sequence[Message], tools: Sequence[Mapping[str, Any]] = (),
                       config: GenerateConfig | None = None) -> ModelResponse:
        self.calls += 1
        if self.delay_s:
            await anyio.sleep(self.delay_s)
        roll = self.rng.random()
        if roll < self.fail_rate:
            self.failures += 1
            kind = self.rng.randrange(3)
            if kind == 0:
                raise RateLimited("throttled", model=self.name, retry_after_s=0.0)
            if kind == 1:
                raise ProviderUnavailable("overloaded", model=self.name, status_code=503)
            raise RuntimeError("injected harness failure")
        answer = expected_answer(messages[-1].content)
        message = Message(role="assistant", content=f"<answer>\n{answer}\n</answer>")
        return ModelResponse(model=self.name, message=message, usage=Usage(input_tokens=50, output_tokens=5),
                             cost_usd=Decimal("0.0001"), latency_s=self.delay_s, stop_reason="end_turn")

    async def aclose(self) -> None:
        pass
