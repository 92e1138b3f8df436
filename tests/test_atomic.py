"""clinseek._atomic: a text file is written whole or not at all."""

from __future__ import annotations

from pathlib import Path

import pytest

from clinseek._atomic import write_text_atomic


def test_writes_then_replaces(tmp_path: Path) -> None:
    target = tmp_path / "summary.md"
    write_text_atomic(target, "old\n")
    write_text_atomic(target, "new ✓\n")
    assert target.read_text(encoding="utf-8") == "new ✓\n"
    assert [p.name for p in tmp_path.iterdir()] == ["summary.md"]


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "summary.md"
    target.write_text("old\n", encoding="utf-8")
    with pytest.raises(TypeError):
        write_text_atomic(target, 123)  # type: ignore[arg-type]
    assert target.read_text(encoding="utf-8") == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["summary.md"]
