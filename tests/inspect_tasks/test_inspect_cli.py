"""``inspect eval clinseek/clinseek_text -T demo=true`` through the installed entry point, offline, then
``clinseek import-inspect`` and ``clinseek score`` on its log (real subprocesses, as a user runs them)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import clinseek

BIN = Path(sys.executable).parent


def _offline() -> list[str]:
    done = subprocess.run(["unshare", "-n", "true"], capture_output=True, check=False) if shutil.which("unshare") \
        else None
    return ["unshare", "-n"] if done is not None and done.returncode == 0 else []


def test_the_entry_point_registers_the_tasks_without_importing_inspect_at_clinseek_import() -> None:
    from importlib.metadata import entry_points

    (point,) = [p for p in entry_points(group="inspect_ai") if p.name == "clinseek"]
    assert point.value == "clinseek.inspect_tasks._registry"
    code = ("import sys, clinseek, clinseek.cli, clinseek.api, clinseek.runner; "
            "print(any(m.split('.')[0] == 'inspect_ai' for m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


@pytest.mark.slow
def test_inspect_eval_of_the_demo_is_imported_and_scored_by_the_cli(
        synthetic_store: Path, inspect_bench: Path, tmp_path: Path) -> None:
    from clinseek.inspect_tasks import demo_folder

    cache = tmp_path / "cache"  # the demo's store and benchmark, made beforehand (building them takes minutes)
    folder = demo_folder(cache)
    folder.mkdir(parents=True)
    shutil.copy(synthetic_store, folder / "store.duckdb")
    shutil.copytree(inspect_bench, folder / "bench")
    logs = tmp_path / "logs"
    command = [*_offline(), str(BIN / "inspect"), "eval", "clinseek/clinseek_text", "-T", "demo=true",
               "-T", f"cache={cache}", "-T", "tasks=Inpatient_Mortality", "--model", "clinseek/baseline:evidence",
               "--log-dir", str(logs), "--display", "none"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    (log,) = logs.glob("*.eval")

    runs = tmp_path / "runs"
    done = subprocess.run([str(BIN / "clinseek"), "import-inspect", str(log), "--out", str(runs)],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0 and "(1 rows)" in done.stdout, done.stdout + done.stderr
    done = subprocess.run([str(BIN / "clinseek"), "score", str(runs), "--out", str(tmp_path / "scores")],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    ours = {q.qid: q.f1 for q in clinseek.score(runs).questions}

    from clinseek.bench import load_questions

    question = [q for q in load_questions(inspect_bench) if q.task == "Inpatient_Mortality"]
    clinseek.run(question, synthetic_store, "baseline:evidence", tmp_path / "direct")
    theirs = {q.qid: q.f1 for q in clinseek.score(tmp_path / "direct").questions}
    assert ours == theirs and len(ours) == 1
    row = json.loads(next(runs.rglob("results.jsonl")).read_text().splitlines()[0])
    assert row["model"] == "inspect:clinseek/baseline:evidence" and row["status"] == "answered"


def test_import_inspect_without_inspect_ai_names_the_extra(tmp_path: Path) -> None:
    code = ("import sys\nsys.modules['inspect_ai'] = None  # as if not installed\n"
            f"sys.argv = ['clinseek', 'import-inspect', {str(tmp_path / 'x.eval')!r}, '--out', {str(tmp_path)!r}]\n"
            "from clinseek.cli import main\nmain()\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 2, done.stderr
    from clinseek.errors import install_hint

    assert done.stderr.strip().splitlines()[-1] == (
        "error: clinseek import-inspect needs the optional extra [inspect]: "
        + install_hint("inspect", "inspect_ai is not installed"))
