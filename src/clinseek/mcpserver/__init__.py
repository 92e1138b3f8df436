"""An MCP server over sealed episodes, for any MCP client and for the agent loop itself.

Needs the ``[mcp]`` extra (the MCP Python SDK 2.x). ``clinseek mcp serve`` serves one sealed episode over
stdio (:func:`serve_stdio`); ``clinseek mcp http`` serves many behind one streamable-HTTP endpoint, each
selected by its own bearer token (:func:`http_app`, :func:`mint_token`); :class:`McpTransport` runs an
agent run's tool calls through an MCP client (``clinseek run --tools mcp``). Every tool call goes to
the episode's :class:`~clinseek.agent.EpisodeSession` (what ``clinseek.open_episode`` returns): the
server adds a wire, never a tool. docs/mcp.md describes the commands, client configuration and what a
client can and cannot see.

Each name loads its module on first use, so a stdio server does not import the HTTP stack.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ..errors import import_optional

import_optional("mcp", "the MCP server (clinseek mcp, --tools mcp)", "mcp")

if TYPE_CHECKING:
    from ._http import HttpSettings, RateLimiter, TokenEpisodes, http_app, serve_http
    from ._names import NAME_STYLES, NameStyle, mcp_name_map
    from ._output import OUTPUT_SCHEMA, call_result, tool_result
    from ._pool import EpisodePool, PoolBusy
    from ._server import (
        INSTRUCTIONS,
        TASK_PROMPT,
        EpisodeSource,
        OneEpisode,
        Served,
        episode_server,
        session_server,
        tool_annotations,
    )
    from ._spec import EpisodeSpec, check_spec, open_spec
    from ._stdio import serve_stdio
    from ._tokens import (
        TOKEN_PREFIX,
        TokenFile,
        TokenRecord,
        TokenStore,
        describe_record,
        mint_token,
        parse_duration,
        read_token_file,
        revoke_token,
    )
    from ._transport import McpChannel, McpTransport

_LAZY: dict[str, str] = {
    **dict.fromkeys(("HttpSettings", "RateLimiter", "TokenEpisodes", "http_app", "serve_http"), "_http"),
    **dict.fromkeys(("NAME_STYLES", "NameStyle", "mcp_name_map"), "_names"),
    **dict.fromkeys(("OUTPUT_SCHEMA", "call_result", "tool_result"), "_output"),
    **dict.fromkeys(("EpisodePool", "PoolBusy"), "_pool"),
    **dict.fromkeys(("INSTRUCTIONS", "TASK_PROMPT", "EpisodeSource", "OneEpisode", "Served", "tool_annotations",
                     "episode_server", "session_server"), "_server"),
    **dict.fromkeys(("EpisodeSpec", "check_spec", "open_spec"), "_spec"),
    "serve_stdio": "_stdio",
    **dict.fromkeys(("TOKEN_PREFIX", "TokenFile", "TokenRecord", "TokenStore", "describe_record", "mint_token",
                     "parse_duration", "read_token_file", "revoke_token"), "_tokens"),
    **dict.fromkeys(("McpChannel", "McpTransport"), "_transport"),
}
"""Each public name and the module (of this package) it is loaded from on first use."""


def __getattr__(name: str) -> Any:
    """Load a public name from its module on first use (PEP 562)."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'clinseek.mcpserver' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


__all__ = [
    "INSTRUCTIONS",
    "NAME_STYLES",
    "OUTPUT_SCHEMA",
    "TASK_PROMPT",
    "TOKEN_PREFIX",
    "EpisodePool",
    "EpisodeSource",
    "EpisodeSpec",
    "HttpSettings",
    "McpChannel",
    "McpTransport",
    "NameStyle",
    "OneEpisode",
    "PoolBusy",
    "RateLimiter",
    "Served",
    "TokenEpisodes",
    "TokenFile",
    "TokenRecord",
    "TokenStore",
    "call_result",
    "check_spec",
    "describe_record",
    "episode_server",
    "http_app",
    "mcp_name_map",
    "mint_token",
    "open_spec",
    "parse_duration",
    "read_token_file",
    "revoke_token",
    "serve_http",
    "serve_stdio",
    "session_server",
    "tool_annotations",
    "tool_result",
]
