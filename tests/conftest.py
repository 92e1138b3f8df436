"""Shared fixtures: the open MIMIC-IV demo (read from ../shared/data, never copied) and stores built from it.

Fixtures here are session-scoped and built lazily, so a test file only pays for what it uses.
Per-area fixtures live in conftest.py files of the test sub-folders.
"""

from __future__ import annotations

import os
import re
import signal
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import anyio.to_thread
import pytest

from fakes.llm_servers import AnthropicFake, OpenAIFake

if TYPE_CHECKING:
    from clinseek.episode import StoreReader
    from pgserver import PgDatabase, PgServer

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA_SKIP = "open MIMIC-IV demo not found at"
"""Start of the skip reason of every test that needs the shared data (the session summary counts them)."""
EXTRA_OF_MODULE = {"torch": "imaging", "torchxrayvision": "imaging", "torchvision": "imaging",
                   "transformers": "dev", "playwright": "dev", "pypdf": "dev", "trafilatura": "dev",
                   "openai": "dev", "anthropic": "dev", "httpx2": "dev", "ray": "dev", "psycopg": "dev",
                   "psycopg_pool": "dev", "inspect_ai": "dev"}
"""Which extra of the README's test command brings a module that a test imports or skips without."""


def _shared_data() -> Path:
    env = os.environ.get("CLINSEEK_SHARED_DATA")
    return Path(env) if env else REPO.parent / "shared" / "data"


def _skip_reason(report: pytest.TestReport) -> str:
    longrepr = report.longrepr
    reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
    return reason.removeprefix("Skipped: ")


def _skip_groups(reasons: list[str]) -> list[tuple[int, str]]:
    """(count, what would run them) per kind of skip, shared data first."""
    shared, extras, other = 0, Counter[str](), Counter[str]()
    for reason in reasons:
        module = re.match(r"could not import '([\w.]+)'", reason)
        if reason.startswith(SHARED_DATA_SKIP):
            shared += 1
        elif module and module.group(1).split(".")[0] in EXTRA_OF_MODULE:
            extras[EXTRA_OF_MODULE[module.group(1).split(".")[0]]] += 1
        else:
            other[reason] += 1
    groups = []
    if shared:
        groups.append((shared, f"need the open MIMIC-IV demo (and -ED demo, CXR samples), not found at {_shared_data()}: "
                               "set CLINSEEK_SHARED_DATA to a folder holding mimic-iv-demo-2.2/ (README, 'Tests')"))
    groups += [(n, f"need the [{extra}] extra: pip install -e '.[dev,imaging]'") for extra, n in sorted(extras.items())]
    groups += [(n, reason) for reason, n in other.most_common()]
    return groups


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """One section that counts the skipped tests by what would run them (shared data, an extra, ...)."""
    reasons = [_skip_reason(r) for r in terminalreporter.stats.get("skipped", [])]
    if not reasons:
        return
    terminalreporter.write_sep("=", f"{len(reasons)} skipped, by what would run them (pytest -rs lists each)")
    for count, what in _skip_groups(reasons):
        terminalreporter.write_line(f"{count:5d}  {what}")


@pytest.fixture(autouse=True)
def _sigint_handler_given_back() -> Iterator[None]:
    """A test that runs the console script in process (``clinseek.cli.main`` ignores Ctrl-C once interrupted) gives
    back the SIGINT handler it found: an ignored SIGINT is inherited by every subprocess a later test starts."""
    handler = signal.getsignal(signal.SIGINT)
    yield
    if signal.getsignal(signal.SIGINT) is not handler:
        signal.signal(signal.SIGINT, handler)


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
        pytest.skip(f"{SHARED_DATA_SKIP} {path} (set CLINSEEK_SHARED_DATA)")
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


