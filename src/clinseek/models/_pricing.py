"""The editable price table: USD per million tokens per model, and the cost of one call.

The default table is ``clinseek/models/prices.json`` (shipped in the package). An override file
(JSON or TOML, same shape: ``{"models": {"provider:model": {"input": "1.25", "output": "10",
"cached_input": "0.125", "cache_write": "1.25", "aliases": [...]}}}``) is merged over it entry by
entry. Prices are decimals (strings or numbers); ``cached_input`` and ``cache_write`` default to
``input``. A model that is not in the table has cost ``None`` — unknown, never 0.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from importlib import resources
from pathlib import Path
from typing import Any

from ..errors import ModelError
from ._messages import Usage

_MTOK = Decimal(1_000_000)


@dataclass(frozen=True, slots=True)
class Price:
    """USD per million tokens for one model."""

    input: Decimal
    output: Decimal
    cached_input: Decimal
    cache_write: Decimal

    def cost_usd(self, usage: Usage) -> Decimal:
        """Cost of ``usage``: uncached input, cached input, cache writes and output at their rates."""
        uncached = max(usage.input_tokens - usage.cached_input_tokens - usage.cache_write_tokens, 0)
        total = (
            uncached * self.input
            + usage.cached_input_tokens * self.cached_input
            + usage.cache_write_tokens * self.cache_write
            + usage.output_tokens * self.output
        )
        return total / _MTOK


class PriceTable:
    """Prices by full model name (``provider:model``), aliases included."""

    def __init__(self, prices: Mapping[str, Price]) -> None:
        self._prices = dict(prices)

    @classmethod
    def load(cls, override: Path | str | None = None) -> PriceTable:
        """The shipped table, with the entries of ``override`` (JSON or TOML) merged over it.

        Raises:
            ModelError: an unreadable override file, or an entry with a missing or non-decimal price
                (the message names the file, the model and the field).
        """
        default = resources.files("clinseek.models").joinpath("prices.json").read_text(encoding="utf-8")
        prices = _parse(json.loads(default), "clinseek/models/prices.json")
        if override is not None:
            prices.update(_parse(_read(Path(override)), str(override)))
        return cls(prices)

    def price(self, model: str) -> Price | None:
        """The price of ``model`` (exact full name or alias), or ``None`` when unknown."""
        return self._prices.get(model)

    def cost_usd(self, model: str, usage: Usage) -> Decimal | None:
        """Cost of ``usage`` on ``model`` in USD, or ``None`` when the model's price is unknown."""
        price = self.price(model)
        return None if price is None else price.cost_usd(usage)

    def models(self) -> list[str]:
        """Every priced name, aliases included, sorted."""
        return sorted(self._prices)


def price_known(model: object) -> bool | None:
    """Whether ``model``'s calls have a known cost: its ``priced`` flag, looked up through wrappers'
    ``inner``; ``None`` when no model in the chain declares one (a plug-in: then only the costs its
    responses report count).

    The built-in providers set ``priced`` from the price table; the offline baselines are priced
    (at $0). An unpriced model's calls and result rows have ``cost_usd = None``, never 0, even when
    no request was sent or every call failed.
    """
    for _ in range(16):
        flag = getattr(model, "priced", None)
        if isinstance(flag, bool):
            return flag
        model = getattr(model, "inner", None)
        if model is None:
            break
    return None


def _read(path: Path) -> Mapping[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
        data: Mapping[str, Any] = tomllib.loads(text) if path.suffix == ".toml" else json.loads(text)
    except (OSError, ValueError) as err:
        raise ModelError(f"{path}: cannot read the price table: {err}") from err
    return data


def _parse(data: Mapping[str, Any], source: str) -> dict[str, Price]:
    models = data.get("models")
    if not isinstance(models, Mapping):
        raise ModelError(f"{source}: expected a 'models' table mapping 'provider:model' to prices")
    prices: dict[str, Price] = {}
    for name, entry in models.items():
        if not isinstance(entry, Mapping):
            raise ModelError(f"{source}: model {name!r}: expected a table of prices")
        price = Price(
            input=_decimal(entry, "input", source, name),
            output=_decimal(entry, "output", source, name),
            cached_input=_decimal(entry, "cached_input", source, name, default="input"),
            cache_write=_decimal(entry, "cache_write", source, name, default="input"),
        )
        for alias in [name, *entry.get("aliases", [])]:
            prices[str(alias)] = price
    return prices


def _decimal(entry: Mapping[str, Any], field: str, source: str, name: str, default: str | None = None) -> Decimal:
    value = entry.get(field, entry.get(default) if default else None)
    try:
        number = Decimal(str(value))
    except InvalidOperation:
        number = Decimal("NaN")
    if value is None or isinstance(value, bool) or not number.is_finite() or number < 0:
        raise ModelError(f"{source}: model {name!r}: field {field!r}: expected a price >= 0 in USD/Mtok, got {value!r}")
    return number


__all__ = ["Price", "PriceTable", "price_known"]
