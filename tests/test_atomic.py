"""clinseek._atomic: a text file is written whole or not at all."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from clinseek._atomic import atomic_writer, staging_dir, write_text_atomic


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


@pytest.fixture(params=[0o022, 0o002, 0o077])
def umask(request: pytest.FixtureRequest) -> Iterator[int]:
    old = os.umask(request.param)
    try:
        yield request.param
    finally:
        os.umask(old)


def test_files_and_staging_folders_get_the_modes_of_open_and_mkdir(tmp_path: Path, umask: int) -> None:
    """Not tempfile's private 0600 / 0700: colleagues read what the user's umask lets them read."""
    target = tmp_path / "report.html"
    write_text_atomic(target, "<html></html>")
    plain = tmp_path / "plain.txt"
    plain.write_text("x")
    assert stat.S_IMODE(target.stat().st_mode) == stat.S_IMODE(plain.stat().st_mode) == 0o666 & ~umask
    with atomic_writer(tmp_path / "scores.jsonl") as handle:
        handle.write("{}\n")
    assert stat.S_IMODE((tmp_path / "scores.jsonl").stat().st_mode) == 0o666 & ~umask
    folder = staging_dir(tmp_path / "bench")
    assert folder.parent == tmp_path and folder.name.startswith(".bench.") and not any(folder.iterdir())
    assert stat.S_IMODE(folder.stat().st_mode) == 0o777 & ~umask


def test_a_failed_block_leaves_no_file(tmp_path: Path) -> None:
    target = tmp_path / "rows.json"
    with pytest.raises(RuntimeError), atomic_writer(target) as handle:
        handle.write("half")
        raise RuntimeError("stop")
    assert list(tmp_path.iterdir()) == []
