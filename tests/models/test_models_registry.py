"""The provider registry, ``get_model``, keys and the package surface."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from _models_helpers import run

import clinseek.models as models
from clinseek.errors import ModelError, RegistryError
from clinseek.models import (
    ChatModel,
    GenerateConfig,
    Message,
    ModelResponse,
    ProviderOptions,
    Usage,
    get_model,
    parse_model_name,
    provider,
    provider_names,
)
from fakes.llm_servers import OpenAIFake


def test_the_public_names_are_pinned_and_sorted() -> None:
    assert "get_model" in models.__all__ and "ChatModel" in models.__all__
    assert set(models.__all__) == {n for n in dir(models) if not n.startswith("_")} - {"annotations"}


def test_builtin_providers_are_registered() -> None:
    assert {"anthropic", "bedrock", "openai", "vertex"} <= set(provider_names())


def test_model_names_split_at_the_first_colon() -> None:
    assert parse_model_name("openai:Qwen/Qwen3.5-35B-A3B") == ("openai", "Qwen/Qwen3.5-35B-A3B")
    assert parse_model_name("openai:llama3.1:8b") == ("openai", "llama3.1:8b")
    for bad in ["gpt-5.1", ":gpt", "openai:"]:
        with pytest.raises(ModelError, match="provider:model"):
            parse_model_name(bad)


def test_an_unknown_provider_is_a_model_error() -> None:
    with pytest.raises(ModelError, match="unknown model provider 'nope'"):
        get_model("nope:x")


def test_registering_a_name_twice_is_refused() -> None:
    with pytest.raises(RegistryError, match="already registered"):
        provider("openai")(lambda model_id, options: None)  # type: ignore[arg-type,return-value]


class _Echo:
    supports_native_tools = True

    def __init__(self, model_id: str) -> None:
        self.name = f"test-echo:{model_id}"

    async def generate(
        self, messages: Sequence[Message], tools: Sequence[Mapping[str, Any]] = (), config: GenerateConfig | None = None
    ) -> ModelResponse:
        return ModelResponse(
            model=self.name, message=Message(role="assistant", content=messages[-1].content), usage=Usage(),
            latency_s=0.0, stop_reason="end_turn",
        )

    async def aclose(self) -> None:
        return None


def test_a_plugin_provider_registers_with_the_same_decorator() -> None:
    @provider("test-echo")
    def _factory(model_id: str, options: ProviderOptions) -> ChatModel:
        return _Echo(model_id)

    model = get_model("test-echo:v1")
    assert isinstance(model, ChatModel)
    response = run(lambda: model.generate([Message.user("hello")]))
    assert response.message.content == "hello"


def test_the_key_can_come_from_a_credentials_file(tmp_path: Path) -> None:
    creds = tmp_path / "credentials.toml"
    creds.write_text('[keys]\nMY_OPENAI_KEY = "sk-from-file"\n')
    with OpenAIFake() as server:
        server.script(server.text("ok"))

        async def body() -> None:
            model = get_model("openai:gpt-5.1", base_url=server.url, api_key_env="MY_OPENAI_KEY", credentials_file=creds)
            await model.generate([Message.user("q")], (), GenerateConfig(timeout_s=5))
            await model.aclose()

        run(body)
        assert server.requests[0].headers["authorization"] == "Bearer sk-from-file"


def test_an_unreadable_credentials_file_does_not_echo_its_content(tmp_path: Path) -> None:
    creds = tmp_path / "credentials.toml"
    creds.write_text('OPENAI_API_KEY = "sk-leak" oops')
    with pytest.raises(ModelError) as caught:
        get_model("openai:gpt-5.1", credentials_file=creds)
    assert "sk-leak" not in str(caught.value)


def test_a_local_server_needs_no_key() -> None:
    with OpenAIFake() as server:
        server.script(server.text("ok"))

        async def body() -> ModelResponse:
            model = get_model("openai:Qwen/Qwen3.5-35B-A3B", base_url=server.url)
            try:
                return await model.generate([Message.user("q")], (), GenerateConfig(timeout_s=5))
            finally:
                await model.aclose()

        assert run(body).message.content == "ok"


def test_an_unknown_tool_protocol_is_refused() -> None:
    with pytest.raises(ModelError, match="tool_protocol"):
        get_model("openai:x", base_url="http://127.0.0.1:9/v1", tool_protocol="xml")  # type: ignore[arg-type]


def test_importing_models_imports_no_sdk() -> None:
    code = "import sys, clinseek.models; print('openai' in sys.modules, 'anthropic' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]


def test_the_offline_baselines_need_no_prior_import_of_the_agent() -> None:
    """``baseline:*`` is registered by clinseek.agent; get_model finds it through the package's
    ``clinseek.providers`` entry point in a fresh interpreter that imported only clinseek.models."""
    code = ("import sys; from clinseek.models import get_model, provider_names; "
            "assert 'clinseek.agent' not in sys.modules; assert 'baseline' in provider_names(); "
            "print(get_model('baseline:null').name, get_model('baseline:evidence').name)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["baseline:null", "baseline:evidence"]
    with pytest.raises(ModelError, match="unknown model provider 'nope'"):
        get_model("nope:x")
