"""A rich console for printing tables: as wide as the terminal, or wide enough when output is piped."""

from __future__ import annotations

from rich.console import Console

PIPED_WIDTH = 160
"""Columns when stdout is not a terminal (rich would assume 80 and cut run names and figures)."""


def table_console() -> Console:
    """The terminal's console; for logs and pipes (no terminal) one :data:`PIPED_WIDTH` columns wide."""
    console = Console()
    return console if console.is_terminal else Console(width=max(console.width, PIPED_WIDTH))
