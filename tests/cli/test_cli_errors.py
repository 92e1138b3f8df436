"""One clear error (exit 2), not a traceback, for bad output paths and options; exit 3 when infra errors remain."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from clinseek.bench import build_benchmark
from clinseek.cli import INTERRUPTED, app
from clinseek.cli._out import EXIT_INFRA_ERRORS, EXIT_INVALID_INPUT, check_out
from clinseek.errors import ClinseekError

MAIN = [sys.executable, "-c", "from clinseek.cli import main; main()"]


def _invoke(args: list[str]):
    return CliRunner().invoke(app, args, env={"COLUMNS": "200"})


@pytest.fixture(scope="module")
def bench(demo_store: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("cli_bench") / "bench"
    build_benchmark(demo_store, tasks=["omr"], per_task=1, seed=42, out=out)
    return out


@pytest.fixture(scope="module")
def results(bench: Path, demo_store: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("cli_runs")
    result = _invoke(["run", "--bench", str(bench), "--store", str(demo_store), "--model", "baseline:null",
                      "--mode", "curated", "--out", str(out), "--no-progress"])
    assert result.exit_code == 0, result.output
    return out


def _refused(args: list[str], *needles: str) -> None:
    result = _invoke(args)
    assert result.exit_code != 0
    assert isinstance(result.exception, ClinseekError), result.output
    for needle in needles:
        assert needle in str(result.exception)


def test_an_out_that_is_a_file_is_refused_by_every_command(tmp_path: Path, bench: Path, demo_store: Path,
                                                          results: Path) -> None:
    afile = tmp_path / "afile"
    afile.write_text("mine")
    expected = (f"--out {afile}: is a file, expected a folder",)
    _refused(["run", "--bench", str(bench), "--store", str(demo_store), "--model", "baseline:null", "--mode", "curated",
              "--out", str(afile), "--no-progress"], *expected)
    _refused(["score", str(results), "--out", str(afile)], *expected)
    _refused(["bench", "build", "--store", str(demo_store), "--out", str(afile), "--tasks", "omr"], *expected)
    _refused(["demo", "--store", str(demo_store), "--tasks", "omr", "--out", str(afile), "--no-progress"], *expected)
    _refused(["distill", "export", str(results), "--out", str(afile)], *expected)
    _refused(["run", "--bench", str(bench), "--store", str(demo_store), "--model", "baseline:null", "--mode", "curated",
              "--out", str(afile / "sub"), "--no-progress"], f"{afile} is a file, not a folder")
    assert afile.read_text() == "mine"


def test_report_out_that_is_a_folder_is_refused(tmp_path: Path, results: Path) -> None:
    _refused(["report", str(results), "--out", str(tmp_path)], f"--out {tmp_path}: is a folder, expected a file name")


@pytest.mark.skipif(not Path("/sys").is_dir(), reason="needs a read-only /sys")
def test_an_unwritable_out_is_refused(results: Path, bench: Path, demo_store: Path) -> None:
    try:
        check_out(Path("/sys/clinseek-x"), "dir")
    except ClinseekError as err:
        assert "cannot write in /sys" in str(err)
    else:
        pytest.skip("/sys is writable here")
    _refused(["score", str(results), "--out", "/sys/x"], "--out /sys/x: cannot write in /sys")
    _refused(["report", str(results), "--out", "/sys/x/r.html"], "cannot write in /sys")
    _refused(["distill", "export", str(results), "--out", "/sys/x"], "cannot write in /sys")
    _refused(["bench", "build", "--store", str(demo_store), "--out", "/sys/x", "--tasks", "omr"], "cannot write in /sys")
    _refused(["demo", "--store", str(demo_store), "--out", "/sys/x", "--no-progress"], "cannot write in /sys")
    _refused(["data", "synth", "--out", "/sys/x.duckdb", "--patients", "1"], "cannot write in /sys")


def test_the_console_script_prints_one_line_and_exits_2(tmp_path: Path, results: Path) -> None:
    afile = tmp_path / "afile"
    afile.write_text("mine")
    proc = subprocess.run([*MAIN, "score", str(results), "--out", str(afile)], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.strip() == f"error: --out {afile}: is a file, expected a folder; give a folder path"


@pytest.mark.parametrize("value", ["0", "-5"])
def test_resamples_below_one_is_a_usage_error(results: Path, tmp_path: Path, value: str) -> None:
    for args in (["score", str(results), "--out", str(tmp_path)], ["compare", str(results), str(results)]):
        result = _invoke([*args, "--resamples", value])
        assert result.exit_code == 2
        assert "--resamples" in result.output and "greater than or equal to 1" in result.output
    assert not any(tmp_path.iterdir())


def test_run_exits_3_while_infra_errors_remain_and_a_rerun_resumes(synthetic_store: Path, tmp_path: Path) -> None:
    bench = tmp_path / "bench"
    build_benchmark(synthetic_store, tasks=["omr", "cxr_finding_presence"], per_task=1, seed=42, out=bench)
    empty = tmp_path / "no_images"  # the linked CXR files are not there: an infra error naming the file
    empty.mkdir()
    args = ["run", "--bench", str(bench), "--store", str(synthetic_store), "--model", "baseline:null", "--mode",
            "curated", "--out", str(tmp_path / "r"), "--no-progress", "--cxr-root", str(empty)]
    first = _invoke(args)
    assert first.exit_code == EXIT_INFRA_ERRORS == 3, first.output
    assert "1 infra errors of 1" in first.output and "rerun the same command" in first.output
    cause = next(line for line in first.output.splitlines() if line.startswith("infra error (1 run): "))
    assert str(empty) in cause, cause  # what went wrong, not only how often (newcomer25)
    second = _invoke(args)
    assert second.exit_code == 3 and "(resumed 1)" in second.output  # the text question is kept


def test_a_patient_the_store_does_not_hold_is_an_invalid_row(bench: Path, demo_store: Path, tmp_path: Path) -> None:
    rows = json.loads((bench / "ClinSeek-Bench_text.json").read_text())
    ghost = {**rows[0], "qid": "ghost", "subject_id": 1}
    manifest = tmp_path / "with_ghost.json"
    manifest.write_text(json.dumps([*rows, ghost]))
    result = _invoke(["run", "--bench", str(manifest), "--store", str(demo_store), "--model", "baseline:null",
                      "--mode", "curated", "--out", str(tmp_path / "r"), "--no-progress"])
    assert result.exit_code == EXIT_INVALID_INPUT == 4, result.output
    assert "1 invalid input of 2" in result.output and "subject_id 1 is not in the store" in result.output


def test_ingest_without_sources_names_the_options(tmp_path: Path) -> None:
    _refused(["data", "ingest", "--out", str(tmp_path / "s.duckdb")],
             "nothing to ingest: give at least one of --mimic-iv, --ed, --note, --cxr")
    assert not any(tmp_path.iterdir())


def test_run_help_describes_every_option() -> None:
    result = _invoke(["run", "--help"])
    for needle in ("Independent runs", "Question runs in", "Base seed", "Model turns", "Output-token cap",
                   "Sampling temperature"):
        assert needle in result.output


def _ctrl_c_as_a_shell_leaves_it() -> None:
    """In the child before it starts: SIGINT's default action, as an interactive shell gives a foreground command.
    An ignored SIGINT is inherited (and Python then installs no KeyboardInterrupt handler), so a parent that
    ignores it (a CI runner, a ``nohup``) would make the child deaf to the Ctrl-C this test sends."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_ctrl_c_during_ingest_without_progress_exits_130_with_one_line(shared_data: Path, tmp_path: Path) -> None:
    out = tmp_path / "i.duckdb"
    proc = subprocess.Popen([*MAIN, "data", "ingest", "--mimic-iv", str(shared_data / "mimic-iv-demo-2.2"),
                             "--out", str(out), "--no-progress"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, preexec_fn=_ctrl_c_as_a_shell_leaves_it)
    deadline = time.monotonic() + 60
    while not out.exists() and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    # the store file exists: the table loads (seconds) have begun. Ctrl-C as a user presses it: again
    # until the process ends (a single SIGINT was seen to go unanswered once in a full, loaded test run)
    while proc.poll() is None and time.monotonic() < deadline:
        os.kill(proc.pid, signal.SIGINT)
        try:
            proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            continue
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr and stderr.strip() == INTERRUPTED


@pytest.mark.parametrize(
    "extra",
    [["--requests-per-s", "0"], ["--requests-per-s", "-1"], ["--temperature", "-5"]],
)
def test_run_refuses_rates_and_temperatures_out_of_range(extra: list[str], tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app, ["run", "--bench", str(tmp_path), "--store", str(tmp_path / "s.duckdb"), "--model", "baseline:null",
              "--out", str(tmp_path / "out"), *extra],
    )
    assert result.exit_code == 2 and extra[0] in result.output


@pytest.mark.parametrize(("command", "option", "value", "message"), [
    (["run"], "--mode", "agents", "'agents' is not one of 'agent', 'curated', 'both' (did you mean 'agent'?)"),
    (["run"], "--knowledge", "ofline", "'ofline' is not one of 'offline', 'web', 'off' (did you mean 'offline'?)"),
    (["run"], "--search-backend", "bing", "'bing' is not one of 'serper', 'brave', 'searxng', 'duckduckgo'"),
    (["mcp", "serve"], "--tool-names", "dots", "'dots' is not one of 'dotted', 'safe' (did you mean 'dotted'?)"),
    (["mcp", "serve"], "--knowledge", "on", "'on' is not one of 'offline', 'off'"),
])
def test_a_choice_option_names_its_choices_and_the_closest(command: list[str], option: str, value: str, message: str,
                                                            tmp_path: Path) -> None:
    """newcomer20: typer's own message for an enum option began with pydantic's "Value error, " and suggested nothing."""
    common = {"run": ["--bench", str(tmp_path), "--store", str(tmp_path / "s.duckdb"), "--model", "baseline:null",
                      "--out", str(tmp_path / "out")], "mcp": ["--store", str(tmp_path / "s.duckdb")]}[command[0]]
    result = _invoke([*command, *common, option, value])
    assert result.exit_code == 2
    assert message in result.output and "Value error" not in result.output, result.output
    assert f"{option} <" in _invoke([*command, "--help"]).output  # the choices stay in the help


def test_run_refuses_a_cache_dir_that_is_a_file(tmp_path: Path) -> None:
    afile = tmp_path / "afile"
    afile.write_text("x")
    result = CliRunner().invoke(
        app, ["run", "--bench", str(tmp_path), "--store", str(tmp_path / "s.duckdb"), "--model", "baseline:null",
              "--out", str(tmp_path / "out"), "--cache-dir", str(afile)],
    )
    assert result.exit_code != 0 and "--cache-dir" in str(result.exception or result.output)


def test_an_interrupt_inside_duckdb_exits_130_without_a_traceback(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import duckdb

    from clinseek.cli import main

    def interrupted(*args: object, **kwargs: object) -> None:
        raise duckdb.InterruptException("INTERRUPT Error: Interrupted!")

    monkeypatch.setattr("clinseek.bench.build_benchmark", interrupted)
    monkeypatch.setattr(sys, "argv", ["clinseek", "bench", "build", "--store", "s.duckdb", "--out", "nowhere"])
    with pytest.raises(SystemExit) as info:
        main()
    assert info.value.code == 130
    assert capsys.readouterr().err.strip() == INTERRUPTED


def test_ctrl_c_in_a_run_without_progress_bars_says_what_happened(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A KeyboardInterrupt inside a command (typer turns it into a bare exit 130) prints one line."""
    from clinseek.cli import main

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr("clinseek.bench.prepare_run", interrupted)
    monkeypatch.setattr(sys, "argv", ["clinseek", "run", "--bench", str(tmp_path), "--store", str(tmp_path / "s.duckdb"),
                                      "--model", "baseline:null", "--out", str(tmp_path / "out"), "--no-progress"])
    with pytest.raises(SystemExit) as info:
        main()
    assert info.value.code == 130
    assert capsys.readouterr().err.strip() == INTERRUPTED and "the same command resumes" in INTERRUPTED


@pytest.mark.parametrize("folder", ["", "hosp"])
def test_a_folder_of_mimic_files_given_as_store_says_to_ingest_it(shared_data: Path, tmp_path: Path,
                                                                  folder: str) -> None:
    """fixnc21: `tool`, `mcp serve`, `demo`, `bench build` said "no such store file" for an existing folder; every
    command taking a store now says what `data info` says (one check: clinseek.store.store_file_problem)."""
    mimic = shared_data / "mimic-iv-demo-2.2"
    given = mimic / folder if folder else mimic
    line = (f"{given}: is a folder of MIMIC files, not a clinseek store (one DuckDB file); ingest it first: "
            f"clinseek data ingest --mimic-iv {mimic} --out mimic.duckdb")
    for args in (["tool", "--store", str(given), "--subject-id", "1", "--prediction-time", "2180-01-01",
                  "ehr.get_table_names"], ["mcp", "serve", "--store", str(given)]):
        result = _invoke(args)
        assert result.exit_code == 2 and line in " ".join(result.output.replace("│", "").split()), result.output
    for args in (["data", "info", str(given)], ["demo", "--store", str(given), "--out", str(tmp_path / "d"),
                                                "--no-progress"],
                 ["bench", "build", "--store", str(given), "--out", str(tmp_path / "b"), "--tasks", "omr"]):
        result = _invoke(args)
        assert isinstance(result.exception, ClinseekError) and str(result.exception) == line, result.output
    empty = tmp_path / "empty"
    empty.mkdir()
    _refused(["data", "info", str(empty)], f"{empty}: is a directory; a clinseek store is one DuckDB file")


def test_bench_build_into_a_non_empty_folder_names_it_and_the_fix(demo_store: Path, tmp_path: Path) -> None:
    """fixnc21: "bench: output directory exists and is not empty" said neither what to do nor (for a relative
    path) much of where."""
    taken = tmp_path / "bench"
    taken.mkdir()
    (taken / "mine.txt").write_text("x")
    _refused(["bench", "build", "--store", str(demo_store), "--out", str(taken), "--tasks", "omr"])
    result = _invoke(["bench", "build", "--store", str(demo_store), "--out", str(taken), "--tasks", "omr"])
    assert str(result.exception) == (f"{taken}: output directory exists and is not empty; "
                                     "choose another --out (a new or empty folder)")


@pytest.mark.parametrize(("args", "example"), [
    (["data", "ingest", "--mimic-iv", "."], "mimic.duckdb"),
    (["data", "synth", "--patients", "1"], "synthetic.duckdb"),
    (["report", "r"], "report.html"),
])
def test_a_folder_given_for_an_output_file_suggests_the_commands_kind_of_file(tmp_path: Path, args: list[str],
                                                                              example: str) -> None:
    """fixnc21: `data ingest --out bench` suggested bench/report.html for a store."""
    result = _invoke([*args, "--out", str(tmp_path)])
    assert isinstance(result.exception, ClinseekError), result.output
    assert str(result.exception) == f"--out {tmp_path}: is a folder, expected a file name (e.g. {tmp_path / example})"


def test_run_stops_with_one_message_and_exit_3_when_the_endpoint_is_gone(demo_store: Path, tmp_path: Path) -> None:
    import socket

    bench = tmp_path / "bench"
    build_benchmark(demo_store, tasks=["omr"], per_task=4, seed=42, out=bench)
    with socket.socket() as probe:  # a port nothing listens on: every connection is refused
        probe.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{probe.getsockname()[1]}/v1"
    args = ["run", "--bench", str(bench), "--store", str(demo_store), "--model", "openai:fake-model", "--base-url", url,
            "--mode", "curated", "--out", str(tmp_path / "r"), "--no-progress", "--no-preflight", "--knowledge", "off",
            "--max-attempts", "1", "--concurrency", "1", "--stop-after-no-reply", "2"]
    result = CliRunner().invoke(app, args, env={"COLUMNS": "200", "OPENAI_API_KEY": "sk-test"})
    assert result.exit_code == EXIT_INFRA_ERRORS, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1, result.output  # one message, no summary, no traceback
    assert lines[0].startswith(f"error: the model endpoint {url} (openai:fake-model) stopped answering: 2 calls")
    assert "2 question runs were not run and 2 ended as infrastructure errors" in lines[0]
    assert "connection failed" in lines[0]
    assert "rerun the same command" in lines[0] and lines[0].endswith("exit code 3")
