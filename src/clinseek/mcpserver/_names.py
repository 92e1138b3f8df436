"""Tool names on the MCP wire: the reference's dotted names, or the one documented map for clients that refuse dots.

The MCP specification allows ``A-Z a-z 0-9 _ - .`` in tool names (1-128 characters), so the server
lists the canonical names (``ehr.run_sql_query``) by default: the ``dotted`` style. Some clients check
names against the Anthropic API's ``^[a-zA-Z0-9_-]{1,64}$`` and refuse the whole server when one
name has a dot (Claude Desktop). For them the ``safe`` style spells every ``.`` as ``__``
(``ehr__run_sql_query``): the wire-name map the models layer uses for OpenAI and Anthropic
(:class:`clinseek.models.ToolNameMap`), one to one and decoded through its inverse, never by repair.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Literal

from ..models import ToolNameMap

NameStyle = Literal["dotted", "safe"]
"""``dotted``: the canonical names; ``safe``: ``.`` spelt ``__`` (clients that allow no dot)."""

NAME_STYLES: Mapping[NameStyle, str] = {"dotted": "text", "safe": "anthropic"}
"""The provider of :data:`clinseek.models.WIRE_NAME_RULES` whose rule each style uses."""


def mcp_name_map(style: NameStyle, names: Iterable[str]) -> ToolNameMap:
    """The one-to-one map between canonical tool names and their MCP names in ``style``.

    Raises:
        ModelError: a name the style cannot spell, or two names that would share an MCP name.
    """
    return ToolNameMap(NAME_STYLES[style], names)
