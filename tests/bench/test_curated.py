"""Curated Input from the sealed episode: EHR-Bench-style blocks, budget, verbatim text, nothing after the cutoff."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import pytest

from clinseek.bench import Question, render_curated, render_text_timeline
from clinseek.episode import TEXT_POLICY, EpisodeKey, build_episode
from clinseek.models import estimate_tokens
from clinseek.store import open_store

_BLOCK = re.compile(r"^## (.+) \[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d|None)\]$", re.M)


@pytest.fixture(scope="module")
def admission(demo_store: Path) -> tuple[int, int, dt.datetime, dt.datetime]:
    con = open_store(demo_store).connect()
    try:
        return con.execute(
            "SELECT subject_id, hadm_id, admittime, dischtime FROM hosp.admissions "
            "WHERE hospital_expire_flag = 1 ORDER BY hadm_id LIMIT 1"
        ).fetchall()[0]
    finally:
        con.close()


def _question(subject_id: int, cutoff: dt.datetime, **over: object) -> Question:
    fields: dict[str, object] = {
        "qid": "q1",
        "benchmark": "clinseek-bench-text",
        "source": "clinseek-build",
        "task": "Inpatient_Mortality",
        "task_type": "risk_prediction",
        "category": "mortality",
        "subject_id": subject_id,
        "prediction_time": cutoff,
        "policy": TEXT_POLICY,
        "label": ("yes",),
        "candidates": ("yes", "no"),
    }
    fields.update(over)
    return Question.model_validate(fields)


def test_timeline_blocks_are_newest_first_and_before_the_cutoff(demo_store: Path, admission: tuple) -> None:
    subject_id, _, admittime, dischtime = admission
    cutoff = admittime + (dischtime - admittime) / 2
    with build_episode(demo_store, EpisodeKey(subject_id, cutoff)) as ep:
        curated = render_text_timeline(ep, budget_tokens=1_000_000)
    assert curated.source == "rendered" and not curated.truncated
    heads = _BLOCK.findall(curated.text)
    assert heads[0] == ("Patient Demographics", "None")
    times = [dt.datetime.fromisoformat(t) for _, t in heads[1:]]
    assert times and times == sorted(times, reverse=True)
    assert max(times) < cutoff
    for line in curated.text.splitlines():
        assert not line.strip() or line.startswith(("## ", "- ")), line


def test_timeline_does_not_show_the_outcome(demo_store: Path, admission: tuple) -> None:
    subject_id, hadm_id, admittime, dischtime = admission
    cutoff = admittime + dt.timedelta(hours=1)
    curated = render_curated(_question(subject_id, cutoff, hadm_id=hadm_id), demo_store)
    assert "DIED" not in curated.text
    assert "hospital_expire_flag: 1" not in curated.text
    assert "dod:" not in curated.text
    assert f"{dischtime:%Y-%m-%d %H:%M:%S}" not in curated.text


def test_budget_cuts_oldest_blocks_and_says_so(demo_store: Path, admission: tuple) -> None:
    subject_id, _, _, dischtime = admission
    with build_episode(demo_store, EpisodeKey(subject_id, dischtime)) as ep:
        full = render_text_timeline(ep, budget_tokens=1_000_000)
        short = render_text_timeline(ep, budget_tokens=600)
    assert short.blocks_total == full.blocks_total > short.blocks_shown
    assert estimate_tokens(short.text) <= 600
    assert f"[{short.blocks_total - short.blocks_shown} older event blocks omitted" in short.text
    # the blocks kept are the most recent ones
    assert _BLOCK.findall(short.text)[1] == _BLOCK.findall(full.text)[1]


def test_row_curated_text_is_used_verbatim(demo_store: Path, admission: tuple) -> None:
    q = _question(admission[0], admission[2], curated_text="## Admissions [2150-01-01 00:00:00]\n- x: y")
    curated = render_curated(q, demo_store)
    assert curated.source == "verbatim" and curated.text == q.curated_text
