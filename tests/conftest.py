"""Shared fixtures: the open MIMIC-IV demo (read from ../shared/data, never copied) and stores built from it.

Fixtures here are session-scoped and built lazily, so a test file only pays for what it uses.
Per-area fixtures live in conftest.py files of the test sub-folders.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from fakes.llm_servers import AnthropicFake, OpenAIFake

REPO = Path(__file__).resolve().parents[1]


def _shared_data() -> Path:
    env = os.environ.get("CLINSEEK_SHARED_DATA")
    return Path(env) if env else REPO.parent / "shared" / "data"


@pytest.fixture(autouse=True)
def _no_api_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests never see real credentials (they talk to loopback servers only)."""
    for var in list(os.environ):
        if var.endswith("_API_KEY") or var in {
            "AWS_ACCESS_KEY_ID",
            "AWS_SECRET_ACCESS_KEY",
            "GOOGLE_APPLICATION_CREDENTIALS",
        }:
            monkeypatch.delenv(var, raising=False)


@pytest.fixture(scope="session", autouse=True)
def clinseek_cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """``$CLINSEEK_CACHE_DIR`` for the whole session: commands that default to it (``clinseek run``'s
    offline knowledge index) write here, never to ``~/.cache``, and build the index once per store."""
    path = tmp_path_factory.mktemp("clinseek_cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CLINSEEK_CACHE_DIR", str(path))
        yield path


@pytest.fixture(scope="session")
def knowledge_cache(clinseek_cache_dir: Path) -> Path:
    """The session's knowledge cache (``$CLINSEEK_CACHE_DIR/knowledge``, what ``clinseek run`` uses by default)."""
    return clinseek_cache_dir / "knowledge"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """``../shared/data`` (or ``$CLINSEEK_SHARED_DATA``); tests that need it skip when it is absent."""
    path = _shared_data()
    if not (path / "mimic-iv-demo-2.2").is_dir():
        pytest.skip(f"open MIMIC-IV demo not found at {path}")
    return path


@pytest.fixture(scope="session")
def demo_store(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store ingested from the MIMIC-IV demo 2.2 and the MIMIC-IV-ED demo 2.2 (built once per session)."""
    from clinseek.store import ingest

    out = tmp_path_factory.mktemp("demo_store") / "demo.duckdb"
    ingest(
        out=out,
        mimic_iv=shared_data / "mimic-iv-demo-2.2",
        ed=shared_data / "mimic-iv-ed-demo-2.2",
        progress=False,
    )
    return out


@pytest.fixture(scope="session")
def synthetic_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small synthetic store (40 patients, seed 7) built once per session with the shipped generator."""
    from clinseek.store import synthesize

    out = tmp_path_factory.mktemp("synthetic_store") / "synthetic.duckdb"
    synthesize(out=out, patients=40, seed=7)
    return out


@pytest.fixture
def openai_server() -> Iterator[OpenAIFake]:
    """A loopback fake of the OpenAI Chat Completions API (one per test); see ``tests/fakes/llm_servers.py``."""
    with OpenAIFake() as server:
        yield server  # type: ignore[misc]


@pytest.fixture
def anthropic_server() -> Iterator[AnthropicFake]:
    """A loopback fake of the Anthropic Messages API (one per test)."""
    with AnthropicFake() as server:
        yield server  # type: ignore[misc]
