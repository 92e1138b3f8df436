"""One tool reply as an MCP tool result, and back: the text the agent loop shows, the structured result beside it.

A call's ``CallToolResult`` holds:

- ``content``: the text the agent loop shows the model for the call (``ToolReply.text``: the output cut
  at ``AgentBudget.max_tool_chars`` with its notice), then the pictures the tool made as image blocks
  when the server sends pictures;
- ``structured_content``: the :class:`~clinseek.tools.ToolResult` as JSON (``ok``, ``content``
  uncut, ``error_kind``, ``data`` with ``columns``/``rows``/``row_count`` for tables, ``truncated``,
  ``images``), valid against :data:`OUTPUT_SCHEMA`, the tools' ``outputSchema``. Never ``elapsed_s``: how
  long a call took on the server reflects work on rows the key may not see (a table's first load reads
  the patient's later rows on the store to filter them out), so it is not sent (:data:`SERVER_ONLY`);
- ``is_error``: True for every refusal (``ok`` False), so a client shows the model a tool error it can read.
"""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import mcp_types as types

from ..agent import ToolReply
from ..tools import ToolResult

OUTPUT_SCHEMA: dict[str, Any] = ToolResult.model_json_schema(mode="serialization")
"""JSON Schema of ``structured_content``: a :class:`~clinseek.tools.ToolResult` in JSON."""

SERVER_ONLY: set[str] = {"elapsed_s"}
"""ToolResult fields kept out of ``structured_content`` (a read-back :class:`ToolResult` has their defaults)."""

_MIME = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".webp": "image/webp", ".gif": "image/gif"}


def call_result(reply: ToolReply, *, pictures: bool) -> types.CallToolResult:
    """The MCP result of ``reply``; with ``pictures``, each picture file the tool made (PNG/JPEG/WebP/GIF)
    follows the text as a base64 image block (blocking: reads the files)."""
    content: list[types.ContentBlock] = [types.TextContent(text=reply.text)]
    if pictures:
        content += [_image(Path(p)) for p in reply.result.images if Path(p).suffix.lower() in _MIME]
    return types.CallToolResult(content=content, structured_content=reply.result.model_dump(mode="json", exclude=SERVER_ONLY),
                                is_error=not reply.ok)


def _image(path: Path) -> types.ImageContent:
    return types.ImageContent(data=base64.b64encode(path.read_bytes()).decode("ascii"), mime_type=_MIME[path.suffix.lower()])


def tool_result(result: types.CallToolResult) -> ToolResult:
    """The :class:`~clinseek.tools.ToolResult` an MCP result carries: its structured content when it is one
    (a clinseek server), else its text blocks joined by newlines (``ok`` = not ``is_error``; an error's
    ``error_kind`` is ``tool_error``). Values in ``data`` are what JSON holds (a time is an ISO string); ``elapsed_s``
    is 0 (a clinseek server sends no timing: the caller measures the call)."""
    structured = result.structured_content
    if isinstance(structured, dict) and {"ok", "content"} <= structured.keys():
        return ToolResult.model_validate(structured)
    text = "\n".join(block.text for block in result.content if isinstance(block, types.TextContent))
    others = [block.type for block in result.content if not isinstance(block, types.TextContent)]
    if others:
        text += f"\n[{len(others)} non-text block(s) not shown: {', '.join(sorted(set(others)))}]"
    return ToolResult(ok=not result.is_error, content=text, error_kind="tool_error" if result.is_error else None,
                      data={"structured": structured} if structured is not None else {})
