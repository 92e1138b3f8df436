"""clinseek's tools as inspect_ai tools: the same episode, names, descriptions, schemas, texts and refusals.

Each tool is an inspect_ai ``ToolDef`` that calls :meth:`clinseek.agent.EpisodeSession.call_tool_async`
on the sample's sealed episode. The model is shown the reply's ``text`` (what clinseek's agent loop shows:
cut at ``AgentBudget.max_tool_chars`` with its notice; inspect's own output cap is off for these tools).
A refusal (another patient, a later time, SQL that writes, a tool not offered, a bad argument) raises
inspect's ``ToolError`` with that same text, so the model sees it as a tool error and the sample goes on.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from inspect_ai.model import Content, ContentImage, ContentText
from inspect_ai.tool import ToolDef, ToolError, ToolParams

from ..agent import EpisodeSession, ToolReply
from ..models import ToolNameMap
from ._messages import image_data_uri, inspect_name_map

ReplyHook = Callable[[ToolReply], None]
"""Called with every reply before the model sees it (the solver reads ``ehr.finish`` through it)."""


def episode_tools(session: EpisodeSession, *, on_reply: ReplyHook | None = None,
                  names: ToolNameMap | None = None) -> list[ToolDef]:
    """The tools ``session`` offers, as inspect_ai tool definitions, in the session's order.

    Args:
        session: an open episode session (``clinseek.open_question_episode_async``); the tools call it.
        on_reply: called with each reply (refusals included) before the model sees it.
        names: the name map (default: :func:`~clinseek.inspect_tasks.inspect_name_map` of the session's tools).

    Returns:
        One ``ToolDef`` per offered tool: name ``ehr__run_sql_query`` for ``ehr.run_sql_query``, the
        description and JSON Schema of ``session.tools()``; several calls of one turn may run at once.
    """
    names = names or inspect_name_map(session.tool_names)
    return [_tool_def(session, info.name, names.to_wire(info.name), info.description, info.parameters, on_reply)
            for info in session.tools()]


def _tool_def(session: EpisodeSession, canonical: str, name: str, description: str, parameters: Mapping[str, Any],
              on_reply: ReplyHook | None) -> ToolDef:
    async def execute(**arguments: Any) -> str | list[Content]:
        reply = await session.call_tool_async(canonical, arguments)
        if on_reply is not None:
            on_reply(reply)
        if not reply.ok:
            raise ToolError(reply.text)
        return tool_output(reply, vision=session.vision)

    return ToolDef(execute, name=name, description=description, parameters=ToolParams.model_validate(parameters),
                   parallel=True, max_output=0)


def tool_output(reply: ToolReply, *, vision: bool) -> str | list[Content]:
    """What an inspect tool returns for a successful ``reply``: its text, and the pictures a tool made
    when the model is shown images (else the text already says how many were not shown)."""
    if not vision or not reply.result.images:
        return reply.text
    return [ContentText(text=reply.text), *(ContentImage(image=image_data_uri(p)) for p in reply.result.images)]
