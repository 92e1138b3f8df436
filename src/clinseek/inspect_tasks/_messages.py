"""clinseek messages and inspect_ai chat messages, both ways, with tool names through the one name map.

clinseek names tools canonically (``ehr.run_sql_query``); inspect_ai hands tool names to providers that
allow no dots, so its tools are named by the ``inspect`` rule of ``clinseek.models.WIRE_NAME_RULES``
(``ehr__run_sql_query``). Images go to inspect as data URIs (the episode's image files are temporary);
coming back, a data URI is written to a file once (by content hash) and referenced by path, as clinseek
rows record images.
"""

from __future__ import annotations

import base64
import hashlib
import mimetypes
from collections.abc import Sequence
from pathlib import Path

from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageTool,
    ChatMessageUser,
    Content,
    ContentImage,
    ContentReasoning,
    ContentText,
)
from inspect_ai.tool import ToolCall as InspectToolCall
from inspect_ai.tool import ToolCallError

from ..models import ImageRef, Message, ToolCall, ToolNameMap

NAME_RULE = "inspect"
"""The provider key of ``clinseek.models.WIRE_NAME_RULES`` that names clinseek's tools in inspect_ai."""


def inspect_name_map(names: Sequence[str]) -> ToolNameMap:
    """The one-to-one map between canonical tool names and their inspect_ai names (``.`` → ``__``)."""
    return ToolNameMap(NAME_RULE, names)


def image_data_uri(path: str | Path, media_type: str | None = None) -> str:
    """The image file at ``path`` as a ``data:`` URI (read now: episode image files are temporary)."""
    kind = media_type or mimetypes.guess_type(str(path))[0] or "image/png"
    return f"data:{kind};base64," + base64.b64encode(Path(path).read_bytes()).decode("ascii")


def _content(text: str, images: Sequence[ImageRef]) -> str | list[Content]:
    if not images:
        return text
    parts: list[Content] = [ContentText(text=text)] if text else []
    return parts + [ContentImage(image=image_data_uri(i.path, i.media_type)) for i in images]


def to_inspect(message: Message, names: ToolNameMap) -> ChatMessage:
    """One clinseek message as inspect_ai's (tool names mapped, images inlined as data URIs)."""
    if message.role == "system":
        return ChatMessageSystem(content=message.content)
    if message.role == "user":
        return ChatMessageUser(content=_content(message.content, message.images))
    if message.role == "tool":
        error = ToolCallError("unknown", message.content) if message.is_error else None
        return ChatMessageTool(content=_content(message.content, message.images), tool_call_id=message.tool_call_id,
                               function=names.to_wire(message.name or ""), error=error)
    calls = [InspectToolCall(id=c.id, function=names.to_wire(c.name), arguments=dict(c.arguments))
             for c in message.tool_calls]
    content: str | list[Content] = message.content
    if message.reasoning:
        content = [ContentReasoning(reasoning=message.reasoning), ContentText(text=message.content)]
    return ChatMessageAssistant(content=content, tool_calls=calls or None)


def from_inspect(message: ChatMessage, names: ToolNameMap, images: ImageFiles | None = None) -> Message:
    """One inspect_ai message as clinseek's (canonical tool names; an unknown name kept verbatim).

    A tool turn with an error carries the error's message as its text (what the model was shown).
    ``images`` receives inline images (else they are dropped from the record).
    """
    pictures = _images(message.content, images)
    if isinstance(message, ChatMessageSystem):
        return Message.system(message.text)
    if isinstance(message, ChatMessageUser):
        return Message.user(message.text, pictures)
    if isinstance(message, ChatMessageTool):
        text = message.error.message if message.error is not None else message.text
        name = names.from_wire(message.function or "") or message.function
        return Message(role="tool", content=text, tool_call_id=message.tool_call_id, name=name,
                       is_error=message.error is not None, images=pictures)
    assert isinstance(message, ChatMessageAssistant)
    calls = [ToolCall(id=c.id, name=names.from_wire(c.function) or c.function, arguments=dict(c.arguments or {}),
                      error_kind="invalid_json" if c.parse_error else None, error=c.parse_error)
             for c in message.tool_calls or []]
    reasoning = [c.reasoning for c in message.content if isinstance(c, ContentReasoning)] \
        if isinstance(message.content, list) else []
    return Message(role="assistant", content=message.text, tool_calls=calls,
                   reasoning="\n".join(reasoning) if reasoning else None)


class ImageFiles:
    """Writes inline (``data:``) images of a log to files in ``folder``, one per distinct content."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def path_of(self, image: str) -> str:
        """A file path for ``image``: a path or URL as given, a data URI written to ``folder`` once."""
        if not image.startswith("data:"):
            return image
        head, _, body = image.partition(",")
        data = base64.b64decode(body)
        suffix = mimetypes.guess_extension(head[5:].split(";")[0]) or ".bin"
        path = self.folder / f"{hashlib.sha256(data).hexdigest()[:24]}{suffix}"
        if not path.exists():
            self.folder.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        return str(path)


def _images(content: str | list[Content], files: ImageFiles | None) -> list[ImageRef]:
    if isinstance(content, str) or files is None:
        return []
    return [ImageRef(path=files.path_of(c.image)) for c in content if isinstance(c, ContentImage)]
