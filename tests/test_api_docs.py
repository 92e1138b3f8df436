"""docs/api.md: every example runs as written, in order, offline, on the synthetic store (STYLE rule 17)."""

from __future__ import annotations

import re
import shlex
import socket
from pathlib import Path

import pytest
from typer.testing import CliRunner

import clinseek.api
from clinseek.cli import app

DOC = Path(__file__).resolve().parents[1] / "docs" / "api.md"
TEXT = DOC.read_text(encoding="utf-8")
PYTHON = re.findall(r"```python\n(.*?)```", TEXT, re.S)
SHELL = re.findall(r"```bash\n(.*?)```", TEXT, re.S)


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any attempt to open a network connection fails the example that makes it."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"docs/api.md examples must run offline; tried to connect to {args[1:]}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


@pytest.fixture(scope="module")
def doc_folder(synthetic_store: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder the doc sets up: ``store.duckdb`` (the session's synthetic store, which is what the doc's
    ``clinseek data synth`` line makes) and ``bench/`` built by the doc's own ``clinseek bench build`` line."""
    (setup,) = SHELL
    synth, build = (shlex.split(line) for line in setup.strip().splitlines())
    assert synth == ["clinseek", "data", "synth", "--out", "store.duckdb", "--patients", "40"]  # = the fixture
    folder = tmp_path_factory.mktemp("api_docs")
    (folder / "store.duckdb").symlink_to(synthetic_store)
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(folder)
        done = CliRunner().invoke(app, build[1:])
    assert done.exit_code == 0, done.output
    return folder


def test_every_front_door_function_has_an_example() -> None:
    code = "\n".join(PYTHON)
    missing = [name for name in clinseek.api.__all__ if f"clinseek.{name}(" not in code]
    assert not missing, f"docs/api.md has no example calling {missing}"


def test_every_front_door_function_is_in_the_signature_block() -> None:
    sync = [name for name in clinseek.api.__all__ if not name.endswith("_async")]
    assert [name for name in sync if f"clinseek.{name}(" not in TEXT.split("```")[1]] == []


@pytest.mark.usefixtures("no_network")
def test_the_examples_run_in_order(doc_folder: Path, monkeypatch: pytest.MonkeyPatch,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(doc_folder)
    for n, code in enumerate(PYTHON, 1):
        exec(compile(code, f"docs/api.md python block {n}", "exec"), {"__name__": "__main__"})
    shown = capsys.readouterr().out
    assert "Final answer recorded." not in shown and "['Potassium']" in shown
    assert (doc_folder / "report.html").is_file() and (doc_folder / "scores" / "summary.json").is_file()
