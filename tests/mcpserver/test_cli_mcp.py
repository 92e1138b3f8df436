"""``clinseek mcp token | tokens | revoke`` and the episode options, docs/mcp.md, and the lazy import of the SDK."""

from __future__ import annotations

import inspect
import json
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from _tool_cases import Case
from typer.testing import CliRunner

from clinseek.cli import app
from clinseek.cli._mcp import _EPISODE_OPTIONS, http_cmd, revoke_cmd, token_cmd, tokens_cmd
from clinseek.errors import ClinseekError
from clinseek.mcpserver import TOKEN_PREFIX, TokenStore

DOCS = Path(__file__).resolve().parents[2] / "docs" / "mcp.md"


def _said(output: str) -> str:
    return " ".join(output.replace("│", " ").split())


def test_every_option_is_documented() -> None:
    text = DOCS.read_text(encoding="utf-8")
    names = [p.name for p in _EPISODE_OPTIONS]
    for command in (token_cmd, tokens_cmd, revoke_cmd, http_cmd):
        names += [n for n in inspect.signature(command).parameters if n not in ("episode", "token_id")]
    options = {f"--{n.replace('_', '-')}" for n in names} - {"--pictures"} | {"--pictures/--no-pictures"}
    assert sorted(o for o in options if o not in text) == []


def test_tokens_are_minted_listed_and_revoked(synthetic_case: Case, tmp_path: Path) -> None:
    tokens = tmp_path / "tokens.json"
    minted = CliRunner().invoke(app, [
        "mcp", "token", "--tokens", str(tokens), "--store", str(synthetic_case.store), "--subject-id",
        str(synthetic_case.subject_id), "--prediction-time", synthetic_case.prediction_time.isoformat(sep=" "),
        "--expires-in", "2h", "--note", "test"])
    assert minted.exit_code == 0, minted.output
    token = minted.stdout.strip().splitlines()[-1]
    assert token.startswith(TOKEN_PREFIX) and len(token) > 40
    assert stat.S_IMODE(tokens.stat().st_mode) == 0o600
    assert token not in tokens.read_text(), "only the token's hash is stored"
    record = TokenStore(tokens).lookup(token)
    assert record is not None and record.spec.subject_id == synthetic_case.subject_id
    listed = CliRunner().invoke(app, ["mcp", "tokens", "--tokens", str(tokens)])
    (line,) = [json.loads(x) for x in listed.stdout.splitlines()]
    assert (line["id"], line["state"], line["note"]) == (record.id, "valid", "test") and token not in listed.stdout
    revoked = CliRunner().invoke(app, ["mcp", "revoke", record.id, "--tokens", str(tokens)])
    assert revoked.exit_code == 0 and TokenStore(tokens).lookup(token) is None
    again = CliRunner().invoke(app, ["mcp", "revoke", record.id, "--tokens", str(tokens)])
    assert again.exit_code != 0 and f"no token {record.id!r}" in str(again.exception)


@pytest.mark.parametrize(("args", "expected"), [
    ([], "give --store"),
    (["--subject-id", "1"], "subject_id and prediction_time go together"),
    (["--subject-id", "1", "--prediction-time", "2150-01-01 00:00:00", "--qid", "q", "--bench", "."],
     "give exactly one episode"),
])
def test_an_episode_must_be_given_once(args: list[str], expected: str, synthetic_case: Case, tmp_path: Path) -> None:
    store = [] if not args else ["--store", str(synthetic_case.store)]
    result = CliRunner().invoke(app, ["mcp", "token", "--tokens", str(tmp_path / "t.json"), *store, *args])
    assert result.exit_code == 2 and expected in _said(result.output), result.output
    assert not (tmp_path / "t.json").exists()


