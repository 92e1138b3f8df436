"""Append-only ``results.jsonl``: one ``os.write`` per row, torn last lines ignored, resume compaction."""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Iterable, Mapping
from pathlib import Path
from types import TracebackType

from ..errors import ClinseekError
from ..records import ResultRow, read_results
from ._reflayout import CLINSEEK_CODEC, RowCodec
from ._secrets import redact_line, secret_values


class ResultsFile:
    """An append-only ``results.jsonl``; each row is flushed to the OS in one ``write`` call.

    A row is encoded whole and written with a single ``os.write`` on an ``O_APPEND`` descriptor,
    so ``kill -9`` at any moment leaves either the full line or a torn tail that
    :func:`read_results` ignores and :meth:`prepare_resume` removes. Rows are redacted of the
    credential values the environment holds when the file is opened (the providers read their keys
    before a run starts; scanning the environment once per row cost more than the rest of the row).
    """

    def __init__(self, path: Path, *, fsync: bool = False, codec: RowCodec = CLINSEEK_CODEC) -> None:
        self.path = path
        self._fsync = fsync
        self._codec = codec
        self._fd: int | None = None
        self._secrets: list[str] = []
        self.superseded = 0
        """Rows the last :meth:`prepare_resume` moved to ``superseded.jsonl``."""

    def open(self) -> None:
        """Open (creating) the file for appending; take the credential values to redact."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._secrets = secret_values()
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)

    def append(self, row: ResultRow) -> None:
        """Write one row as one JSON line, credentials redacted."""
        if self._fd is None:
            raise ClinseekError(f"{self.path}: results file is not open")
        data = (redact_line(self._codec.encode(row), self._secrets) + "\n").encode("utf-8")
        view = memoryview(data)
        while view:
            written = os.write(self._fd, view)
            view = view[written:]
        if self._fsync:
            os.fsync(self._fd)

    def close(self) -> None:
        """Close the descriptor (idempotent)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def prepare_resume(
        self, config_hash: str, wanted: Mapping[str, tuple[str | None, str | None]] | None = None,
        known: Collection[str] | None = None,
    ) -> list[ResultRow]:
        """Compact the file for a resumed run and return the rows kept.

        Keeps the first row of each (qid, run_index) whose status is not ``infra_error`` or
        ``invalid_input``; drops torn lines and those rows (they are redone: invalid rows are
        recorded again from the manifest as it is now), appending the dropped rows to
        ``attempts.jsonl`` beside it for the record. With ``wanted`` (qid → the
        ``(question_hash, store_id)`` this run asks), a row of one of those qids that answers
        another question or was run on another store (or does not say: a row written before the
        fields existed) is superseded: moved to ``superseded.jsonl`` beside it and redone; rows of
        qids not in ``wanted`` are kept as they are, unless ``known`` (every qid of the benchmark this run reads,
        selected or not) is given and lacks them while rows of ``wanted`` qids answered other questions: then the
        file holds another build of the benchmark, and its rows of qids this build does not have are superseded
        too (else they would be scored with this build's answers as one run). Without that evidence such rows
        stay (a list of questions cut by hand from the same build). :attr:`superseded` counts the rows moved. The
        rewrite goes through a temporary file and ``os.replace``, so a kill during it leaves the
        old file intact.

        Raises:
            ClinseekError: the file holds rows of another run configuration.
        """
        report = read_results(self.path)  # rows of either layout and any schema version
        others = {r.config_hash for r in report.rows} - {config_hash}
        if others:
            raise ClinseekError(
                f"{self.path}: holds results of another run configuration ({sorted(others)[0][:12]}...);"
                f" this run is {config_hash[:12]}...: use another --out directory or delete the file"
            )
        current, stale = _split_stale(report.rows, wanted or {}, known)
        done, dropped = _split_done(current)
        self.superseded = len(stale)
        if stale:
            _append_lines(self.path.with_name("superseded.jsonl"), (r.model_dump_json() for r in stale))
        if dropped:
            _append_lines(self.path.with_name("attempts.jsonl"), (r.model_dump_json() for r in dropped))
        if dropped or stale or report.torn_lines:
            _rewrite(self.path, done, self._codec.encode)
        return done


def _split_stale(
    rows: list[ResultRow], wanted: Mapping[str, tuple[str | None, str | None]], known: Collection[str] | None
) -> tuple[list[ResultRow], list[ResultRow]]:
    """(rows kept, rows of a wanted qid that answer another question or store, and, when there are such rows, rows
    of a qid ``known`` lacks: another build's)."""
    current: list[ResultRow] = []
    stale: list[ResultRow] = []
    for row in rows:
        (stale if row.qid in wanted and row.answers != wanted[row.qid] else current).append(row)
    if known is not None and any(row.question_hash != wanted[row.qid][0] for row in stale):
        stale += [row for row in current if row.qid not in wanted and row.qid not in known]
        current = [row for row in current if row.qid in wanted or row.qid in known]
    return current, stale


def _split_done(rows: list[ResultRow]) -> tuple[list[ResultRow], list[ResultRow]]:
    seen: set[tuple[str, int, str]] = set()
    done: list[ResultRow] = []
    dropped: list[ResultRow] = []
    for row in rows:
        if row.status in ("infra_error", "invalid_input") or row.key in seen:
            dropped.append(row)
            continue
        seen.add(row.key)
        done.append(row)
    return done, dropped


def _rewrite(path: Path, rows: list[ResultRow], encode: Callable[[ResultRow], str]) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(encode(row) + "\n")
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def _append_lines(path: Path, lines: Iterable[str]) -> None:
    with path.open("a", encoding="utf-8") as fh:
        for line in lines:
            fh.write(redact_line(line) + "\n")


class RunLock:
    """An exclusive advisory lock on a results folder: two runs never write one ``results.jsonl``.

    Raises:
        ClinseekError: on entry, when another process holds the lock.
    """

    def __init__(self, folder: Path) -> None:
        self.path = folder / ".lock"
        self._fd: int | None = None

    def __enter__(self) -> RunLock:
        import fcntl

        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT, 0o666)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise ClinseekError(f"{self.path.parent}: another run is writing these results") from None
        self._fd = fd
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing the descriptor releases the lock (a killed process releases it too)
            self._fd = None
