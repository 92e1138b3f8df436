"""A store file DuckDB cannot read (truncated, damaged inside, another program's) is one line on
stderr naming the file and exit code 2, in every command that opens a store: no traceback."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

MAIN = [sys.executable, "-c", "from clinseek.cli import main; main()"]


def _copy(store: Path, to: Path) -> Path:
    shutil.copyfile(store, to)
    return to


@pytest.fixture(scope="module")
def truncated(synthetic_store: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The synthetic store cut to half its size (``truncate -s 50%``: an interrupted copy)."""
    path = _copy(synthetic_store, tmp_path_factory.mktemp("damaged") / "truncated.duckdb")
    with path.open("r+b") as fh:
        fh.truncate(path.stat().st_size // 2)
    return path


@pytest.fixture(scope="module")
def scrambled(synthetic_store: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The synthetic store with every data block after the first few overwritten (checksums fail on read)."""
    path = _copy(synthetic_store, tmp_path_factory.mktemp("damaged") / "scrambled.duckdb")
    size, block = path.stat().st_size, 262_144
    with path.open("r+b") as fh:
        for offset in range(12_288 + 4 * block, size - block, block):
            fh.seek(offset + 64)
            fh.write(b"\xa5" * 512)
    return path


def _commands(store: Path, bench: Path, out: Path) -> list[list[str]]:
    return [
        ["data", "info", str(store)],
        ["tool", "--store", str(store), "--subject-id", "10000032", "--prediction-time", "2150-01-01 00:00:00",
         "ehr.run_sql_query", "--arg", "sql_query=SELECT count(*) FROM labevents, prescriptions, emar, patients"],
        ["run", "--bench", str(bench), "--store", str(store), "--model", "baseline:null", "--mode", "agent",
         "--out", str(out / "runs"), "--no-progress"],
        ["bench", "build", "--store", str(store), "--out", str(out / "bench"), "--per-task", "1", "--tasks", "omr"],
        ["bench", "validate", str(bench), "--store", str(store)],
        ["knowledge", "build", "--store", str(store), "--cache-dir", str(out / "kb")],
    ]


@pytest.fixture(scope="module")
def bench(synthetic_store: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from clinseek.bench import build_benchmark

    out = tmp_path_factory.mktemp("damaged_bench") / "bench"
    build_benchmark(synthetic_store, tasks=["omr"], per_task=2, seed=1, out=out)
    return out


@pytest.mark.slow
@pytest.mark.parametrize("which", ["truncated", "scrambled", "foreign"])
def test_every_command_names_an_unreadable_store_in_one_line(
    request: pytest.FixtureRequest, which: str, bench: Path, tmp_path: Path
) -> None:
    if which == "foreign":
        store = tmp_path / "foreign.duckdb"
        store.write_bytes(b"PK\x03\x04 this is a zip archive, not a database" * 100)
    else:
        store = request.getfixturevalue(which)
    for args in _commands(store, bench, tmp_path):
        done = subprocess.run([*MAIN, *args], capture_output=True, text=True, timeout=300)
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        assert done.returncode == 2, (args, done.stdout[-2000:], done.stderr[-2000:])
        assert len(lines) == 1 and lines[0].startswith("error: "), (args, done.stderr[-2000:])
        assert str(store) in lines[0], (args, lines)
        assert "Traceback" not in done.stdout + done.stderr


def test_a_truncated_store_is_refused_when_opened(truncated: Path) -> None:
    from clinseek.errors import StoreError
    from clinseek.store import connect_store

    with pytest.raises(StoreError, match="truncated"):
        connect_store(truncated)