def test_the_cli_does_not_import_the_mcp_sdk_until_an_mcp_command_runs() -> None:
    script = ("import sys\nfrom clinseek.cli import app\nfrom typer.testing import CliRunner\n"
              "assert CliRunner().invoke(app, ['mcp', '--help']).exit_code == 0\n"
              "CliRunner().invoke(app, ['run', '--help'])\n"
              "print(sorted(m for m in sys.modules if m.split('.')[0] in ('mcp', 'mcp_types', 'uvicorn', 'starlette')"
              " or m.startswith('clinseek.mcpserver')))")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_without_the_extra_the_commands_name_it(tmp_path: Path) -> None:
    script = ("import sys\nsys.modules['mcp'] = None\nfrom clinseek.cli import main\nsys.argv = ['clinseek', 'mcp', "
              f"'tokens', '--tokens', {str(tmp_path / 'x.json')!r}]\nopen(sys.argv[-1], 'w').write('{{}}')\nmain()")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert out.returncode != 0
    assert "pip install 'clinseek[mcp]'" in out.stdout + out.stderr, out


def _serve(args: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "clinseek", "mcp", "serve", *args], stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize(("episode", "expected"), [
    (["--subject-id", "1"], "subject_id 1 is not in hosp.patients"),
    (["--policy", "v9"], "unknown policy version 'v9'"),
    (["--tool", "ehr.nope"], "unknown tool 'ehr.nope'"),
    (["--bench", "nosuchbench", "--qid", "q"], "nosuchbench: no such manifest file or benchmark directory"),
])
def test_serve_says_an_episode_it_cannot_open_in_one_line(episode: list[str], expected: str,
                                                          synthetic_case: Case) -> None:
    """An ordinary mistake is one line ``error: ...`` and exit code 2 (not an ExceptionGroup's traceback, exit
    1), and nothing reaches stdout (the wire): the episode is opened before the server starts."""
    args = ["--store", str(synthetic_case.store)]
    if "--bench" not in episode:
        args += ["--subject-id", str(synthetic_case.subject_id),
                 "--prediction-time", synthetic_case.prediction_time.isoformat(sep=" ")]
    if "--subject-id" in episode:
        args = args[:2] + args[4:]  # the test's own --subject-id replaces the case's
    out = _serve([*args, *episode])
    assert (out.returncode, out.stdout) == (2, ""), out.stderr
    assert out.stderr.splitlines() == [out.stderr.strip()] and out.stderr.startswith("error: "), out.stderr
    assert expected in out.stderr


