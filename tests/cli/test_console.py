"""Tables printed to a pipe or a log are wide enough to read (rich assumes 80 columns there)."""

from __future__ import annotations

import io

from rich.table import Table

from clinseek.cli._console import PIPED_WIDTH, table_console


def test_a_piped_console_is_wide_enough_for_run_names() -> None:
    console = table_console()  # pytest captures stdout: not a terminal
    assert not console.is_terminal and console.width >= PIPED_WIDTH
    table = Table("run", "model", "n", "F1", "decision", "risk", "no ans.", "infra")
    table.add_row("clinseek-bench-text agent", "baseline:evidence", "129", "33.8", "18.2", "55.6", "44", "0")
    console.file = io.StringIO()
    console.print(table)
    assert "clinseek-bench-text agent" in console.file.getvalue() and "baseline:evidence" in console.file.getvalue()
