"""The front door (``clinseek.run/score/report/open_episode``): what it must keep and promise."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import fields
from pathlib import Path

import anyio
import pytest
from _agent_helpers import ScriptedModel, assistant, call
from _tool_cases import pick_case

import clinseek
from _cpu_limit import on_the_cpu_limiter
from clinseek import AgentBudget, RunOptions, RunSettings, Sources
from clinseek.agent import EpisodeSession, run_agent
from clinseek.bench import Question, episode_key, load_questions
from clinseek.errors import ClinseekError

SQL = {"sql_query": "SELECT itemid, charttime, valuenum FROM hosp.labevents ORDER BY charttime LIMIT 40"}


def _question(bench: Path, task: str) -> Question:
    return next(q for q in load_questions(bench) if q.task == task)


def test_importing_clinseek_loads_no_stage_and_no_dependency() -> None:
    code = ("import sys, clinseek; print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "{'clinseek', 'duckdb', 'pydantic', 'anyio', 'pyarrow', 'typer'} or m == 'importlib.metadata'))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "['clinseek']"  # the version too is read on first use


def test_the_version_is_the_installed_distributions() -> None:
    from importlib.metadata import version

    assert clinseek.__version__ == version("clinseek")
    assert "__version__" in dir(clinseek)


def test_front_door_names_stay_the_functions_when_the_stages_are_imported() -> None:
    import clinseek.api
    import clinseek.reporting  # a package named like a front-door function would rebind the name

    assert (clinseek.run, clinseek.score, clinseek.report) == (clinseek.api.run, clinseek.api.score, clinseek.api.report)
    assert set(clinseek.__all__) <= set(dir(clinseek))


def test_a_sync_function_inside_a_running_loop_names_its_async_twin(small_bench: Path) -> None:
    async def inside() -> None:
        clinseek.score(small_bench)

    with pytest.raises(ClinseekError, match=r"await score_async\(\.\.\.\)"):
        anyio.run(inside)


def test_a_tool_answers_with_the_text_the_agent_loop_shows(synthetic_store: Path, small_bench: Path) -> None:
    question = _question(small_bench, "labevents")
    budget = AgentBudget(max_tool_chars=300)  # cut: the loop's notice is part of the text
    model = ScriptedModel([assistant(call("ehr.run_sql_query", **SQL)), assistant(call("ehr.finish", response=["x"]))])
    with clinseek.open_question_episode(small_bench, question.qid, synthetic_store, budget=budget) as episode:
        outcome = anyio.run(lambda: run_agent(model, episode.context, question, budget=budget, tools=episode.tool_names))
    shown = next(m.content for m in outcome.messages if m.role == "tool")
    with clinseek.open_episode(synthetic_store, question.subject_id, question.prediction_time,
                               budget=budget) as episode:
        reply = episode.call_tool("ehr.run_sql_query", json.dumps(SQL))
    assert reply.text == shown and "[output cut by the agent loop at 300 of" in reply.text
    assert reply.ok and reply.result.data["row_count"] == len(reply.result.data["rows"]) > 0


def test_a_tool_not_offered_is_refused_as_the_loop_refuses_it(synthetic_store: Path, small_bench: Path) -> None:
    question = _question(small_bench, "Inpatient_Mortality")
    with clinseek.open_episode(synthetic_store, question.subject_id, question.prediction_time,
                               tools=["ehr.think", "ehr.finish"]) as episode:
        assert [t.name for t in episode.tools()] == ["ehr.think", "ehr.finish"]
        reply = episode.call_tool("ehr.run_sql_query", SQL)
        done = episode.call_tool("ehr.finish", {"response": "yes"})
    assert (reply.ok, reply.result.error_kind) == (False, "unknown_tool")
    assert done.ok and episode.answer == ["yes"] and episode.closed


def test_tools_list_the_schemas_a_client_needs(synthetic_store: Path, small_bench: Path) -> None:
    question = _question(small_bench, "Inpatient_Mortality")
    with clinseek.open_episode(synthetic_store, question.subject_id, question.prediction_time) as episode:
        tools = {t.name: t for t in episode.tools()}
    sql = tools["ehr.run_sql_query"]
    assert sql.parameters["type"] == "object" and "sql_query" in sql.parameters["required"]
    assert list(tools) == list(episode.tool_names) and "browser.search" not in tools  # no knowledge source


def test_a_closed_episode_refuses_calls(synthetic_store: Path, small_bench: Path) -> None:
    question = _question(small_bench, "Inpatient_Mortality")
    episode = clinseek.open_episode(synthetic_store, question.subject_id, question.prediction_time)
    episode.close()
    with pytest.raises(ClinseekError, match="closed"):
        episode.call_tool("ehr.get_table_names")


def test_the_cutoff_is_fixed_when_the_episode_opens(synthetic_store: Path, small_bench: Path) -> None:
    question = _question(small_bench, "Inpatient_Mortality")
    with clinseek.open_question_episode(small_bench, question.qid, synthetic_store) as episode:
        assert episode.key == episode_key(question)
        later = episode.call_tool("ehr.run_sql_query",
                                  {"sql_query": f"SELECT count(*) FROM hosp.labevents WHERE charttime >= "
                                                f"TIMESTAMP '{question.prediction_time}'"})
    assert later.result.data["rows"] == [[0]]


def test_a_question_episode_starts_as_its_agent_run_and_holds_no_label(
        synthetic_store: Path, small_bench: Path, tmp_path: Path) -> None:
    question = _question(small_bench, "labevents")
    summary = clinseek.run([question], synthetic_store, "baseline:null", tmp_path)
    row = json.loads((Path(summary.runs[0].out_dir) / "results.jsonl").read_text().splitlines()[0])
    with clinseek.open_question_episode(small_bench, question.qid, synthetic_store) as episode:
        opening = [m.model_dump(mode="json", exclude_defaults=True) for m in episode.messages]
        held = [*vars(episode).values(), *(getattr(episode.context, f.name) for f in fields(episode.context)),
                *episode.context.state.values()]
    assert opening == row["messages"][:2]
    assert not any(isinstance(value, Question) for value in held)
    assert all("label" not in json.dumps(m) for m in opening)


def test_an_unknown_qid_names_the_closest(synthetic_store: Path, small_bench: Path) -> None:
    qid = load_questions(small_bench)[0].qid
    with pytest.raises(ClinseekError, match=f"no question '{qid}x'.*{qid}"):
        clinseek.open_question_episode(small_bench, qid + "x", synthetic_store)


def test_score_writes_files_only_when_asked(synthetic_store: Path, small_bench: Path, tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    clinseek.run(small_bench, synthetic_store, "baseline:evidence", runs, mode="both")
    scored = clinseek.score(runs)
    assert scored.files == () and not list(runs.rglob("summary.json"))
    written = clinseek.score(runs, out=tmp_path / "scores")
    assert [p.name for p in written.files] == ["per_question.jsonl", "summary.json", "summary.md"]
    assert written.report.runs == scored.report.runs


def test_bad_candidate_tables_stop_a_run_before_any_row(synthetic_store: Path, small_bench: Path,
                                                       tmp_path: Path) -> None:
    settings = RunSettings(run=RunOptions(concurrency=1), sources=Sources(candidate_tables=tmp_path / "no.db"))
    with pytest.raises(ClinseekError, match=r"no\.db"):
        clinseek.run(small_bench, synthetic_store, "baseline:null", tmp_path / "runs", settings=settings)
    assert not (tmp_path / "runs").exists()


def test_open_episode_async_waits_for_a_cpu_token(synthetic_store: Path) -> None:
    case = pick_case(synthetic_store)

    async def main() -> tuple[int, bool]:
        session = await on_the_cpu_limiter(lambda: clinseek.open_episode_async(
            synthetic_store, case.subject_id, case.prediction_time))
        async with session:
            reply = await session.call_tool_async("ehr.get_table_names")
            return session.key.subject_id, reply.ok

    assert anyio.run(main) == (case.subject_id, True)


def test_open_question_episode_async_waits_for_a_cpu_token(small_bench: Path, synthetic_store: Path) -> None:
    from clinseek.bench import load_questions

    question = load_questions(small_bench)[0]

    async def main() -> EpisodeSession:
        session = await on_the_cpu_limiter(lambda: clinseek.open_question_episode_async(
            small_bench, question.qid, synthetic_store))
        await session.aclose()
        return session

    session = anyio.run(main)
    assert session.closed and session.key.subject_id == question.subject_id
    assert [m.role for m in session.messages] == ["system", "user"]
