"""The editable price table and cost arithmetic."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from clinseek.errors import ModelError
from clinseek.models import PriceTable, Usage


def test_the_shipped_table_prices_the_paper_models() -> None:
    table = PriceTable.load()
    for name in ["openai:gpt-5.1", "anthropic:claude-opus-4-6", "bedrock:us.anthropic.claude-opus-4-6-v1"]:
        assert table.price(name) is not None, name


def test_unknown_models_cost_none_not_zero() -> None:
    assert PriceTable.load().cost_usd("openai:Qwen/Qwen3.5-35B-A3B", Usage(input_tokens=10)) is None


def test_cost_splits_uncached_cached_written_and_output() -> None:
    table = PriceTable.load()
    usage = Usage(input_tokens=3_000_000, output_tokens=1_000_000, cached_input_tokens=1_000_000, cache_write_tokens=1_000_000)
    # anthropic:claude-haiku-4-5: 1 in, 5 out, 0.10 cached, 1.25 write
    assert table.cost_usd("anthropic:claude-haiku-4-5", usage) == Decimal("1") + Decimal("0.1") + Decimal("1.25") + Decimal("5")


def test_an_override_file_adds_and_replaces_entries(tmp_path: Path) -> None:
    override = tmp_path / "prices.toml"
    override.write_text(
        '[models."openai:Qwen/Qwen3.5-35B-A3B"]\ninput = "0.10"\noutput = "0.40"\n'
        '[models."openai:gpt-5.1"]\ninput = 2\noutput = 20\ncached_input = "0.2"\n'
    )
    table = PriceTable.load(override)
    qwen = table.price("openai:Qwen/Qwen3.5-35B-A3B")
    assert qwen is not None and qwen.cached_input == Decimal("0.10")  # defaults to the input price
    assert table.cost_usd("openai:gpt-5.1", Usage(input_tokens=1_000_000)) == Decimal("2")
    assert table.price("anthropic:claude-opus-4-6") is not None  # the rest of the shipped table stays


def test_a_bad_entry_names_the_file_model_and_field(tmp_path: Path) -> None:
    override = tmp_path / "prices.json"
    override.write_text('{"models": {"openai:x": {"input": "cheap", "output": "1"}}}')
    with pytest.raises(ModelError, match=r"prices\.json: model 'openai:x': field 'input'"):
        PriceTable.load(override)
    override.write_text('{"models": {"openai:x": {"input": "-1", "output": "1"}}}')
    with pytest.raises(ModelError, match="field 'input'"):
        PriceTable.load(override)
    with pytest.raises(ModelError, match="cannot read"):
        PriceTable.load(tmp_path / "missing.toml")


def test_usage_adds_up() -> None:
    total = Usage(input_tokens=5, output_tokens=2, cached_input_tokens=1) + Usage(input_tokens=1, cache_write_tokens=1)
    assert (total.input_tokens, total.output_tokens, total.cached_input_tokens, total.cache_write_tokens) == (6, 2, 1, 1)
    assert total.total_tokens == 8
