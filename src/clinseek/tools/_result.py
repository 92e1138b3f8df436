"""The structured result of one tool call (what the agent loop sees and records)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

_set = object.__setattr__
_TABLE_FIELDS = frozenset({"ok", "content", "data", "truncated"})


class ToolResult(BaseModel):
    """The outcome of one tool call: text for the model plus structured data for the loop.

    ``ok`` is False only for problems the model can fix (a :class:`~clinseek.errors.ToolError`);
    infrastructure failures are raised, never returned here.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    ok: bool
    """True when the tool ran; False when it refused or failed in a way the model can fix."""
    content: str
    """The text the model sees (compact rows, notices, or the error message)."""
    error_kind: str | None = None
    """Machine-readable error kind (``"bad_argument"``, ``"read_only"``, ``"timeout"``, ...) or None."""
    data: dict[str, Any] = Field(default_factory=dict)
    """Structured output: ``{"columns": [...], "rows": [[...]], "row_count": n}`` for table
    output, or a tool-specific dict (``{"answer": [...]}`` for ``ehr.finish``)."""
    truncated: bool = False
    """True when rows or characters were cut (the content then says so)."""
    elapsed_s: float = 0.0
    """Wall-clock seconds the call took, including argument validation."""
    images: tuple[str, ...] = ()
    """Paths of images the tool produced (imaging tools); never base64."""

    @classmethod
    def table(cls, content: str, data: dict[str, Any], truncated: bool) -> ToolResult:
        """A successful result (``ok=True``) of a tool's own values, built without validation: exactly what
        ``ToolResult(ok=True, content=content, data=data, truncated=truncated)`` gives (the same fields, the same
        fields set), without running pydantic's validator (a warm ``ehr.run_sql_query`` call's hot path).

        Args:
            content: the text (a ``str``).
            data: the structured output, a new ``dict`` with ``str`` keys that the result then owns.
            truncated: a ``bool``.
        """
        result = cls.__new__(cls)
        _set(result, "__dict__", {"ok": True, "content": content, "error_kind": None, "data": data,
                                  "truncated": truncated, "elapsed_s": 0.0, "images": ()})
        _set(result, "__pydantic_fields_set__", set(_TABLE_FIELDS))
        _set(result, "__pydantic_extra__", None)
        _set(result, "__pydantic_private__", None)
        return result

    @classmethod
    def failed(cls, kind: str, message: str) -> ToolResult:
        """A model-visible failure of ``kind`` with ``message``."""
        return cls(ok=False, content=f"Error ({kind}): {message}", error_kind=kind)
