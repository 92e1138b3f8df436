"""A run over a live PostgreSQL source: its episodes are built from the database; a bad source fails the run up
front with one clear error; a server stopped mid-run makes the row in flight an infra error and stops the run
with that error (as a damaged store file does), and a resume redoes the row and runs the rest."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import anyio
import pytest
from _runner_helpers import HashModel

from clinseek.bench import Question, build_benchmark, load_questions
from clinseek.errors import StoreError
from clinseek.runner import RunOptions, RunSettings, read_results, run_benchmark
from pgserver import READER, PgDatabase, PgServer

psycopg = pytest.importorskip("psycopg")


@pytest.fixture(scope="module")
def questions(demo_store: Path, tmp_path_factory: pytest.TempPathFactory) -> list[Question]:
    out = tmp_path_factory.mktemp("pg_bench") / "bench"
    build_benchmark(demo_store, tasks=["Inpatient_Mortality", "omr"], per_task=3, seed=42, out=out)
    return load_questions(out)


class StopsTheServer(HashModel):
    """Stops the PostgreSQL server (immediately: every connection cut) during its first call."""

    def __init__(self, server: PgServer) -> None:
        super().__init__()
        self.server = server

    async def generate(self, messages: Sequence[Any], tools: Sequence[Mapping[str, Any]] = (),
                       config: Any = None) -> Any:
        if self.calls == 0:
            self.server.stop("immediate")
        return await super().generate(messages, tools, config)


def _run(questions: list[Question], url: str, model: HashModel, out: Path) -> Any:
    settings = RunSettings(run=RunOptions(concurrency=1))  # one question at a time: those after the stop fail
    return anyio.run(lambda: run_benchmark(questions, url, "agent", model, out, settings=settings))


def _rows(out: Path) -> list[Any]:
    (results,) = out.rglob("results.jsonl")
    return read_results(results).rows


def test_a_server_stopped_mid_run_gives_infra_errors_that_a_resume_redoes(
    questions: list[Question], pg_server: PgServer, pg_demo: PgDatabase, tmp_path: Path
) -> None:
    location = pg_demo.reader_url.replace(":reader-secret", "")
    try:  # as for a damaged store file, the run stops at the first such row: every later episode would fail too
        with pytest.raises(StoreError) as caught:
            _run(questions, pg_demo.reader_url, StopsTheServer(pg_server), tmp_path)
    finally:
        pg_server.start()
    message = str(caught.value)
    assert message.startswith(location + ": cannot ") and "secret" not in message, message
    assert "the connection to the server was lost" in message or "is the server running" in message, message
    rows = _rows(tmp_path)
    assert [r.status == "infra_error" for r in rows] == [False, True]  # the first question was built before the stop
    assert rows[1].error_type == "StoreError" and rows[1].error is not None
    assert rows[1].error.removeprefix("StoreError: ") == message

    resumed = _run(questions, pg_demo.reader_url, HashModel(), tmp_path).runs[0]
    rows = _rows(tmp_path)
    assert resumed.resumed == 1 and resumed.ran == 5 and resumed.infra_errors == 0  # the infra row is redone
    assert sorted(r.qid for r in rows) == sorted(q.qid for q in questions)
    assert "infra_error" not in {r.status for r in rows}  # answered (or no_answer: the fake answers yes or no)


def test_a_bad_source_fails_the_run_before_any_row(questions: list[Question], pg_server: PgServer,
                                                   pg_demo: PgDatabase, tmp_path: Path) -> None:
    with pytest.raises(StoreError, match=rf'^postgresql://{READER}@127\.0\.0\.1:{pg_server.port}/mimiciv_demo: cannot '
                                         r'connect: password authentication failed'):
        _run(questions, pg_server.url("mimiciv_demo", READER, "wrong"), HashModel(), tmp_path)
    assert not list(tmp_path.rglob("results.jsonl"))