@pytest.fixture(scope="module")
def demo_reader(demo_store: Path) -> Iterator[StoreReader]:
    """One reader of the demo store per test module: the module's episodes are built from it, as a run builds
    them (a build from the store's path opens and checks the store again, ~0.2-0.4 s per episode)."""
    from clinseek.episode import open_store_reader

    with open_store_reader(demo_store) as reader:
        yield reader


@pytest.fixture(scope="session")
def synthetic_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small synthetic store (40 patients, seed 7) built once per session with the shipped generator."""
    from clinseek.store import synthesize

    out = tmp_path_factory.mktemp("synthetic_store") / "synthetic.duckdb"
    synthesize(out=out, patients=40, seed=7)
    return out


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    """A throwaway PostgreSQL server for the session (``tests/pgserver.py``): started from the machine's
    server binaries (as user ``nobody`` under root), stopped and removed at the end; skipped, with the
    reason, when there are none."""
    from pgserver import PgServer, skip_reason

    reason = skip_reason()
    if reason is not None:
        pytest.skip(reason)
    pytest.importorskip("psycopg")
    with PgServer() as server:
        yield server


@pytest.fixture(scope="session")
def pg_demo_template(pg_server: PgServer, shared_data: Path) -> PgDatabase:
    """The MIMIC-IV demo 2.2 and MIMIC-IV-ED demo 2.2 loaded into a mimic-code-shaped database (schemas
    ``mimiciv_hosp``, ``mimiciv_icu``, ``mimiciv_ed``; read-only role ``clinseek_reader``), never connected
    to: the demo databases of tests are copies of it."""
    from pgserver import create_reader, load_csv_dirs

    admin = pg_server.create_database("mimiciv_demo_template")
    counts = load_csv_dirs(admin, {"hosp": shared_data / "mimic-iv-demo-2.2" / "hosp",
                                   "icu": shared_data / "mimic-iv-demo-2.2" / "icu",
                                   "ed": shared_data / "mimic-iv-ed-demo-2.2" / "ed"})
    create_reader(admin)
    return pg_server.database("mimiciv_demo_template", counts)


@pytest.fixture(scope="session")
def pg_demo(pg_server: PgServer, pg_demo_template: PgDatabase) -> PgDatabase:
    """The demo database every test reads and none changes (a copy of :func:`pg_demo_template`, indexed by
    ``clinseek data pg-index``)."""
    from clinseek.store import pg_index

    database = pg_server.database("mimiciv_demo", pg_demo_template.counts, template=pg_demo_template.name)
    pg_index(database.admin_url)
    return database


@pytest.fixture
def pg_scratch(pg_server: PgServer, pg_demo_template: PgDatabase) -> Iterator[PgDatabase]:
    """A copy of the demo database for one test to change (dropped after it)."""
    import uuid

    name = f"scratch_{uuid.uuid4().hex[:8]}"
    yield pg_server.database(name, pg_demo_template.counts, template=pg_demo_template.name)
    pg_server.drop_database(name)


@pytest.fixture(scope="session")
def pg_synthetic(pg_server: PgServer, synthetic_store: Path) -> PgDatabase:
    """The 40-patient synthetic store in a mimic-code-shaped database with every module (``mimiciv_note``,
    ``mimiciv_cxr`` too) and ``chartevents`` partitioned by ``itemid`` ranges."""
    from clinseek.store import pg_index
    from pgserver import create_reader, load_store

    admin = pg_server.create_database("synthetic")
    counts = load_store(admin, synthetic_store)
    create_reader(admin)
    pg_index(admin)
    return pg_server.database("synthetic", counts)


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


@pytest.fixture
def hand_offs(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """One entry per hand-off of work to a worker thread (anyio's ``to_thread.run_sync``)."""
    counted: list[int] = []
    run_sync = anyio.to_thread.run_sync

    async def counting(*args: Any, **kwargs: Any) -> Any:
        counted.append(1)
        return await run_sync(*args, **kwargs)

    monkeypatch.setattr(anyio.to_thread, "run_sync", counting)
    return counted
