"""The registry, JSON schemas from signatures, and call_tool's error split."""

from __future__ import annotations

import anyio
import pytest

import clinseek.tools as tools
from clinseek.errors import RegistryError, ToolError
from clinseek.tools import (
    EHR_TOOLS,
    ToolContext,
    ToolRegistry,
    ToolResult,
    call_tool,
    tool_names,
    tool_schemas,
)


def _registry() -> ToolRegistry:
    reg = ToolRegistry()

    def echo(ctx: ToolContext, text: str, times: int = 1) -> ToolResult:
        """Repeat text.

        Args:
            text: what to repeat.
            times: how often.
        """
        return ToolResult(ok=True, content=text * times)

    async def refuse(ctx: ToolContext) -> ToolResult:
        """Always refuses."""
        raise ToolError("nope", "refused on purpose")

    def crash(ctx: ToolContext) -> ToolResult:
        """Breaks."""
        raise RuntimeError("infrastructure")

    reg.register("test.echo", echo)
    reg.register("test.refuse", refuse)
    reg.register("test.crash", crash)
    return reg


def _call(reg: ToolRegistry, name: str, args: object) -> ToolResult:
    ctx = ToolContext(episode=None)  # type: ignore[arg-type]
    return anyio.run(lambda: call_tool(ctx, name, args, registry=reg))  # type: ignore[arg-type]


def test_public_names_are_sorted() -> None:
    assert tools.__all__ == sorted(tools.__all__)


def test_the_16_ehr_tools_are_registered_in_reference_order() -> None:
    assert len(EHR_TOOLS) == 16
    assert set(EHR_TOOLS) == set(tool_names("ehr"))


def test_a_name_registered_twice_raises() -> None:
    reg = _registry()
    with pytest.raises(RegistryError, match="registered twice"):
        reg.register("test.echo", lambda ctx: None)


def test_a_name_without_family_is_refused() -> None:
    with pytest.raises(RegistryError, match="family"):
        ToolRegistry().register("echo", lambda ctx: None)


def test_unknown_tool_lookup_raises_and_calls_return_unknown_tool() -> None:
    with pytest.raises(RegistryError):
        tools.get_tool("ehr.load_ehr_v2")
    result = _call(_registry(), "test.missing", {})
    assert not result.ok and result.error_kind == "unknown_tool"


def test_schemas_come_from_signature_and_docstring() -> None:
    schema = _registry().get("test.echo").schema()
    assert schema["function"]["name"] == "test.echo"
    assert schema["function"]["description"] == "Repeat text."
    params = schema["function"]["parameters"]
    assert params["required"] == ["text"]
    assert params["properties"]["text"] == {"type": "string", "description": "what to repeat."}
    assert params["properties"]["times"]["default"] == 1
    assert params["additionalProperties"] is False
    params["properties"]["text"]["description"] = "changed by a caller"
    again = _registry().get("test.echo").schema()["function"]["parameters"]
    assert again["properties"]["text"]["description"] == "what to repeat."  # each call gets its own copy


def test_every_ehr_schema_is_complete_and_untitled() -> None:
    schemas = tool_schemas(EHR_TOOLS)
    assert [s["function"]["name"] for s in schemas] == list(EHR_TOOLS)
    for s in schemas:
        params = s["function"]["parameters"]
        assert s["function"]["description"], s
        assert "title" not in params
        for name, prop in params["properties"].items():
            assert prop.get("description"), (s["function"]["name"], name)
    sql = tool_schemas(["ehr.run_sql_query"])[0]["function"]["parameters"]
    assert sql["required"] == ["sql_query"]


def test_bad_and_missing_arguments_become_bad_argument_results() -> None:
    reg = _registry()
    missing = _call(reg, "test.echo", {})
    assert missing.error_kind == "bad_argument" and "text" in missing.content
    wrong = _call(reg, "test.echo", {"text": "a", "times": "many"})
    assert wrong.error_kind == "bad_argument" and "times" in wrong.content
    extra = _call(reg, "test.echo", {"text": "a", "colour": "red"})
    assert extra.error_kind == "bad_argument" and "colour" in extra.content
    not_json = _call(reg, "test.echo", "{text: a")
    assert not_json.error_kind == "bad_argument"


def test_json_string_arguments_and_elapsed_time() -> None:
    result = _call(_registry(), "test.echo", '{"text": "ab", "times": 2}')
    assert result.ok and result.content == "abab" and result.elapsed_s >= 0


def test_tool_error_becomes_a_structured_result() -> None:
    result = _call(_registry(), "test.refuse", None)
    assert (result.ok, result.error_kind) == (False, "nope")
    assert "refused on purpose" in result.content


def test_other_exceptions_propagate_as_infrastructure_errors() -> None:
    with pytest.raises(RuntimeError, match="infrastructure"):
        _call(_registry(), "test.crash", {})


def test_every_output_is_capped_in_characters() -> None:
    from clinseek.tools import Limits

    reg = _registry()
    ctx = ToolContext(episode=None, limits=Limits(max_tool_chars=500))  # type: ignore[arg-type]
    result = anyio.run(lambda: call_tool(ctx, "test.echo", {"text": "line\n", "times": 1000}, registry=reg))
    assert result.truncated and len(result.content) <= 500
    assert "[TRUNCATED: output cut at" in result.content
