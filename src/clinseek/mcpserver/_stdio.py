"""``clinseek mcp serve``: one sealed episode over stdio, for a client that starts the server itself."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import sys
from collections.abc import Iterator
from typing import Any

import anyio
from mcp.server.stdio import stdio_server

from ._server import session_server
from ._spec import EpisodeSpec, open_spec

_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _scrub(value: Any) -> Any:
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [_scrub(v) for v in value]
    if isinstance(value, dict):
        return {_scrub(k): _scrub(v) for k, v in value.items()}
    return value


def repair_line(line: str) -> str:
    """A JSON-RPC line with every lone UTF-16 surrogate escape (``"\\ud800"`` without its pair) read as U+FFFD.

    JavaScript's ``JSON.stringify`` writes a string holding a lone surrogate (a model's cut emoji) with
    such an escape, and Python's ``json`` reads it, but the SDK's parser refuses the line and drops the
    request without an answer: the client would wait for ever. Lines without a surrogate escape, and
    lines that are not JSON, are returned as they are (a pair stays its character).
    """
    if "\\u" not in line or not _SURROGATE_ESCAPE.search(line):
        return line
    try:
        message = json.loads(line)
        repaired = json.dumps(_scrub(message), ensure_ascii=False)
    except (ValueError, RecursionError):
        return line
    return repaired + ("\n" if line.endswith("\n") else "")


class _StdinLines(io.TextIOWrapper):
    """stdin as UTF-8 text (bad bytes replaced, as the SDK reads it) whose lines go through :func:`repair_line`;
    closing it leaves the process's stdin open."""

    def readline(self, size: int | None = -1, /) -> str:  # type: ignore[override]
        return repair_line(super().readline(-1 if size is None else size))

    def close(self) -> None:
        try:
            self.detach()
        except ValueError:
            pass


@contextlib.contextmanager
def _stdout_to_stderr() -> Iterator[None]:
    """Send what is written to stdout (by Python or by native code on file descriptor 1) to stderr for the
    block: stdout is the wire, and nothing but the server's replies may reach it."""
    sys.stdout.flush()
    try:
        saved = os.dup(1)
    except OSError:  # no stdout at all: nothing can reach the wire
        yield
        return
    try:
        os.dup2(2, 1)
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


async def serve_stdio(spec: EpisodeSpec) -> None:
    """Open the episode of ``spec`` and serve it on stdin/stdout until the client closes stdin.

    The episode is opened before the server starts (with stdout sent to stderr meanwhile, so nothing
    printed while it opens can reach the wire): an episode that cannot be opened (an unknown patient,
    question, tool or policy, a store that is not one) raises its ``ClinseekError`` as it is, before a
    byte is read or written, and ``clinseek mcp serve`` says it in one line and exits with code 2. The
    episode is closed when the client goes. A request line with a lone surrogate escape is answered
    (:func:`repair_line`), not dropped.

    Raises:
        ClinseekError: the episode cannot be opened (the client sees the server exit).
    """
    with _stdout_to_stderr():
        session = await open_spec(spec)
    async with session:
        stdin = anyio.wrap_file(_StdinLines(sys.stdin.buffer, encoding="utf-8", errors="replace"))
        async with stdio_server(stdin=stdin) as (read, write):
            server = session_server(session, names=spec.tool_names, pictures=spec.pictures)
            await server.run(read, write, server.create_initialization_options())
