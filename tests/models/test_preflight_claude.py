"""Pre-flight of the Claude services (Anthropic API, Bedrock, Vertex) against strict loopback fakes."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest
from _models_helpers import SECRET, run

from clinseek.errors import ModelError
from clinseek.models import (
    CONNECT_TIMEOUT_S,
    BadRequest,
    GenerateConfig,
    Message,
    PreflightReport,
    get_model,
    preflight,
)
from clinseek.models._tokens import ESTIMATE
from fakes.llm_servers import SERVICES, AnthropicFake, ClaudeService

pytest.importorskip("anthropic")

_MODEL = {"anthropic": "claude-fake", "bedrock": "us.anthropic.claude-fake-v1:0", "vertex": "claude-fake@20250101"}
_KEY_ENV = {"anthropic": "ANTHROPIC_API_KEY", "bedrock": "AWS_BEARER_TOKEN_BEDROCK", "vertex": "VERTEX_ACCESS_TOKEN"}


def _options(service: ClaudeService) -> dict[str, Any]:
    if service.name == "bedrock":
        return {"region": service.region}
    if service.name == "vertex":
        return {"region": service.region, "project_id": service.project}
    return {}


def _check(provider: str, url: str, *, tools: bool = True, model_id: str | None = None,
           timeout_s: float = 10.0, **options: Any) -> PreflightReport:
    async def body() -> PreflightReport:
        model = get_model(f"{provider}:{model_id or _MODEL[provider]}", base_url=url, **options)
        try:
            report, counter = await preflight(model, tools=tools, timeout_s=timeout_s)
        finally:
            await model.aclose()
        assert report is not None and counter is ESTIMATE
        return report

    return run(body)


def _refusal(provider: str, url: str, **kwargs: Any) -> str:
    with pytest.raises(ModelError) as err:
        _check(provider, url, **kwargs)
    text = str(err.value)
    assert SECRET not in text and "\n" not in text
    return text


@pytest.fixture(params=["anthropic", "bedrock", "vertex"])
def service(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[AnthropicFake]:
    monkeypatch.setenv(_KEY_ENV[request.param], SECRET)
    with AnthropicFake(service=request.param) as server:
        yield server


def _probes(server: AnthropicFake) -> list[Any]:
    """The Messages requests the server got (not the token counts)."""
    return [r for r in server.requests if r.method == "POST" and "max_tokens" in r.json]


def _ok(server: AnthropicFake) -> None:
    server.script(server.text("OK"))


def test_a_served_model_passes_with_one_probe_of_one_token_and_a_tool(service: AnthropicFake) -> None:
    s = service.service
    assert s is not None
    _ok(service)
    report = _check(s.name, service.url, **_options(s))
    assert report.tools_checked and report.token_counter == ESTIMATE.name
    assert report.endpoint == service.url and report.probe_latency_s is not None
    [note] = [n for n in report.notes if "estimate" in n]
    assert ("unchecked" in note) if s.name == "bedrock" else ("where the model counts" in note)
    [probe] = _probes(service)
    assert probe.json["max_tokens"] == 1 and [t["name"] for t in probe.json["tools"]] == ["clinseek__ping"]
    if s.name == "anthropic":  # the model lookup, the probe, two token counts
        assert [r.path for r in service.requests] == [f"/v1/models/{_MODEL['anthropic']}", "/v1/messages",
                                                      "/v1/messages/count_tokens", "/v1/messages/count_tokens"]
        assert report.model_listed is True and report.server_context_window == s.context_window
    else:  # a reachability GET of the root (any status), then the probe on the service's own path
        assert service.requests[0].method == "GET" and report.model_listed is None
        expected = {"bedrock": f"/model/{_MODEL['bedrock']}/invoke",
                    "vertex": f"/v1/projects/proj/locations/us-east5/publishers/anthropic/models/{_MODEL['vertex']}"
                              ":rawPredict"}[s.name]
        assert probe.path == expected.replace(":0/", "%3A0/") or probe.path == expected


def test_without_tools_the_probe_offers_none(service: AnthropicFake) -> None:
    s = service.service
    assert s is not None
    service.service = replace(s, tools=False)
    _ok(service)
    report = _check(s.name, service.url, tools=False, **_options(s))
    assert not report.tools_checked
    assert "tools" not in _probes(service)[0].json


def test_an_unknown_model_is_named_with_what_to_do(service: AnthropicFake) -> None:
    s = service.service
    assert s is not None
    text = _refusal(s.name, service.url, model_id="claude-nonexistent", **_options(s))
    assert "does not serve the model" in text and "claude-nonexistent" in text
    if s.name == "anthropic":  # answered by the lookup, which names the models the key can use
        assert "the key can use: claude-fake" in text
        assert not _probes(service)
    if s.name == "bedrock":
        assert "model identifier is invalid" in text and "inference-profile" in text
    if s.name == "vertex":
        assert "Model Garden" in text


def test_refused_credentials_say_which_to_check(service: AnthropicFake) -> None:
    s = service.service
    assert s is not None
    service.service = replace(s, credential="another-key")
    text = _refusal(s.name, service.url, **_options(s))
    assert "refused the" in text
    assert {"anthropic": "ANTHROPIC_API_KEY", "bedrock": "AWS_BEARER_TOKEN_BEDROCK",
            "vertex": "VERTEX_ACCESS_TOKEN"}[s.name] in text


def test_refused_tools_point_to_the_text_protocol(service: AnthropicFake) -> None:
    s = service.service
    assert s is not None
    service.service = replace(s, tools=False)
    text = _refusal(s.name, service.url, **_options(s))
    assert "refuses tool calls" in text and "--tool-protocol text" in text


def test_a_vertex_project_without_access_is_not_called_a_bad_token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VERTEX_ACCESS_TOKEN", SECRET)
    with AnthropicFake(service="vertex") as server:
        text = _refusal("vertex", server.url, region="us-east5", project_id="someone-else")
    assert "denies access to the model" in text and "ANTHROPIC_VERTEX_PROJECT_ID" in text


def test_bedrock_model_access_not_granted_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_BEARER_TOKEN_BEDROCK", SECRET)
    with AnthropicFake(service="bedrock") as server:
        server.script(server.error(403, "You don't have access to the model with the specified model ID."))
        text = _refusal("bedrock", server.url, region="us-east-1")
    assert "denies access to the model" in text and "Bedrock console" in text


def test_bedrock_signs_with_the_aws_credential_chain(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    pytest.importorskip("boto3")
    _aws_env(monkeypatch, tmp_path)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDFAKE0123")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    with AnthropicFake(service=replace(SERVICES["bedrock"], credential="AKIDFAKE0123")) as server:
        server.script(server.text("OK"))
        report = _check("bedrock", server.url, region="us-east-1")
        probe = _probes(server)[0]
    assert report.tools_checked and probe.headers["authorization"].startswith("AWS4-HMAC-SHA256 Credential=AKIDFAKE0123/")


def test_bedrock_without_any_aws_credentials_fails_before_sending(monkeypatch: pytest.MonkeyPatch,
                                                                 tmp_path: Any) -> None:
    pytest.importorskip("boto3")
    _aws_env(monkeypatch, tmp_path)
    with AnthropicFake(service="bedrock") as server:
        text = _refusal("bedrock", server.url, region="us-east-1")
        assert not server.requests
        # the same cause in a call is one non-retryable error, not a crash or a retried outage
        with pytest.raises(BadRequest, match="no usable credentials"):
            run(lambda: _generate("bedrock", server.url, region="us-east-1"))
    assert "no usable credentials" in text and "aws sso login" in text


async def _generate(provider: str, url: str, **options: Any) -> Any:
    model = get_model(f"{provider}:{_MODEL[provider]}", base_url=url, **options)
    try:
        return await model.generate([Message.user("hi")], [], GenerateConfig(timeout_s=5))
    finally:
        await model.aclose()


def _aws_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    """No AWS credentials anywhere: no key variables, no files, no instance metadata."""
    for name in ("AWS_BEARER_TOKEN_BEDROCK", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
                 "AWS_PROFILE", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI",
                 "AWS_WEB_IDENTITY_TOKEN_FILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    from anthropic.lib.aws import _auth  # the SDK keeps one boto3 session per (keys, region, profile)

    _auth._get_session.cache_clear()  # type: ignore[attr-defined]


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.parametrize("provider", ["anthropic", "bedrock", "vertex"])
@pytest.mark.parametrize("kind", ["closed port", "never answers"])
def test_an_unreachable_endpoint_is_one_clear_error_in_under_5_s(provider: str, kind: str,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(_KEY_ENV[provider], SECRET)
    options = _options(SERVICES[provider])
    with socket.socket() as silent:  # accepts connections (backlog), never replies
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        port = silent.getsockname()[1] if kind == "never answers" else _closed_port()
        url = f"http://127.0.0.1:{port}" + ("/v1" if provider == "vertex" else "")
        started = time.perf_counter()
        text = _refusal(provider, url, timeout_s=60, **options)
        elapsed = time.perf_counter() - started
    assert elapsed < 5.0 and CONNECT_TIMEOUT_S < 5.0
    assert text.startswith(f"cannot reach the model endpoint {url}")
    assert {"anthropic": "--base-url", "bedrock": "AWS_REGION", "vertex": "CLOUD_ML_REGION"}[provider] in text


def test_a_retired_model_is_refused_and_a_lookup_without_the_endpoint_leaves_the_probe_to_decide(
    anthropic_key: str,
) -> None:
    with AnthropicFake(service=replace(SERVICES["anthropic"], lifecycle="retired")) as server:
        text = _refusal("anthropic", server.url)
    assert "is retired" in text
    with AnthropicFake(service=replace(SERVICES["anthropic"], lifecycle="deprecated")) as server:
        server.script(server.text("OK"))
        report = _check("anthropic", server.url)
    assert report.model_listed is True and any("is deprecated" in note for note in report.notes)
    # a gateway that speaks Messages but has no model lookup (plain 404): the probe decides
    with AnthropicFake() as gateway:
        gateway.script(gateway.error(404, "Not Found", kind="api_error"), gateway.text("OK"))
        report = _check("anthropic", gateway.url)
    assert report.model_listed is None and any("answered HTTP 404" in note for note in report.notes)



def test_the_estimate_is_checked_against_the_model_s_own_token_count(
    anthropic_key: str, caplog: pytest.LogCaptureFixture
) -> None:
    from clinseek.models._anthropic_preflight import CALIBRATION_SAMPLE
    from clinseek.models._tokens import estimate_tokens

    estimate = estimate_tokens(CALIBRATION_SAMPLE)
    with AnthropicFake(service="anthropic") as server:  # 3 characters a token: the estimate is above it
        server.script(server.text("OK"))
        [note] = [n for n in _check("anthropic", server.url).notes if "estimate" in n]
    exact = -(-len(CALIBRATION_SAMPLE) // 3)
    assert f"it counts {estimate} tokens where the model counts {exact}" in note and "overrun" not in note
    with AnthropicFake(service=replace(SERVICES["anthropic"], chars_per_token=1.0)) as server:
        server.script(server.text("OK"))
        [note] = [n for n in _check("anthropic", server.url).notes if "estimate" in n]
    assert f"model counts {len(CALIBRATION_SAMPLE)}" in note and "budgets may overrun" in note
    assert "token budgets may overrun" in caplog.text


def test_bedrock_without_a_region_is_a_model_error_naming_the_variable(monkeypatch: pytest.MonkeyPatch,
                                                                      tmp_path: Any) -> None:
    monkeypatch.setenv("AWS_BEARER_TOKEN_BEDROCK", SECRET)
    for name in ("AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    with pytest.raises(ModelError, match="AWS_REGION"):
        get_model("bedrock:us.anthropic.claude-fake-v1:0")
