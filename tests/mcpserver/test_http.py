"""The HTTP mode over real loopback HTTP: each bearer token reaches its own episode and nothing else.

Two tokens for two patients of the MIMIC-IV demo behind one server; several clients per token call at
the same time; each sees only its own patient and cutoff, with the texts the direct path gives. An
unknown, expired or revoked token (or none) gets HTTP 401 and no patient data; a token over its rate
gets 429; the pool keeps at most ``max_open`` episodes open.
"""

from __future__ import annotations

import datetime as dt
import json
import shutil
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
from _mcp_helpers import check_server, http_client, http_server, pick_cases
from _tool_cases import CANDIDATES, Case

import clinseek
from clinseek.mcpserver import EpisodeSpec, HttpSettings, http_app, mint_token, revoke_token
from clinseek.mcpserver._tokens import utc_now

_OPEN = HttpSettings(rate_per_s=10_000, burst=10_000)
_LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
_INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}}
_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def _spec(case: Case) -> EpisodeSpec:
    return EpisodeSpec(store=case.store, subject_id=case.subject_id, prediction_time=case.prediction_time,
                       candidates=CANDIDATES)


@pytest.fixture(scope="module")
def two_patients(demo_store: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Case], list[str]]:
    """A token file with one token for each of two demo patients."""
    cases = pick_cases(demo_store, 2)
    assert cases[0].subject_id != cases[1].subject_id
    path = tmp_path_factory.mktemp("mcp_http") / "tokens.json"
    tokens = [mint_token(path, _spec(case), note=f"patient {i}")[0] for i, case in enumerate(cases)]
    return path, cases, tokens


def _probes(case: Case, other: Case) -> list[tuple[str, dict[str, Any]]]:
    return [
        ("ehr.load_ehr", {}),
        ("ehr.run_sql_query", {"sql_query": "SELECT DISTINCT subject_id FROM hosp.admissions"}),
        ("ehr.run_sql_query", {"sql_query": "SELECT count(*) AS n, max(charttime) AS last FROM hosp.labevents"}),
        ("ehr.get_latest_records", {"table_name": "labevents"}),
        ("ehr.load_ehr", {"subject_id": other.subject_id}),  # the other patient: refused (pinned)
        ("ehr.run_sql_query", {"sql_query": f"SELECT * FROM hosp.admissions WHERE subject_id = {other.subject_id}"}),
    ]


def test_each_token_reaches_only_its_own_episode_under_concurrent_clients(two_patients: Any) -> None:
    path, cases, tokens = two_patients
    app = http_app(path, _OPEN)
    expected: dict[int, list[str]] = {}
    seen: list[tuple[int, int]] = []

    async def direct_texts() -> None:
        for case, other in zip(cases, cases[::-1], strict=True):
            async with await clinseek.open_episode_async(case.store, case.subject_id, case.prediction_time,
                                                         candidates=CANDIDATES) as direct:
                expected[case.subject_id] = [(await direct.call_tool_async(n, a)).text for n, a in _probes(case, other)]

    async def one_client(case: Case, other: Case, token: str) -> None:
        async with http_client(url, token) as client:
            for _ in range(3):
                for (name, args), want in zip(_probes(case, other), expected[case.subject_id], strict=True):
                    got = await client.call_tool(name, args)
                    assert got.content[0].text == want, (case.subject_id, name, args)
                    if not got.is_error:  # a refusal names the subject_id it was sent, nothing more
                        assert str(other.subject_id) not in want, (name, args)
            loaded = (await client.call_tool("ehr.load_ehr", {})).structured_content["data"]
            seen.append((loaded["subject_id"], case.subject_id))
            assert loaded["prediction_time"] == case.prediction_time.isoformat(sep=" ")

    anyio.run(direct_texts)
    with http_server(app) as url:
        async def main() -> None:
            async with anyio.create_task_group() as tg:
                for _ in range(3):
                    for case, other, token in zip(cases, cases[::-1], tokens, strict=True):
                        tg.start_soon(one_client, case, other, token)

        anyio.run(main)
    assert sorted(seen) == sorted([(c.subject_id, c.subject_id) for c in cases] * 3)
    assert app.state.pool.opened_total == 2, "each token's episode is opened once and shared by its clients"
    assert any("refused" in t or "pinned" in t for t in expected[cases[0].subject_id])


@pytest.mark.slow
def test_every_tool_and_refusal_over_http_matches_the_direct_path(two_patients: Any) -> None:
    path, cases, tokens = two_patients
    with http_server(http_app(path, _OPEN)) as url:
        async def check(case: Case, token: str) -> None:
            async with http_client(url, token) as client, \
                    await clinseek.open_episode_async(case.store, case.subject_id, case.prediction_time,
                                                      candidates=CANDIDATES) as direct:
                await check_server(client, direct, case)

        async def main() -> None:
            async with anyio.create_task_group() as tg:
                for case, token in zip(cases, tokens, strict=True):
                    tg.start_soon(check, case, token)

        anyio.run(main)