def test_a_clinseek_error_in_a_task_group_is_one_line(monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """Whatever command raises it: a ClinseekError an anyio task group wrapped in an ExceptionGroup is
    printed as one line with exit code 2; a group holding anything else stays a traceback."""
    from clinseek import cli
    from clinseek.errors import EpisodeError

    def raising(error: BaseException) -> None:
        def app() -> None:
            raise error
        monkeypatch.setattr(cli, "app", app)

    raising(ExceptionGroup("unhandled errors in a TaskGroup", [ExceptionGroup("inner", [EpisodeError("no such patient")])]))
    with pytest.raises(SystemExit) as done:
        cli.main()
    assert done.value.code == 2 and capsys.readouterr().err == "error: no such patient\n"
    raising(ExceptionGroup("mixed", [EpisodeError("no such patient"), ValueError("a bug")]))
    with pytest.raises(ExceptionGroup):
        cli.main()


def test_http_says_an_address_it_cannot_listen_on_and_a_bad_path_in_one_line(tmp_path: Path) -> None:
    """A port in use, an unknown host (were uvicorn's log and exit code 3, "infra errors" here) and an
    endpoint without its '/' (was starlette's AssertionError traceback) are one clear error each."""
    import socket

    tokens = tmp_path / "tokens.json"
    tokens.write_text("{}", encoding="utf-8")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        busy = CliRunner().invoke(app, ["mcp", "http", "--tokens", str(tokens), "--port", str(port)])
    assert isinstance(busy.exception, ClinseekError), busy.output
    assert f"cannot listen on 127.0.0.1:{port}:" in str(busy.exception)
    unknown = CliRunner().invoke(app, ["mcp", "http", "--tokens", str(tokens), "--host", "nosuchhost.invalid"])
    assert isinstance(unknown.exception, ClinseekError) and "cannot listen on nosuchhost.invalid" in str(unknown.exception)
    bad_path = CliRunner().invoke(app, ["mcp", "http", "--tokens", str(tokens), "--path", "mcp"])
    assert bad_path.exit_code == 2 and "an endpoint path starts with '/'" in _said(bad_path.output), bad_path.output


@pytest.mark.parametrize(("episode", "expected"), [
    (["--subject-id", "1"], "subject_id 1 is not in hosp.patients"),
    (["--policy", "v9"], "unknown policy version 'v9'"),
    (["--tool", "ehr.nope"], "unknown tool 'ehr.nope'"),
    (["--bench", "nosuchbench", "--qid", "q"], "nosuchbench: no such manifest file or benchmark directory"),
])
def test_token_refuses_an_episode_its_server_cannot_open(episode: list[str], expected: str, synthetic_case: Case,
                                                         tmp_path: Path) -> None:
    """No token for an unknown subject, policy, tool or question (was minted, exit 0; the first request then
    failed with "cannot be opened")."""
    tokens = tmp_path / "tokens.json"
    args = ["mcp", "token", "--tokens", str(tokens), "--store", str(synthetic_case.store)]
    if "--bench" not in episode:
        args += ["--prediction-time", synthetic_case.prediction_time.isoformat(sep=" ")]
        if "--subject-id" not in episode:
            args += ["--subject-id", str(synthetic_case.subject_id)]
    result = CliRunner().invoke(app, [*args, *episode])
    assert isinstance(result.exception, ClinseekError), result.output
    assert expected in str(result.exception) and not tokens.exists() and TOKEN_PREFIX not in result.stdout


def test_a_token_stores_its_paths_absolute(synthetic_case: Case, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``--store store.duckdb`` given relative to the folder the token is minted in is stored resolved, so
    ``clinseek mcp http`` started in another folder opens the same store (it said "cannot be opened")."""
    tokens = tmp_path / "tokens.json"
    monkeypatch.chdir(synthetic_case.store.parent)
    minted = CliRunner().invoke(app, [
        "mcp", "token", "--tokens", str(tokens), "--store", synthetic_case.store.name, "--subject-id",
        str(synthetic_case.subject_id), "--prediction-time", synthetic_case.prediction_time.isoformat(sep=" ")])
    assert minted.exit_code == 0, minted.output
    token = minted.stdout.strip().splitlines()[-1]
    monkeypatch.chdir(tmp_path)
    record = TokenStore(tokens).lookup(token)
    assert record is not None and record.spec.store == synthetic_case.store.resolve()
    listed = json.loads(CliRunner().invoke(app, ["mcp", "tokens", "--tokens", str(tokens)]).stdout)
    assert listed["store"] == str(synthetic_case.store.resolve())


def test_every_policy_name_in_the_docs_and_docstrings_exists() -> None:
    """A policy version named anywhere in docs/ or src/ is one of POLICY_VERSIONS (docs/mcp.md and two
    docstrings offered ``clinseek-mm-v1``, which no policy is called)."""
    from clinseek.policy import POLICY_VERSIONS

    root = Path(__file__).resolve().parents[2]
    pattern = re.compile(r"\b(?:clinseek-(?:text|mm|multimodal|cxr|image)|multimodal-[a-z-]+)-v\d+\b")
    files = [*(root / "docs").rglob("*.md"), root / "README.md", *(root / "src").rglob("*.py")]
    named = {(f.relative_to(root).as_posix(), m) for f in files for m in pattern.findall(f.read_text(encoding="utf-8"))}
    assert sorted((f, m) for f, m in named if m not in POLICY_VERSIONS) == []


def test_the_docs_examples_patient_is_in_the_open_demo(demo_store: Path) -> None:
    """docs/mcp.md's examples name a patient of the MIMIC-IV demo 2.2 at a cutoff inside one of its
    admissions (they named 10002610 at 2127-04-12 19:51:01, in no open data set)."""
    import duckdb

    text = DOCS.read_text(encoding="utf-8")
    subjects = set(re.findall(r'--subject-id"?,? "?(\d+)', text))
    times = set(re.findall(r'--prediction-time"?,? "(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)"', text))
    assert len(subjects) == 1 and len(times) == 1, (subjects, times)
    (subject,), (cutoff,) = subjects, times
    with duckdb.connect(str(demo_store), read_only=True) as db:
        spans = db.execute("SELECT count(*) FROM hosp.admissions WHERE subject_id = ? AND admittime < ?::TIMESTAMP "
                           "AND dischtime > ?::TIMESTAMP", [int(subject), cutoff, cutoff]).fetchone()
    assert spans == (1,), f"subject {subject} has no admission around {cutoff} in the demo"
    assert f'"clinseek-{subject}"' in text


@pytest.mark.parametrize(("content", "extra", "expected"), [
    ("not json", [], "not an episode spec: the file: Invalid JSON"),
    ('{"store": "s.duckdb", "subject_id": "x", "prediction_time": "2150-01-01 00:00:00"}', [],
     "not an episode spec: subject_id: Input should be a valid integer"),
    (None, ["--cxr-root", "nosuchdir"], "'--cxr-root': path 'nosuchdir' does not exist"),
    (None, ["--docs", "nosuchdir"], "'--docs': path 'nosuchdir' does not exist"),
    (None, ["--candidate-tables", "nosuch.db"], "'--candidate-tables': path 'nosuch.db' does not exist"),
])
def test_a_bad_spec_file_or_missing_path_is_one_usage_error(content: str | None, extra: list[str], expected: str,
                                                            synthetic_case: Case, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """A spec file that does not validate is one line naming the field (was pydantic's multi-line report);
    a folder or file option that names nothing is refused before anything is served or minted."""
    monkeypatch.chdir(tmp_path)
    if content is not None:
        (tmp_path / "spec.json").write_text(content, encoding="utf-8")
        episode = ["--spec", "spec.json"]
    else:
        episode = ["--store", str(synthetic_case.store), "--subject-id", str(synthetic_case.subject_id),
                   "--prediction-time", synthetic_case.prediction_time.isoformat(sep=" ")]
    for command in (["serve"], ["token", "--tokens", "t.json"]):
        result = CliRunner().invoke(app, ["mcp", *command, *episode, *extra])
        assert result.exit_code == 2 and expected in _said(result.output), result.output
        assert not (tmp_path / "t.json").exists()
    if content is not None:
        said = result.output.strip().splitlines()[-1]
        assert said.startswith("Error: ") and expected in said


def test_an_unreadable_spec_or_token_file_and_a_huge_expiry_are_one_line(synthetic_case: Case, tmp_path: Path) -> None:
    """attack20: a spec or token file that is not UTF-8, an expiry past the calendar's end and a token file in a
    folder that cannot exist were tracebacks (UnicodeDecodeError, OverflowError, FileNotFoundError)."""
    (tmp_path / "spec.json").write_bytes(b"\xff\xfe not text")
    (tmp_path / "tokens.json").write_bytes(b"\xff\xfe")
    episode = ["--store", str(synthetic_case.store), "--subject-id", str(synthetic_case.subject_id),
               "--prediction-time", synthetic_case.prediction_time.isoformat(sep=" ")]
    spec = CliRunner().invoke(app, ["mcp", "token", "--tokens", str(tmp_path / "t.json"), "--spec",
                                    str(tmp_path / "spec.json")])
    assert spec.exit_code == 2 and "cannot read the episode spec" in _said(spec.output), spec.output
    listed = CliRunner().invoke(app, ["mcp", "tokens", "--tokens", str(tmp_path / "tokens.json")])
    assert isinstance(listed.exception, ClinseekError) and "cannot read the token file" in str(listed.exception)
    for expiry in ("9999999d", "1000000000d", "99999999999999999999999s"):
        huge = CliRunner().invoke(app, ["mcp", "token", "--tokens", str(tmp_path / "t.json"), *episode,
                                        "--expires-in", expiry])
        assert isinstance(huge.exception, ClinseekError) and "too far in the future" in str(huge.exception), expiry
    nowhere = CliRunner().invoke(app, ["mcp", "token", "--tokens", "/proc/nosuch/t.json", *episode])
    assert isinstance(nowhere.exception, ClinseekError) and "cannot write the token file" in str(nowhere.exception)
    assert not (tmp_path / "t.json").exists()
