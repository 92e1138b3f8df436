"""Where an agent run's tool calls go: straight to the episode's tools, or through a transport (MCP).

The agent loop calls the offered tools through a :class:`ToolChannel`. Without one it calls them in
process (:func:`~clinseek.agent._toolturn.call_offered`); a :class:`ToolTransport` (set on
``RunOptions.tool_transport``) gives each question run a channel over another route, such as an MCP
client of the question's own sealed episode (``clinseek.mcpserver.McpTransport``). A channel returns the
same :class:`~clinseek.tools.ToolResult` the direct path gives, so the loop cuts, records and shows it
the same way and a trajectory does not depend on the route.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from ..tools import ToolResult

if TYPE_CHECKING:
    from ..bench import Question
    from ._session import EpisodeSession


@runtime_checkable
class ToolChannel(Protocol):
    """The tools one agent run is offered, and the route its calls take.

    Attributes:
        tool_names: canonical names of the offered tools, in the order their schemas are listed.
    """

    tool_names: tuple[str, ...]

    def schemas(self) -> list[dict[str, Any]]:
        """OpenAI-style function schemas (``{"type": "function", "function": {name, description,
        parameters}}``) with canonical names, in :attr:`tool_names` order: what the model is offered."""
        ...

    async def call(self, name: str, arguments: Mapping[str, Any]) -> ToolResult:
        """Run tool ``name``; a name that is not offered is an ``unknown_tool`` result, a refusal a
        result with ``ok`` False.

        Raises:
            Exception: an infrastructure failure (the run then ends as ``infra_error``).
        """
        ...


@runtime_checkable
class ToolTransport(Protocol):
    """Opens a :class:`ToolChannel` on each agent run's sealed episode (``RunOptions.tool_transport``)."""

    async def describe(self) -> dict[str, Any]:
        """What the run manifest records about the route (and the configuration hash reads): its
        ``kind`` and any tools offered beside the episode's (an external server's names and URL).

        Raises:
            ClinseekError: the route cannot be used (an external server that does not answer).
        """
        ...

    def connect(self, session: EpisodeSession, question: Question) -> AbstractAsyncContextManager[ToolChannel]:
        """A channel on ``session`` (the run's own episode, opened by the runner) for ``question``."""
        ...
