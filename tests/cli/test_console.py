"""Tables printed to a pipe or a log are wide enough to read (rich assumes 80 columns there); commands
printed to copy start the way the user called clinseek."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.table import Table

from clinseek.cli._console import PIPED_WIDTH, program_name, table_console


def test_a_piped_console_is_wide_enough_for_run_names() -> None:
    console = table_console()  # pytest captures stdout: not a terminal
    assert not console.is_terminal and console.width >= PIPED_WIDTH
    table = Table("run", "model", "n", "F1", "decision", "risk", "no ans.", "infra")
    table.add_row("clinseek-bench-text agent", "baseline:evidence", "129", "33.8", "18.2", "55.6", "44", "0")
    console.file = io.StringIO()
    console.print(table)
    assert "clinseek-bench-text agent" in console.file.getvalue() and "baseline:evidence" in console.file.getvalue()


def test_printed_commands_start_the_way_the_user_called_clinseek(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    venv_bin = tmp_path / ".venv" / "bin"
    venv_bin.mkdir(parents=True)
    script = venv_bin / "clinseek"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # the venv is not activated
    assert program_name(".venv/bin/clinseek") == ".venv/bin/clinseek"
    monkeypatch.setenv("PATH", f"{venv_bin}:/usr/bin:/bin")  # activated: the bare name is this script
    assert program_name(str(script)) == "clinseek"
    assert program_name("/usr/lib/python3/dist-packages/pytest") == "clinseek"  # python -m, tests
