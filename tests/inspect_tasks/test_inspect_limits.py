"""inspect's own limits and epochs on the clinseek tasks: a sample an inspect limit ends is a ``no_answer``
row named after the limit, and each epoch is one run of the question (``run_index = epoch - 1``)."""

from __future__ import annotations

from pathlib import Path

from _inspect_helpers import mock_outputs

import clinseek
from clinseek.runner import read_results


def test_a_message_limit_ends_the_sample_as_no_answer_in_each_epoch(
        synthetic_store: Path, inspect_bench: Path, tmp_path: Path) -> None:
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import get_model

    from clinseek.inspect_tasks import clinseek_text, import_inspect_log

    task = clinseek_text(bench=str(inspect_bench), store=str(synthetic_store), tasks="Inpatient_Mortality")
    log = inspect_eval(task, model=get_model("mockllm/model", custom_outputs=mock_outputs()), epochs=2,
                       message_limit=4, log_dir=str(tmp_path / "logs"), display="none")[0]
    assert log.status == "success" and log.samples and len(log.samples) == 2
    for sample in log.samples:
        assert sample.limit is not None and sample.limit.type == "message"
        assert sample.scores and sample.scores["clinseek_scorer"].metadata["status"] == "no_answer"

    (imported,) = import_inspect_log(log.location, tmp_path / "runs")
    rows = read_results(imported.results).rows
    assert [(r.run_index, r.runs_per_question) for r in rows] == [(0, 2), (1, 2)]
    assert {(r.status, r.stop_reason, r.answer) for r in rows} == {("no_answer", "max_turns", None)}
    assert all("inspect message limit" in (r.error or "") for r in rows)
    (question,) = clinseek.score(tmp_path / "runs").questions
    assert (len(question.runs), question.f1) == (2, 0.0)
