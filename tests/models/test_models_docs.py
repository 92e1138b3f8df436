"""docs/models.md covers every built-in provider, error, config field and fake-server builder."""

from __future__ import annotations

from pathlib import Path

from clinseek.models import GenerateConfig, Usage

DOC = (Path(__file__).resolve().parents[2] / "docs" / "models.md").read_text(encoding="utf-8")


def test_every_builtin_provider_is_documented() -> None:
    for name in ["openai", "anthropic", "bedrock", "vertex"]:
        assert f"| `{name}`" in DOC, name


def test_every_error_is_documented() -> None:
    for name in ["RateLimited", "ProviderUnavailable", "ContextLengthExceeded", "BadRequest", "ModelCallError"]:
        assert f"`{name}" in DOC, name


def test_every_config_and_usage_field_is_documented() -> None:
    missing = [f for f in [*GenerateConfig.model_fields, *Usage.model_fields] if f"`{f}`" not in DOC]
    assert not missing, f"docs/models.md does not mention {missing}"


def test_every_fake_builder_is_documented() -> None:
    for builder in ["text", "tool_calls", "rate_limited", "server_error", "overloaded", "context_length",
                    "malformed_body", "slow"]:
        assert f"`{builder}" in DOC, builder
