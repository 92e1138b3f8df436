"""Attack (session 12, curated12 / sqlwarm12): caches kept across episodes never carry one episode's text, rows or
shape into another's Curated Input.

The recorded golden cases (several patients, cutoffs inside and outside a stay, a hidden target admission, the MM
policy, budgets) rendered in reverse order, in an interleaved order and from four threads at once (every cache
warm with other patients', cutoffs' and policies' reads, and shared between threads), each byte for byte its
recorded digest (tests/bench/test_curated_golden.py).
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from clinseek.bench import render_curated
from clinseek.episode import StoreReader, open_store_reader

from .test_curated_golden import GOLDEN, _cases, _digest


@pytest.fixture(scope="module")
def reader(demo_store: Path) -> Iterator[StoreReader]:
    with open_store_reader(demo_store) as opened:
        yield opened


def _render(case: tuple) -> tuple[str, str]:
    name, question, budget, counter, reader = case
    return name, _digest(render_curated(question, reader, budget_tokens=budget, counter=counter))


def test_warm_caches_in_any_order_and_from_threads_give_the_recorded_texts(demo_store: Path, reader: StoreReader) -> None:
    cases = [(*case, reader) for case in _cases(demo_store)]
    shuffled = list(cases)
    random.Random(12).shuffle(shuffled)
    orders = [list(reversed(cases)), shuffled]
    changed = []
    for order in orders:
        for case in order:
            name, found = _render(case)
            if found != GOLDEN[name]:
                changed.append(f"sequential {name}: {found} (recorded {GOLDEN[name]})")
    with ThreadPoolExecutor(4) as pool:
        for name, found in pool.map(_render, [*cases, *reversed(cases), *shuffled]):
            if found != GOLDEN[name]:
                changed.append(f"threads {name}: {found} (recorded {GOLDEN[name]})")
    assert not changed, "Curated Input changed with warm caches:\n" + "\n".join(changed)
