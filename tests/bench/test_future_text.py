"""adapt20: text a question carries verbatim (its Curated Input ``input``, a pre-rendered ``question``, the
``instruction``) reached the model as written, outside the temporal policy, with no word from ``bench validate``
or ``run`` when it mentioned the future (a timeline past the cutoff, an outcome in the instruction).

It still runs as written (the released EHR-Bench rows are used verbatim by design), but ``bench validate`` notes
each such field and ``run`` logs a warning and writes the note into the rows' ``input_warnings``.
"""

from __future__ import annotations

import datetime as dt
import logging
from pathlib import Path

import pytest
from _bench_fakes import text_row, write_jsonl

from clinseek.bench import future_text, load_questions, prepare_run, text_notes, validate_benchmark

_CUTOFF = "2150-03-02 08:00:01"  # text_row's prediction_time


def _question(**over: object):
    return load_questions(write_jsonl(Path(over.pop("tmp")), [text_row(0, **over)]))[0]  # type: ignore[arg-type]


@pytest.mark.parametrize(("text", "found"), [
    ("## Labs [2150-03-02 08:00:00]\n- Glucose 120", []),  # before the cutoff
    ("## Labs [2150-03-02 08:00:01]", []),  # the cutoff itself is not after it
    ("## Labs [2150-03-02 08:00:02]", ["2150-03-02 08:00:02"]),
    ("discharged 2150-03-02T23:59", ["2150-03-02T23:59"]),
    ("seen 2150-03-02", []),  # the cutoff's own day may be its past
    ("died 2150-03-03", ["2150-03-03"]),
    ("## Death [2199-01-01 00:00:00] and 2150-03-04 and 2150-03-05 and 2150-03-06",
     ["2199-01-01 00:00:00", "2150-03-04", "2150-03-05", ", ..."]),
    ("2150-13-45 and 2150-02-30 12:00", []),  # not calendar dates
    ("id 12150-03-09 and x-2150-03-09", []),  # digits or a dash before it: not a date
    # attack20: other ways of writing a date or time were not read
    ("died 03/09/2150", ["03/09/2150"]),  # month first (March 9) and day first (3 September): both after
    ("seen 01/03/2150, 02/03/2150 and 3.2.2150", []),  # neither reading after the cutoff's day
    ("12/03/2150", ["12/03/2150"]),  # March 12 (day first) is after, December 3 too
    ("March 9, 2150; 09-Mar-2150; 9th of March, 2150; Sept. 30 2150", ["March 9, 2150", "09-Mar-2150", ", ..."]),
    ("Mar 2, 2150 at 8:00 PM", ["Mar 2, 2150 at 8:00 PM"]),  # 20:00
    ("Mar 2, 2150 at 8:00 AM and 2150-03-02 12:30 AM", []),
    ("April 2150", ["April 2150"]),  # a month alone, after the cutoff's month
    ("March 2150 and Feb 2150", []),
    ("2150-03-02T08:00:00-05:00", ["2150-03-02T08:00:00-05:00"]),  # 13:00 at UTC: after when read with its zone
    ("2150-03-02T09:00:00+09:00", ["2150-03-02T09:00:00+09:00"]),  # after as written
    ("on 2150-03-02 at 9:15 p.m. UTC", ["2150-03-02 at 9:15 p.m. UTC"]),
    ("2149-12-31T23:00-10:00, Dec 31, 2149 11:00 PM", []),
    ("February 30, 2150; 13/13/2150; 2150-03-02 25:00; Marching 9 2150; version 1.2.2150", []),
])
def test_future_text_finds_the_times_after_the_cutoff(tmp_path: Path, text: str, found: list[str]) -> None:
    problems = future_text(_question(tmp=tmp_path / "q.jsonl", input=text))
    if not found:
        assert problems == []
        return
    (problem,) = problems
    assert problem.kind == "future_text" and problem.field == "input"
    assert all(f in problem.problem for f in found), problem.problem
    assert f"after prediction_time {_CUTOFF}" in problem.problem


