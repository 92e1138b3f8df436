"""The MCP server of sealed episodes: ``tools/list`` and ``tools/call`` answered by an ``EpisodeSession``.

The server is the SDK's low-level :class:`mcp.server.Server` with two tool handlers (and a prompt for a
benchmark question's task turn). The tools are not re-implemented here: each handler takes the episode
of the request from an :class:`EpisodeSource` and calls its :class:`~clinseek.agent.EpisodeSession`
(what ``clinseek.open_episode`` returns), so a tool answers an MCP client with the code and the text it
answers the agent loop with. The low-level server is used rather than ``MCPServer``'s decorators because
the tools already carry their JSON Schemas and validate their own arguments (a bad argument is a
``bad_argument`` result the model can read, as in the agent loop).

The patient and the cutoff are never tool arguments: the source fixes the episode (one episode for
stdio and in-memory clients; the bearer token's episode over HTTP). The EHR tools keep their optional
``subject_id`` (and ``ehr.load_ehr`` its ``timestamp``) argument of the reference, which must name the
episode's own patient and cutoff: any other value is refused (``pinned``).
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from typing import Any, Protocol

import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.shared.exceptions import MCPError

from .._threads import run_cpu_bound
from .._version import __version__
from ..agent import EpisodeSession
from ..models import ToolNameMap
from ._names import NameStyle, mcp_name_map
from ._output import OUTPUT_SCHEMA, call_result

logger = logging.getLogger(__name__)

SERVER_NAME = "clinseek"
TASK_PROMPT = "task"
"""The prompt a benchmark question's episode offers: the system and task turns an agent run starts with."""

INSTRUCTIONS = (
    "Tools over one patient's sealed EHR at one moment (the prediction time): every row was recorded "
    "before it, values not yet known then are NULL, and no tool can reach another patient or a later "
    "time. The patient and the time are fixed by this server; ehr.load_ehr shows them. Tools are "
    "read-only; SQL is one read-only query over the patient's visible tables."
)
"""The server's ``instructions`` when the episode has no task turns of its own."""


TOOL_FAILED = "the tool failed on the server (not this call's arguments); the server's log says why"
"""The one message a client gets for a tool that raised on the server: never the exception's text, which
may name the server's files or quote what the database said (the agent loop never shows it to a model)."""


@dataclass(frozen=True, slots=True)
class Served:
    """The episode a request is served from, and how: its MCP tool-name style and whether pictures go out."""

    session: EpisodeSession
    names: NameStyle = "dotted"
    pictures: bool = True


class EpisodeSource(Protocol):
    """Where each request's episode comes from (one fixed episode, or the episode of the request's token)."""

    def lease(self) -> AbstractAsyncContextManager[Served]:
        """The request's episode, held open until the block ends.

        Raises:
            MCPError: no episode can be served for this request (the client gets a protocol error).
        """
        ...


class OneEpisode:
    """One open episode served to every request (stdio, the in-memory client); the caller closes it."""

    def __init__(self, session: EpisodeSession, *, names: NameStyle = "dotted", pictures: bool = True) -> None:
        self.served = Served(session, names, pictures)

    @asynccontextmanager
    async def lease(self) -> AsyncIterator[Served]:
        if self.served.session.closed:
            raise MCPError(types.INVALID_REQUEST, "the episode this server served is closed")
        yield self.served


@dataclass(frozen=True, slots=True)
class _Listing:
    style: NameStyle
    names: ToolNameMap
    tools: list[types.Tool]


def tool_annotations(name: str) -> types.ToolAnnotations:
    """The hints of tool ``name``: every tool reads the sealed episode (or the knowledge source) and changes
    nothing, except ``ehr.finish``, which records the answer in the episode's session state."""
    family = name.split(".", 1)[0]
    if name == "ehr.finish":
        return types.ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True,
                                     open_world_hint=False)
    if family == "browser":  # the offline index or the web, as the server's knowledge source says
        return types.ToolAnnotations(read_only_hint=True, destructive_hint=False)
    return types.ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=family == "ehr",
                                 open_world_hint=False)


