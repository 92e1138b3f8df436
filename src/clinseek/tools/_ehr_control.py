"""``ehr.think`` and ``ehr.finish``: recorded locally, no data access."""

from __future__ import annotations

from ._context import ToolContext
from ._registry import tool
from ._result import ToolResult


@tool("ehr.think")
async def think(ctx: ToolContext, response: str) -> ToolResult:
    """Write down reasoning or a plan; nothing is looked up. The thought is kept in the trajectory.

    Args:
        response: the thought.
    """
    ctx.state.setdefault("thoughts", []).append(response)
    return ToolResult(ok=True, content="Thought recorded.", data={"thought": response})


@tool("ehr.finish")
async def finish(ctx: ToolContext, response: list[str] | str) -> ToolResult:
    """Give the final answer and end the episode.

    Args:
        response: the answer as a list of strings (e.g. ["Yes"], or several candidates for a
            multi-label question); a single string counts as a one-item list.
    """
    answer = [response] if isinstance(response, str) else [str(a) for a in response]
    ctx.state["answer"] = answer
    return ToolResult(ok=True, content="Final answer recorded.", data={"answer": answer})