def test_every_verbatim_field_is_read(tmp_path: Path) -> None:
    q = _question(tmp=tmp_path / "q.jsonl", input="ok 2150-03-01", question="<q>as of 2150-03-04 10:00</q>",
                  instruction="Predict death (died 2150-03-05 12:00)")
    assert [p.field for p in future_text(q)] == ["question", "instruction"]


def test_validate_notes_them_and_run_records_them(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    rows = [text_row(1, input="## Death [2150-03-09 10:00:00] DIED"), text_row(2, input="## Labs [2150-03-01 10:00:00]")]
    manifest = write_jsonl(tmp_path / "bench.jsonl", rows)
    report = validate_benchmark(manifest)
    assert report.ok  # a note, not a problem: the release's rows are used as written by design
    (note,) = [n for n in report.notes if "after prediction_time" in n]
    assert "row ehr_bench_risk_prediction_1: field 'input'" in note and "2150-03-09 10:00:00" in note
    with caplog.at_level(logging.WARNING, logger="clinseek.bench"):
        run = prepare_run(manifest, None)
    assert [q.qid for q in run.questions] == ["ehr_bench_risk_prediction_1", "ehr_bench_risk_prediction_2"]
    assert list(run.notes) == ["ehr_bench_risk_prediction_1"]
    assert "2150-03-09 10:00:00" in run.notes["ehr_bench_risk_prediction_1"][0]
    assert "1 of 2 questions carry text shown to the model as written" in caplog.text
    assert text_notes(run.questions) == run.notes  # questions given as objects get the same notes


def test_a_long_release_lists_the_first_twenty(tmp_path: Path) -> None:
    rows = [text_row(i, input=f"## Death [2151-01-01 00:00:{i % 60:02d}]") for i in range(25)]
    notes = [n for n in validate_benchmark(write_jsonl(tmp_path / "b.jsonl", rows)).notes if "prediction_time" in n]
    assert len(notes) == 21 and notes[-1].endswith("5 more fields mention a time after their row's prediction_time")


def test_prediction_time_parsing_is_the_questions(tmp_path: Path) -> None:
    q = _question(tmp=tmp_path / "q.jsonl", input="x")
    assert q.prediction_time == dt.datetime(2150, 3, 2, 8, 0, 1)


@pytest.mark.parametrize(("text", "found"), [
    ("given 2150-03-02 9:30", ["2150-03-02 9:30"]),  # one-digit hour
    ("at 2150-03-02 08:00:01.999", ["2150-03-02 08:00:01.999"]),  # after the cutoff by a fraction of a second
    ("at 2150-03-02 08:00:01.000", []),
    ("at 2150-03-02 08:00:00.999999", []),
    ("2150-03-02 25:00 and 2150-03-02 08:61", []),  # no such times
])
def test_times_are_compared_to_the_microsecond(tmp_path: Path, text: str, found: list[str]) -> None:
    problems = future_text(_question(tmp=tmp_path / "q.jsonl", input=text))
    assert [f for f in found if any(f in p.problem for p in problems)] == found and bool(problems) == bool(found)


def test_the_scan_around_years_finds_what_the_full_pattern_finds() -> None:
    """``times_after`` runs the pattern only around four-digit runs (speed); on random texts built from the pieces of
    dates it returns exactly the full pattern's mentions after the cutoff."""
    import random

    from clinseek.bench import _mentions

    cutoff = dt.datetime(2150, 3, 2, 8, 0, 1)
    limit = (2150, 3, 2, 8, 0, 1, 0)
    pieces = ["2150", "-", "03", "/", "09", ".", ":", " ", "T", "March", "Mar.", "9th", "of", ",", "at", "12:00", "PM",
              "+09:00", "Z", "x", "1", "2151", "Sept", "30", "2149", "12", "am", "\n", "  ", "[", "0900", "21502",
              "2150-03-01T23:00", "-14:00"]
    rng = random.Random(21)
    for _ in range(20_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 16)))
        full = [m.group(0) for m in _mentions._MENTION.finditer(text) if _mentions._after(m, cutoff, limit)]
        assert _mentions.times_after(text, cutoff) == full, text
