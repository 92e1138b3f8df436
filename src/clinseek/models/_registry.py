"""The provider registry and ``get_model``: ``provider:model`` names → ``ChatModel`` instances.

Providers register a factory with ``@provider("name")`` when their module is imported: the built-ins
in ``_builtin.py`` (imported with this package), any other through an entry point of the
``clinseek.providers`` group that names its module (clinseek's own offline baselines:
``baseline = "clinseek.agent._baselines"`` in ``pyproject.toml``). A name not registered yet is looked
up there and its module imported, so ``get_model("baseline:null")`` works whatever was imported
before. A factory imports its SDK only when it is called, so choosing ``anthropic:…`` never imports
``openai``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ..errors import ModelError, RegistryError
from ._pricing import PriceTable
from ._protocol import ChatModel

ToolProtocol = Literal["native", "text"]


@dataclass(frozen=True, slots=True)
class ProviderOptions:
    """Everything a provider factory may need besides the model id. Holds no secret."""

    base_url: str | None = None
    """Endpoint override (vLLM / SGLang / Ollama / llama.cpp server, a proxy, a loopback test server)."""
    api_key_env: str | None = None
    """Environment variable holding the key; ``None`` = the provider's default (``OPENAI_API_KEY``, …)."""
    credentials_file: Path | None = None
    """A user TOML/JSON file with a ``[keys]`` table, read when the variable is not set."""
    prices: PriceTable = field(default_factory=PriceTable.load)
    """The price table used for ``ModelResponse.cost_usd``."""
    region: str | None = None
    """Bedrock AWS region / Vertex location; ``None`` = the SDK's environment default."""
    project_id: str | None = None
    """Vertex project id; ``None`` = the SDK's environment default."""
    extra_body: Mapping[str, Any] | None = None
    """Extra JSON fields sent with every OpenAI-compatible request (e.g. ``chat_template_kwargs``)."""


ProviderFactory = Callable[[str, ProviderOptions], ChatModel]
_PROVIDERS: dict[str, ProviderFactory] = {}
_ENTRY_POINT_GROUP = "clinseek.providers"
"""The entry-point group of provider modules: ``name = "package.module"`` (importing it registers ``name``)."""


def provider(name: str) -> Callable[[ProviderFactory], ProviderFactory]:
    """Register a provider factory ``(model_id, options) -> ChatModel`` under ``name``.

    Raises:
        RegistryError: ``name`` is already registered, or contains ``:``.
    """

    def register(factory: ProviderFactory) -> ProviderFactory:
        if ":" in name or not name:
            raise RegistryError(f"provider name {name!r} must be non-empty and contain no ':'")
        if name in _PROVIDERS:
            raise RegistryError(f"model provider {name!r} is already registered")
        _PROVIDERS[name] = factory
        return factory

    return register


def _plugins() -> dict[str, str]:
    """Provider name -> module, from the installed ``clinseek.providers`` entry points."""
    from importlib.metadata import entry_points

    return {ep.name: ep.value for ep in entry_points(group=_ENTRY_POINT_GROUP)}


def _factory(name: str) -> ProviderFactory | None:
    """The factory registered as ``name``, importing its entry point's module first when needed."""
    if name not in _PROVIDERS and name in (plugins := _plugins()):
        importlib.import_module(plugins[name])  # its @provider registers it
    return _PROVIDERS.get(name)


def provider_names() -> list[str]:
    """The provider names: registered, or installed as ``clinseek.providers`` entry points; sorted."""
    return sorted(set(_PROVIDERS) | set(_plugins()))


def parse_model_name(name: str) -> tuple[str, str]:
    """Split ``provider:model`` at the first ``:`` (model ids may contain ``/`` and ``:``).

    Raises:
        ModelError: no ``:``, or an empty part.
    """
    provider_name, sep, model_id = name.partition(":")
    if not sep or not provider_name or not model_id:
        raise ModelError(f"model name {name!r} must be 'provider:model', e.g. 'openai:gpt-5.1'")
    return provider_name, model_id


def get_model(
    name: str,
    *,
    base_url: str | None = None,
    api_key_env: str | None = None,
    credentials_file: Path | str | None = None,
    price_table: PriceTable | Path | str | None = None,
    tool_protocol: ToolProtocol = "native",
    region: str | None = None,
    project_id: str | None = None,
    extra_body: Mapping[str, Any] | None = None,
) -> ChatModel:
    """Build the model ``name`` = ``provider:model`` (``openai:gpt-5.1``, ``anthropic:claude-opus-4-6``,
    ``openai:Qwen/Qwen3.5-35B-A3B`` with ``base_url``, ``bedrock:…``, ``vertex:…``, ``baseline:…``).

    Args:
        name: the full model name.
        base_url: endpoint override (for OpenAI-compatible servers it should end in ``/v1``).
        api_key_env: the environment variable to read the key from (default per provider).
        credentials_file: a user file with a ``[keys]`` table, read when the variable is unset.
        price_table: a ``PriceTable``, or an override file merged over the shipped table.
        tool_protocol: ``native`` tool calling, or ``text`` (tools in the system prompt, one fenced
            JSON action per reply, parsed strictly) for endpoints without native tool calling.
        region: Bedrock region / Vertex location.
        project_id: Vertex project.
        extra_body: extra JSON fields for OpenAI-compatible requests.

    Raises:
        ModelError: a malformed name, an unknown provider, or a missing API key.
        MissingExtraError: the provider needs an optional dependency that is not installed.
    """
    provider_name, model_id = parse_model_name(name)
    factory = _factory(provider_name)
    if factory is None:
        raise ModelError(f"unknown model provider {provider_name!r} in {name!r}; known: {provider_names()}")
    prices = price_table if isinstance(price_table, PriceTable) else PriceTable.load(price_table)
    options = ProviderOptions(
        base_url=base_url,
        api_key_env=api_key_env,
        credentials_file=Path(credentials_file) if credentials_file else None,
        prices=prices,
        region=region,
        project_id=project_id,
        extra_body=extra_body,
    )
    model = factory(model_id, options)
    if tool_protocol == "text":
        from ._text_protocol import TextProtocolModel

        return TextProtocolModel(model)
    if tool_protocol != "native":
        raise ModelError(f"tool_protocol must be 'native' or 'text', got {tool_protocol!r}")
    return model


__all__ = ["ProviderFactory", "ProviderOptions", "ToolProtocol", "get_model", "parse_model_name", "provider", "provider_names"]
