"""The run's sealed databases created ahead (``Executor.reader`` starts ``SealedPool.prepare``; issue 22): how many, in
which mode, and a process that exits while they are being created."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from clinseek.runner import Executor, RunSettings
from policy.crafted import build_crafted_store


@pytest.fixture(scope="module")
def small_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The crafted store of tests/policy (a store reader opens in ~0.1 s)."""
    return build_crafted_store(tmp_path_factory.mktemp("attack22") / "crafted.duckdb")


class _Model:
    name = "openai:nowhere"
    supports_native_tools = True
    priced = False


def _executor(store: Path, mode: str, at_once: int) -> Executor:
    return Executor(store=store, mode=mode, model=_Model(), benchmark="b", digest="0" * 64,  # type: ignore[arg-type]
                    settings=RunSettings(), tools=(), episodes_at_once=at_once)


def _settled(executor: Executor) -> dict[str, int]:
    """The reader's databases by memory_limit once its prepare thread (if any) ended."""
    import threading

    pool = executor.reader().sealed
    for thread in threading.enumerate():
        if thread.name.startswith("clinseek-sealed-prepare"):
            thread.join(timeout=30)
    return {k: v for k, v in pool._live.items() if v}


@pytest.mark.parametrize(("mode", "at_once", "expected"), [
    ("agent", 3, {"1GB": 3}),  # a small run: as many as its jobs (min(concurrency, jobs)), not its concurrency
    ("agent", 1, {}),  # one episode at a time: its first query creates its own
    ("curated", 64, {}),  # Curated Input queries no sealed database
])
def test_a_run_prepares_as_many_databases_as_it_holds_episodes_at_once(
    small_store: Path, mode: str, at_once: int, expected: dict[str, int]
) -> None:
    executor = _executor(small_store, mode, at_once)
    try:
        assert _settled(executor) == expected
    finally:
        executor.close()
    assert executor._reader is None


_EXIT = """
import sys
sys.path.insert(0, {tests!r})
from runner.test_attack22_prepare import _executor
executor = _executor({store!r}, "agent", 64)
pool = executor.reader().sealed
while not pool._live.get("1GB"):
    pass
if {close}:
    executor.close()
"""


@pytest.mark.parametrize("close", [True, False])
def test_a_process_that_exits_while_its_databases_are_prepared_exits_cleanly(small_store: Path, close: bool) -> None:
    """A short run's process ends while the prepare thread is inside ``duckdb.connect``: it must exit with 0 (the
    interpreter ending a daemon thread inside DuckDB's C++ code aborts the process: SIGABRT, "FATAL: exception not
    rethrown"), whether the executor was closed (its reader waits for the database being created) or not (the
    thread is not a daemon: the interpreter waits for it)."""
    tests = str(Path(__file__).resolve().parents[1])
    script = _EXIT.format(tests=tests, store=str(small_store), close=close)
    started = time.monotonic()
    for _ in range(2):
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr[-2000:]
    assert time.monotonic() - started < 60


def test_the_pool_winds_down_once_the_runs_last_job_opened_its_session(
    small_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``Executor(jobs=n)``: the n-th session opened (whether it opened or failed) winds the reader's pool down, not
    before; an executor without a job count never does (a Ray worker's)."""
    from clinseek.runner import _execute

    def fake(reader: object, question: object, **_: object) -> str:
        if question == "bad":
            raise RuntimeError("the build failed")
        return "session"

    monkeypatch.setattr(_execute, "open_question_session", fake)

    class _Job:
        def __init__(self, question: str) -> None:
            self.qid, self.run_index, self.question = question, 0, question

    counted = Executor(store=small_store, mode="agent", model=_Model(), benchmark="b", digest="0" * 64,  # type: ignore[arg-type]
                       settings=RunSettings(), tools=(), jobs=2)
    uncounted = Executor(store=small_store, mode="agent", model=_Model(), benchmark="b", digest="0" * 64,  # type: ignore[arg-type]
                         settings=RunSettings(), tools=())
    try:
        assert counted._open(_Job("q1")) == "session"  # type: ignore[arg-type]
        assert not counted.reader().sealed._winding_down
        with pytest.raises(RuntimeError, match="build failed"):
            counted._open(_Job("bad"))  # type: ignore[arg-type]
        assert counted.reader().sealed._winding_down
        for _ in range(3):
            uncounted._open(_Job("q"))  # type: ignore[arg-type]
        assert not uncounted.reader().sealed._winding_down
    finally:
        counted.close()
        uncounted.close()
