"""A rich console for printing tables: as wide as the terminal, or wide enough when output is piped."""

from __future__ import annotations

import shlex
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

PIPED_WIDTH = 160
"""Columns when stdout is not a terminal (rich would assume 80 and cut run names and figures)."""


def table_console() -> Console:
    """The terminal's console; for logs and pipes (no terminal) one :data:`PIPED_WIDTH` columns wide."""
    from rich.console import Console

    console = Console()
    return console if console.is_terminal else Console(width=max(console.width, PIPED_WIDTH))


def program_name(argv0: str | None = None) -> str:
    """How the user called clinseek, for commands printed to copy: ``clinseek`` when that name on PATH
    is this very script, else the path typed (``.venv/bin/clinseek`` from a venv that is not
    activated); ``clinseek`` when not run as the console script (``python -m``, tests)."""
    script = Path(argv0 if argv0 is not None else sys.argv[0])
    if script.name != "clinseek":
        return "clinseek"
    found = shutil.which("clinseek")
    if found is not None and script.exists() and Path(found).resolve() == script.resolve():
        return "clinseek"
    return shlex.quote(str(script))