def _post(url: str, token: str | None, body: dict[str, Any] = _LIST) -> httpx2.Response:
    headers = {**_HEADERS, **({"Authorization": f"Bearer {token}"} if token is not None else {})}
    return httpx2.post(url, headers=headers, content=json.dumps(body), timeout=60)


def test_unknown_expired_and_revoked_tokens_get_nothing(two_patients: Any, tmp_path: Path) -> None:
    path, cases, tokens = two_patients
    mine = tmp_path / "tokens.json"
    mine.write_bytes(path.read_bytes())
    expired, _ = mint_token(mine, _spec(cases[0]), expires_in=dt.timedelta(minutes=5),
                            now=utc_now() - dt.timedelta(hours=1))
    revoked, record = mint_token(mine, _spec(cases[1]))
    with http_server(http_app(mine, _OPEN)) as url:
        good = _post(url, tokens[0], _INIT)
        assert good.status_code == 200, good.text
        assert _post(url, revoked).status_code == 200
        revoke_token(mine, record.id)
        refused = [_post(url, t) for t in (None, "csk_not-a-token", tokens[0] + "x", expired, revoked)]
        refused.append(httpx2.post(url, headers={**_HEADERS, "Authorization": f"Basic {tokens[0]}"},
                                   content=json.dumps(_LIST), timeout=60))
        for response in refused:
            assert response.status_code == 401, response.text
            assert all(str(c.subject_id) not in response.text for c in cases)
        assert "tools" not in _post(url, expired, _INIT).text

        async def client_with_bad_token() -> None:
            async with http_client(url, "csk_not-a-token") as client:
                await client.list_tools()

        with pytest.raises(BaseException):  # noqa: B017 - the SDK raises its transport's error for a 401
            anyio.run(client_with_bad_token)


def test_a_token_over_its_rate_gets_429(two_patients: Any) -> None:
    path, _, tokens = two_patients
    with http_server(http_app(path, HttpSettings(rate_per_s=0.01, burst=2))) as url:
        codes = [_post(url, tokens[0]).status_code for _ in range(3)]
        assert codes == [200, 200, 429]
        limited = _post(url, tokens[0])
        assert limited.status_code == 429 and int(limited.headers["retry-after"]) >= 1
        assert _post(url, tokens[1]).status_code == 200, "the rate is per token"


def test_the_pool_keeps_at_most_max_open_episodes(two_patients: Any) -> None:
    path, cases, tokens = two_patients
    app = http_app(path, HttpSettings(max_open=1, rate_per_s=10_000, burst=10_000))
    with http_server(app) as url:
        for token, case in [(tokens[0], cases[0]), (tokens[1], cases[1]), (tokens[0], cases[0])]:
            response = _post(url, token, {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                                          "params": {"name": "ehr.load_ehr", "arguments": {}}})
            assert response.status_code == 200 and f"subject_id {case.subject_id}" in response.text
            assert len(app.state.pool.open_ids) == 1
    assert app.state.pool.opened_total == 3


def test_a_server_failure_reaches_no_client_as_text(demo_store: Path, tmp_path: Path) -> None:
    """A tool that fails on the server (here: the store file damaged under an open episode) is a generic
    internal error for every client, old protocol versions included: never the server's exception text
    (the store's path, the database's message, values it quotes), which the agent loop never shows a model."""
    store = tmp_path / "store.duckdb"
    shutil.copyfile(demo_store, store)
    case = pick_cases(store, 1)[0]
    path = tmp_path / "tokens.json"
    token, _ = mint_token(path, _spec(case))

    def call(name: str, arguments: dict[str, Any]) -> httpx2.Response:
        return _post(url, token, {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                                  "params": {"name": name, "arguments": arguments}})

    with http_server(http_app(path, _OPEN)) as url:
        loaded = call("ehr.load_ehr", {}).json()["result"]["structuredContent"]["data"]["tables"]
        size = store.stat().st_size
        with store.open("r+b") as handle:  # damaged in place: the episode's reader still has it open
            handle.seek(size // 4)
            handle.write(b"\x5a" * (size - size // 4))
        replies = [call("ehr.run_sql_query", {"sql_query": f"SELECT count(*) FROM {name}"}) for name in loaded]
    failed = [r for r in replies if "error" in r.json()]
    assert failed, "damaging the store made no tool fail: the test shows nothing"
    for reply in replies:
        assert str(store) not in reply.text and str(tmp_path) not in reply.text and "checksum" not in reply.text
    assert all(r.json()["error"]["code"] == types.INTERNAL_ERROR for r in failed)
