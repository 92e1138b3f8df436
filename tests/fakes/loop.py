"""The agent loop run against a loopback server, as the loop tests call it."""

from __future__ import annotations

from typing import Any

import anyio

from clinseek.agent import AgentBudget, AgentOutcome, run_agent
from clinseek.models import get_model
from clinseek.tools import ToolContext


def run_agent_at(url: str, ctx: ToolContext, question: Any, *, model: str = "openai:fake-model",
                 budget: AgentBudget | None = None) -> AgentOutcome:
    """``run_agent`` of ``question`` on ``ctx`` with the provider ``model`` at ``url`` (closed afterwards)."""

    async def go() -> AgentOutcome:
        chat = get_model(model, base_url=url)
        try:
            return await run_agent(chat, ctx, question, budget=budget)
        finally:
            await chat.aclose()

    return anyio.run(go)