def episode_server(source: EpisodeSource, *, instructions: str | None = None) -> Server[Any]:
    """The MCP server of the episodes ``source`` gives: one tool per offered tool, a ``task`` prompt for a
    benchmark question.

    Args:
        source: the episode of each request (:class:`OneEpisode`, or the bearer token's episode over HTTP).
        instructions: what the server tells a client it is for (default :data:`INSTRUCTIONS`, or the
            system prompt of a single benchmark question's episode).

    Returns:
        A low-level SDK server; serve it with ``Client(server)`` in memory, :func:`serve_stdio`, or the
        streamable HTTP app of ``clinseek.mcpserver.http_app``.
    """
    listings: weakref.WeakKeyDictionary[EpisodeSession, _Listing] = weakref.WeakKeyDictionary()

    def listing(served: Served) -> _Listing:
        found = listings.get(served.session)
        if found is None or found.style != served.names:
            infos = served.session.tools()
            names = mcp_name_map(served.names, [t.name for t in infos])
            tools = [types.Tool(name=names.to_wire(t.name), description=t.description, input_schema=dict(t.parameters),
                                output_schema=OUTPUT_SCHEMA, annotations=tool_annotations(t.name)) for t in infos]
            found = listings[served.session] = _Listing(served.names, names, tools)
        return found

    async def list_tools(ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        async with source.lease() as served:
            return types.ListToolsResult(tools=listing(served).tools)

    async def call_tool(ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> types.CallToolResult:
        async with source.lease() as served:
            canonical = listing(served).names.from_wire(params.name)
            try:
                # a name the server does not list reaches the session as sent: it answers unknown_tool, as the loop does
                reply = await served.session.call_tool_async(canonical or params.name, params.arguments or {})
                pictures = served.pictures and bool(reply.result.images)
                if not pictures:
                    return call_result(reply, pictures=False)
                return await run_cpu_bound(lambda: call_result(reply, pictures=True))
            except Exception:  # an infrastructure failure: its text (paths, the database's message) stays here
                logger.exception("tool %s failed on the server", canonical or params.name)
                raise MCPError(types.INTERNAL_ERROR, TOOL_FAILED) from None

    async def list_prompts(ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None) -> types.ListPromptsResult:
        async with source.lease() as served:
            if not served.session.messages:
                return types.ListPromptsResult(prompts=[])
        return types.ListPromptsResult(prompts=[types.Prompt(
            name=TASK_PROMPT, description="The system and task turns an agent run of this benchmark question "
            "starts with (never its answer).")])

    async def get_prompt(ctx: ServerRequestContext[Any], params: types.GetPromptRequestParams) -> types.GetPromptResult:
        async with source.lease() as served:
            turns = served.session.messages
        if params.name != TASK_PROMPT or not turns:
            raise MCPError(types.INVALID_PARAMS, f"no prompt {params.name!r}"
                           f"{f'; the one prompt is {TASK_PROMPT!r}' if turns else ' (this episode has no task)'}")
        text = "\n\n".join(m.content for m in turns if m.content)
        return types.GetPromptResult(description="system and task turns",
                                     messages=[types.PromptMessage(role="user", content=types.TextContent(text=text))])

    return Server(SERVER_NAME, version=__version__, title="clinseek sealed episode",
                  instructions=instructions or INSTRUCTIONS, on_list_tools=list_tools, on_call_tool=call_tool,
                  on_list_prompts=list_prompts, on_get_prompt=get_prompt)


def session_server(session: EpisodeSession, *, names: NameStyle = "dotted", pictures: bool = True) -> Server[Any]:
    """The server of one open episode (the caller closes it): its system prompt as instructions when it
    is a benchmark question's episode."""
    system = next((m.content for m in session.messages if m.role == "system"), None)
    return episode_server(OneEpisode(session, names=names, pictures=pictures), instructions=system)
