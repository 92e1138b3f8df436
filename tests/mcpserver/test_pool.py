"""The HTTP mode's episode pool: one open episode per token, shared; idle and revoked ones closed; bounded."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from _tool_cases import Case

from clinseek.agent import EpisodeSession
from clinseek.mcpserver import EpisodePool, EpisodeSpec, PoolBusy, TokenRecord, mint_token, open_spec


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _records(case: Case, folder: Path, n: int) -> list[TokenRecord]:
    spec = EpisodeSpec(store=case.store, subject_id=case.subject_id, prediction_time=case.prediction_time)
    return [mint_token(folder / "tokens.json", spec)[1] for _ in range(n)]


def test_idle_and_revoked_episodes_are_closed_and_reopened_on_demand(synthetic_case: Case, tmp_path: Path) -> None:
    a, b = _records(synthetic_case, tmp_path, 2)
    clock = _Clock()
    pool = EpisodePool(lambda r: open_spec(r.spec), max_open=4, idle_close_s=60, clock=clock)
    sessions: list[EpisodeSession] = []

    async def main() -> None:
        async with pool.lease(a) as first, pool.lease(a) as again, pool.lease(b) as other:
            assert first is again and first is not other
            sessions.extend([first, other])
            clock.now = 1000.0
            assert await pool.close_idle() == [], "an episode in use is never closed"
        clock.now = 1030.0
        assert await pool.close_idle() == []
        assert sorted(await pool.close_idle(valid_ids={a.id})) == [b.id], "a revoked token's episode closes"
        clock.now = 1100.0
        assert await pool.close_idle(valid_ids={a.id}) == [a.id]
        assert all(s.closed for s in sessions) and pool.open_ids == []
        async with pool.lease(a) as reopened:
            assert not reopened.closed and reopened is not sessions[0]
        await pool.aclose()

    anyio.run(main)
    assert pool.opened_total == 3


def test_a_full_pool_closes_the_least_recent_idle_episode_or_says_busy(synthetic_case: Case, tmp_path: Path) -> None:
    a, b, c = _records(synthetic_case, tmp_path, 3)
    clock = _Clock()
    pool = EpisodePool(lambda r: open_spec(r.spec), max_open=2, idle_close_s=60, clock=clock)

    async def main() -> None:
        async with pool.lease(a) as first:
            clock.now = 1.0
            async with pool.lease(b):
                with pytest.raises(PoolBusy, match="2 episodes are open and in use"):
                    async with pool.lease(c):
                        pass
            clock.now = 2.0
            async with pool.lease(c):
                assert sorted(pool.open_ids) == sorted([a.id, c.id]), "b, idle, made room"
            assert not first.closed
        await pool.aclose()

    anyio.run(main)
