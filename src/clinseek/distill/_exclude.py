"""Evaluation benchmarks a training set must not overlap: by qid, or by (subject_id, prediction_time)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..bench import load_questions


@dataclass(frozen=True, slots=True)
class Exclusions:
    """Questions of the excluded benchmarks, indexed for the two leakage rules."""

    qids: dict[str, str] = field(default_factory=dict)
    """qid → the benchmark path that holds it."""
    moments: dict[tuple[int, dt.datetime], str] = field(default_factory=dict)
    """(subject_id, prediction_time) → ``<path>:<qid>`` of the question asked at that moment."""
    subjects: dict[int, str] = field(default_factory=dict)
    """subject_id → ``<path>:<qid>`` of one question about that patient."""
    paths: tuple[str, ...] = ()
    questions: int = 0

    def match(self, qid: str, subject_id: int | None, prediction_time: str | None, *,
              same_subject: bool = False) -> list[str]:
        """Why a run of ``qid`` at (``subject_id``, ``prediction_time``) overlaps, or ``[]``.

        ``prediction_time`` is ISO 8601 (naive, MIMIC clock) as in a result row; the comparison is on
        the parsed timestamp, so ``2130-01-01T08:00:00`` and ``2130-01-01 08:00:00`` are the same moment.
        With ``same_subject``, any question about the same patient overlaps too.
        """
        found = []
        if same_subject and subject_id is not None and int(subject_id) in self.subjects:
            found.append(f"subject {subject_id} is a patient of excluded question {self.subjects[int(subject_id)]}")
        if qid in self.qids:
            found.append(f"qid {qid} is in excluded benchmark {self.qids[qid]}")
        moment = _moment(subject_id, prediction_time)
        if moment is not None and moment in self.moments:
            found.append(f"subject {moment[0]} at {moment[1].isoformat(sep=' ')} is asked in {self.moments[moment]}")
        return found


def _moment(subject_id: int | None, prediction_time: str | dt.datetime | None) -> tuple[int, dt.datetime] | None:
    if subject_id is None or prediction_time is None:
        return None
    when = prediction_time if isinstance(prediction_time, dt.datetime) else dt.datetime.fromisoformat(prediction_time)
    return (int(subject_id), when.replace(tzinfo=None))


def load_exclusions(paths: Sequence[Path | str]) -> Exclusions:
    """Read every question of the benchmarks at ``paths`` (manifest files or benchmark directories).

    Raises:
        ManifestError: a benchmark row does not validate (the exclusion list must be complete, so a
            bad benchmark stops the export rather than letting its questions through).
        ClinseekError: a path with no manifest.
    """
    qids: dict[str, str] = {}
    moments: dict[tuple[int, dt.datetime], str] = {}
    subjects: dict[int, str] = {}
    total = 0
    for path in paths:
        questions = load_questions(path)
        total += len(questions)
        for q in questions:
            qids.setdefault(q.qid, str(path))
            subjects.setdefault(q.subject_id, f"{path}:{q.qid}")
            moment = _moment(q.subject_id, q.prediction_time)
            if moment is not None:
                moments.setdefault(moment, f"{path}:{q.qid}")
    return Exclusions(qids=qids, moments=moments, subjects=subjects, paths=tuple(str(p) for p in paths), questions=total)
