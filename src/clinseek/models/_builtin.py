"""The built-in providers: ``openai`` (and any OpenAI-compatible server), ``anthropic``, ``bedrock``,
``vertex``. Each factory imports its SDK only when it is called; the SDKs are extras (``[openai]``,
``[anthropic]``, ``[bedrock]``, ``[vertex]``), and a missing one raises ``MissingExtraError`` naming the
``pip install`` that brings it."""

from __future__ import annotations

from functools import partial
from typing import Any

from ..errors import MissingExtraError, ModelError, import_optional
from ._keys import require_secret, resolve_secret
from ._protocol import ChatModel
from ._registry import ProviderOptions, provider

_LOCAL_PLACEHOLDER_KEY = "not-needed"
"""Sent to OpenAI-compatible servers given by ``base_url`` when no key is configured (vLLM,
Ollama and llama.cpp accept any key unless started with one)."""


def _check_base_url(url: str) -> None:
    """Refuse a ``--base-url`` that no request could use, before any is sent: without ``http://`` /
    ``https://`` (httpx's "missing protocol" read as an unreachable server), or with the chat path."""
    from urllib.parse import urlsplit

    from ._preflight import safe_url

    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ModelError(f"--base-url {safe_url(url)!r}: expected a URL such as http://127.0.0.1:8000/v1 "
                         "(with http:// or https://, the host and the API root)")
    path = parts.path.rstrip("/")
    if path.endswith(("/chat/completions", "/completions")):
        root = url.split("/completions")[0].removesuffix("/chat")
        raise ModelError(f"--base-url {safe_url(url)}: give the API root, not an endpoint: --base-url {safe_url(root)}")


@provider("openai")
def _openai(model_id: str, options: ProviderOptions) -> ChatModel:
    # the chat call is plain aiohttp (models/_openai_http.py); the extra installs it
    import_optional("aiohttp", f"openai:{model_id}", "openai", "aiohttp is not installed")
    from ._openai import OpenAIChatModel

    env = options.api_key_env or "OPENAI_API_KEY"
    name = f"openai:{model_id}"
    if options.base_url:
        _check_base_url(options.base_url)
        found = resolve_secret(env, options.credentials_file)
        key = found or _LOCAL_PLACEHOLDER_KEY
    else:
        found = key = require_secret(env, options.credentials_file, name)
    # what a refused key means, for the pre-flight's message (the key itself is never shown)
    key_hint = (f"the key was read from {env}: check its value, or pass --api-key-env NAME to read it from another variable"
                if found else
                f"no key was sent ({env} is not set): set {env} to the server's key (vLLM, SGLang: the one given to "
                "--api-key), or pass --api-key-env NAME to read it from another variable")
    return OpenAIChatModel(
        model_id, api_key=key, base_url=options.base_url, prices=options.prices, extra_body=options.extra_body,
        key_hint=key_hint,
    )


@provider("anthropic")
def _anthropic(model_id: str, options: ProviderOptions) -> ChatModel:
    anthropic = import_optional("anthropic", f"anthropic:{model_id}", "anthropic", "the Anthropic SDK is not installed")

    from ._anthropic import AnthropicChatModel

    env = options.api_key_env or "ANTHROPIC_API_KEY"
    key = require_secret(env, options.credentials_file, f"anthropic:{model_id}")
    client = anthropic.AsyncAnthropic(api_key=key, base_url=options.base_url, max_retries=0,
                                      http_client=_aiohttp_transport(anthropic))
    return AnthropicChatModel(model_id, client=client, prices=options.prices, provider="anthropic",
                              http_client=partial(_aiohttp_transport, anthropic))


@provider("bedrock")
def _bedrock(model_id: str, options: ProviderOptions) -> ChatModel:
    """Claude on AWS Bedrock: a bearer key (``AWS_BEARER_TOKEN_BEDROCK``) or, without one, SigV4
    signing from the AWS credential chain (needs ``boto3``: the ``[bedrock]`` extra)."""
    anthropic = import_optional("anthropic", f"bedrock:{model_id}", "bedrock", "the Anthropic SDK is not installed")

    from ._anthropic import AnthropicChatModel

    key = resolve_secret(options.api_key_env or "AWS_BEARER_TOKEN_BEDROCK", options.credentials_file)
    if key is None:
        _require_module("boto3", "bedrock:", "bedrock")
    try:
        client = anthropic.AsyncAnthropicBedrock(
            api_key=key, aws_region=options.region, base_url=options.base_url, max_retries=0,
            http_client=_aiohttp_transport(anthropic),
        )
    except (ValueError, anthropic.AnthropicError) as err:
        raise ModelError(f"bedrock:{model_id}: {err} (pass region=, or set AWS_REGION)") from None
    return AnthropicChatModel(model_id, client=client, prices=options.prices, provider="bedrock",
                              http_client=partial(_aiohttp_transport, anthropic))


@provider("vertex")
def _vertex(model_id: str, options: ProviderOptions) -> ChatModel:
    """Claude on Google Vertex AI: an access token (``VERTEX_ACCESS_TOKEN``) or, without one, Google
    application-default credentials (needs ``google-auth``: the ``[vertex]`` extra)."""
    anthropic = import_optional("anthropic", f"vertex:{model_id}", "vertex", "the Anthropic SDK is not installed")

    from ._anthropic import AnthropicChatModel

    token = resolve_secret(options.api_key_env or "VERTEX_ACCESS_TOKEN", options.credentials_file)
    if token is None:
        _require_module("google.auth", "vertex:", "vertex")
    kwargs: dict[str, Any] = {}
    if options.region:
        kwargs["region"] = options.region
    if options.project_id:
        kwargs["project_id"] = options.project_id
    try:
        client = anthropic.AsyncAnthropicVertex(
            access_token=token, base_url=options.base_url, max_retries=0, http_client=_aiohttp_transport(anthropic),
            **kwargs,
        )
    except (ValueError, anthropic.AnthropicError) as err:
        raise ModelError(
            f"vertex:{model_id}: {err} (pass region= and project_id=, or set CLOUD_ML_REGION and "
            "ANTHROPIC_VERTEX_PROJECT_ID)"
        ) from None
    return AnthropicChatModel(model_id, client=client, prices=options.prices, provider="vertex",
                              http_client=partial(_aiohttp_transport, anthropic))


def _require_module(module: str, feature: str, extra: str) -> None:
    import importlib.util

    try:
        found = importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        found = False
    if not found:
        raise MissingExtraError(feature, extra=extra, detail=f"no key in the environment and {module} is not installed")


__all__: list[str] = []


def _aiohttp_transport(sdk: Any) -> Any:
    """The Anthropic SDK's own aiohttp transport (``sdk.DefaultAioHttpClient()``), else its httpx pool
    (``sdk.DefaultAsyncHttpxClient()``) when aiohttp is not installed.

    At 256 calls in flight one httpx pool checks every one of its connections on each request and each
    reply: ``messages.create`` cost 7.2–8.5 ms of CPU per call on one httpx client, 4.9–5.0 ms over eight,
    and 3.0–3.8 ms on one client of this transport (alternating runs on the development machine, docs/ray.md).
    Its session is opened on the first call, in the caller's event loop: a model makes one per event loop.
    """
    try:
        return sdk.DefaultAioHttpClient()
    except RuntimeError:  # the SDK's stand-in when aiohttp is not installed
        return sdk.DefaultAsyncHttpxClient()
