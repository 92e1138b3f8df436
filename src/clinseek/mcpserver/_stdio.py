"""``clinseek mcp serve``: one sealed episode over stdio, for a client that starts the server itself."""

from __future__ import annotations

from mcp.server.stdio import stdio_server

from ._server import session_server
from ._spec import EpisodeSpec, open_spec


async def serve_stdio(spec: EpisodeSpec) -> None:
    """Open the episode of ``spec`` and serve it on stdin/stdout until the client closes stdin.

    The episode is opened once the SDK holds stdout, so nothing printed while it opens can reach the
    wire (the SDK sends stray output to stderr). It is closed when the client goes.

    Raises:
        ClinseekError: the episode cannot be opened (the client sees the server exit).
    """
    async with stdio_server() as (read, write):
        async with await open_spec(spec) as session:
            server = session_server(session, names=spec.tool_names, pictures=spec.pictures)
            await server.run(read, write, server.create_initialization_options())
