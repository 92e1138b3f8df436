"""The agent loop's tools through MCP: ``clinseek run --tools mcp`` / ``mcp-stdio`` / ``mcp+URL``.

:class:`McpTransport` is a :class:`~clinseek.agent.ToolTransport` (``RunOptions.tool_transport``). For each
agent run it connects an MCP client to the run's own sealed episode, in memory (``memory``: the SDK's
in-process client on :func:`session_server` of the runner's session) or through a ``clinseek mcp serve``
subprocess that opens the same episode itself (``stdio``), and the loop's tool calls go through it. The
structured content of each result is the tool's whole :class:`~clinseek.tools.ToolResult`, so the loop
cuts, records and shows exactly what it shows on the direct path.

``external`` adds the tools of other MCP servers (streamable-HTTP URLs) beside ours, under their own
names; the run manifest records each server and the tools it offered. Their results are their text
blocks (``ok`` = not ``isError``). They are outside the sealed episode: what they show the model is not
checked against the cutoff.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import mcp_types as types
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from ..agent import EpisodeSession, Sources
from ..errors import ClinseekError, ModelError
from ..models import ToolNameMap, safe_url
from ..tools import ToolResult, tool_names, tool_schemas
from ._names import mcp_name_map
from ._output import tool_result
from ._server import session_server
from ._spec import EpisodeSpec

if TYPE_CHECKING:
    from ..bench import Question

Route = Literal["direct", "memory", "stdio"]
"""How our tools are reached: in process (only with external servers), the in-memory client, a subprocess."""

_ROUTE_KIND = {"direct": "direct", "memory": "mcp-memory", "stdio": "mcp-stdio"}


@dataclass(frozen=True, slots=True)
class _Connected:
    """One connected MCP server and the tools it lists."""

    client: Client
    tools: list[types.Tool]
    names: ToolNameMap


class McpChannel:
    """A :class:`~clinseek.agent.ToolChannel` over MCP clients: our episode's server first, then external ones.

    A name no server lists goes to our episode, which answers ``unknown_tool`` as the direct path does.
    """

    def __init__(self, ours: _Connected | EpisodeSession, external: Sequence[_Connected] = ()) -> None:
        self._ours = ours
        self._external = {name: server for server in external for name in server.names.canonical_names()}
        if isinstance(ours, EpisodeSession):
            self._schemas = tool_schemas(ours.tool_names)
        else:
            self._schemas = _schemas(ours)
        self._schemas += [s for server in external for s in _schemas(server)]
        self.tool_names = tuple(s["function"]["name"] for s in self._schemas)

    def schemas(self) -> list[dict[str, Any]]:
        return list(self._schemas)

    async def call(self, name: str, arguments: Mapping[str, Any]) -> ToolResult:
        server = self._external.get(name)
        if server is None:
            if isinstance(self._ours, EpisodeSession):
                return (await self._ours.call_tool_async(name, arguments)).result
            server = self._ours
        wire = server.names.to_wire(name) if name in server.names.canonical_names() else name
        started = time.perf_counter()  # the server sends no timing (SERVER_ONLY): the call's time here
        result = tool_result(await server.client.call_tool(wire, dict(arguments)))
        return result.model_copy(update={"elapsed_s": time.perf_counter() - started})


def _schemas(server: _Connected) -> list[dict[str, Any]]:
    by_wire = {t.name: t for t in server.tools}
    return [{"type": "function", "function": {
        "name": name, "description": by_wire[server.names.to_wire(name)].description or "",
        "parameters": by_wire[server.names.to_wire(name)].input_schema}} for name in server.names.canonical_names()]


async def _connect(stack: AsyncExitStack, client: Client) -> _Connected:
    await stack.enter_async_context(client)
    listed = await client.list_tools()
    return _Connected(client, listed.tools, mcp_name_map("dotted", [t.name for t in listed.tools]))


@dataclass(frozen=True)
class McpTransport:
    """The tool calls of every agent run through MCP (``RunOptions.tool_transport``).

    Args:
        route: ``memory`` (the SDK's in-process client on the run's own episode), ``stdio`` (a
            ``clinseek mcp serve`` subprocess per run that opens the same episode), or ``direct`` (our
            tools in process; only useful with ``external``).
        external: streamable-HTTP URLs of MCP servers whose tools are offered beside ours.
        store: the store (``stdio``: the subprocess opens the episode from it).
        sources: the run's knowledge, images and candidate tables (``stdio``: what the subprocess is
            given; the browser tools only over the offline index).
        command: how to start clinseek (``stdio``; default: this Python with ``-m clinseek``).
    """

    route: Route = "memory"
    external: tuple[str, ...] = ()
    store: Path | None = None
    sources: Sources = field(default_factory=Sources)
    command: tuple[str, ...] = (sys.executable, "-m", "clinseek")

    def __post_init__(self) -> None:
        if self.route not in _ROUTE_KIND:
            raise ClinseekError(f"tool route {self.route!r}: expected one of {sorted(_ROUTE_KIND)}")
        if self.route == "stdio" and self.store is None:
            raise ClinseekError("the mcp-stdio tool route needs the store its subprocesses open episodes from")
        if self.route == "direct" and not self.external:
            raise ClinseekError("the direct route through McpTransport needs external MCP servers")
        knowledge = self.sources.knowledge
        if self.route == "stdio" and knowledge is not None and getattr(knowledge, "backend", None) != "offline":
            raise ClinseekError("the mcp-stdio tool route serves the browser tools from the offline index only "
                                "(a knowledge configuration with backend 'offline', not an opened source or the web)")

    async def describe(self) -> dict[str, Any]:
        """``{"kind": "mcp-memory" | "mcp-stdio" | "direct", "external": [{"url", "tools"}]}``.

        Raises:
            ClinseekError: an external server does not answer, or lists a tool name a model cannot be
                offered (not dotted identifiers), the name of a clinseek tool, or a name two servers share.
        """
        external = []
        seen: dict[str, str] = dict.fromkeys(tool_names(), "clinseek")
        for url in self.external:
            try:
                async with AsyncExitStack() as stack:
                    server = await _connect(stack, Client(url))
            except ModelError as err:
                raise ClinseekError(f"MCP server {safe_url(url)}: {err}") from None
            except Exception as err:  # the SDK's connection errors have no common base
                raise ClinseekError(f"MCP server {safe_url(url)} cannot be used: {type(err).__name__}: {err}") from None
            names = server.names.canonical_names()
            for name in names:
                if name in seen:
                    raise ClinseekError(f"tool {name!r} of MCP server {safe_url(url)} is also offered by {seen[name]}")
                seen[name] = safe_url(url)
            external.append({"url": safe_url(url), "tools": names})
        return {"kind": _ROUTE_KIND[self.route], "external": external}

    @asynccontextmanager
    async def connect(self, session: EpisodeSession, question: Question) -> AsyncIterator[McpChannel]:
        """A channel on the run's own ``session`` (and the external servers), open for the block.

        Raises:
            ClinseekError: the subprocess or an external server cannot be reached, or an external tool
                has the name of one of ours.
        """
        async with AsyncExitStack() as stack:
            ours: _Connected | EpisodeSession
            if self.route == "memory":
                ours = await _connect(stack, Client(session_server(session, pictures=False)))
            elif self.route == "stdio":
                ours = await self._subprocess(stack, session, question)
            else:
                ours = session
            external = [await _connect(stack, Client(url)) for url in self.external]
            clash = sorted(set(session.tool_names) & {n for s in external for n in s.names.canonical_names()})
            if not clash:
                yield McpChannel(ours, external)
                return
        # raised once the clients are closed (inside their task groups it would reach the row as an ExceptionGroup)
        raise ClinseekError(f"external MCP tools {clash} have the names of the episode's own tools")

    async def _subprocess(self, stack: AsyncExitStack, session: EpisodeSession, question: Question) -> _Connected:
        """``clinseek mcp serve --spec FILE`` on the question's episode, with the session's tools and limits."""
        work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="clinseek_mcp_")))
        spec = self._spec(session, question)
        (work / "spec.json").write_text(spec.model_dump_json(), encoding="utf-8")
        errlog = stack.enter_context(open(work / "stderr.log", "w+", encoding="utf-8"))
        env = {k: v for k, v in os.environ.items() if k.startswith("CLINSEEK_")}
        params = StdioServerParameters(command=self.command[0], args=[*self.command[1:], "mcp", "serve", "--spec",
                                                                      str(work / "spec.json")], env=env)
        try:
            return await _connect(stack, Client(stdio_client(params, errlog=errlog)))
        except Exception as err:
            errlog.seek(0)
            tail = errlog.read()[-2000:].strip()
            raise ClinseekError(f"clinseek mcp serve for {question.qid} did not start: {type(err).__name__}: {err}"
                                f"{f'; its stderr: {tail}' if tail else ''}") from None

    def _spec(self, session: EpisodeSession, question: Question) -> EpisodeSpec:
        assert self.store is not None
        knowledge = self.sources.knowledge
        offline = knowledge is not None and any(t.startswith("browser.") for t in session.tool_names)
        return EpisodeSpec(
            store=self.store, question=json.loads(question.model_dump_json(exclude={"label", "label_aliases",
                                                                                     "label_raw"})) | {"label": []},
            tools=session.tool_names, limits=session.context.limits.as_dict(), pictures=False,
            knowledge="offline" if offline else "off",
            knowledge_cache=getattr(knowledge, "cache_dir", None) if offline else None,
            docs=tuple(getattr(knowledge, "folders", ())) if offline else (),
            cxr_root=self.sources.cxr_root, imaging_weights=self.sources.imaging.weights_dir,
            imaging_device=self.sources.imaging.device, candidate_tables=self.sources.candidate_tables)
