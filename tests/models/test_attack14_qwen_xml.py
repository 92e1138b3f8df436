"""Qwen3-Coder's XML tool calls written in the reply text (``<function=NAME><parameter=KEY>VALUE</parameter>``).

The values are text; they are typed from the offered tool's JSON Schema, as vLLM's ``qwen3_coder`` /
``qwen3_xml`` parsers type them (no server needed: ``calls_in_content`` and ``decode_message``).
"""

from __future__ import annotations

from typing import Any

from _models_helpers import TOOLS, run

from clinseek.models import GenerateConfig, Message, ModelResponse, get_model
from clinseek.models._content import calls_in_content
from clinseek.models._decode import CUT_CALL
from clinseek.models._names import tool_set
from clinseek.models._openai_wire import decode_message
from fakes.llm_servers import OpenAIFake

EXTRA: list[dict[str, Any]] = [
    {"name": "ehr.get_records", "description": "Rows of one table.", "parameters": {
        "type": "object", "additionalProperties": False,
        "properties": {
            "table": {"type": "string"},
            "limit": {"default": 10, "type": "integer"},
            "offset": {"anyOf": [{"type": "integer"}, {"type": "string"}], "default": -1},
            "threshold": {"anyOf": [{"type": "number"}, {"type": "null"}], "default": None},
            "desc": {"default": False, "type": "boolean"},
            "columns": {"anyOf": [{"items": {"type": "string"}, "type": "array"}, {"type": "null"}], "default": None},
            "filters": {"type": "object"},
        }}},
]
OFFERED = tool_set("openai", [*TOOLS, *EXTRA])
NAMES, SPECS = OFFERED.names, OFFERED.specs


def xml(name: str, **params: str) -> str:
    body = "".join(f"<parameter={k}>\n{v}\n</parameter>\n" for k, v in params.items())
    return f"<function={name}>\n{body}</function>"


def read(text: str) -> tuple[list[Any], str]:
    return calls_in_content(text, NAMES, SPECS)


def test_a_string_keeps_its_newlines_and_angle_brackets_less_the_one_around_it() -> None:
    sql = "SELECT count(*)\nFROM hosp.labevents\nWHERE valuenum < 5 AND flag <> 'x'"
    calls, rest = read(f"Let me look.\n<tool_call>\n{xml('ehr__run_sql_query', sql_query=sql)}\n</tool_call>")
    assert [(c.name, c.arguments, c.error_kind) for c in calls] == [("ehr.run_sql_query", {"sql_query": sql}, None)]
    assert rest == "Let me look." and calls[0].id.startswith("call") and len(calls[0].id) == 9
    padded = xml("ehr.run_sql_query", sql_query="\n" + sql + "\n")
    two, _ = read(f"<tool_call>\n{padded}\n</tool_call>")
    assert two[0].arguments == {"sql_query": "\n" + sql + "\n"}  # only one newline each side is the layout


def test_integers_numbers_booleans_arrays_objects_and_null_are_typed_from_the_schema() -> None:
    call = xml("ehr__get_records", table="42", limit="5", offset="-3", threshold="0.5", desc="True",
               columns='["charttime", "valuenum"]', filters="{'itemid': 50912}")
    calls, _ = read(f"<tool_call>\n{call}\n</tool_call>")
    assert calls[0].error_kind is None
    assert calls[0].arguments == {"table": "42", "limit": 5, "offset": -3, "threshold": 0.5, "desc": True,
                                  "columns": ["charttime", "valuenum"], "filters": {"itemid": 50912}}
    nulls, _ = read(f"<tool_call>\n{xml('ehr__get_records', threshold='null', columns='null', offset='last')}\n"
                    "</tool_call>")
    assert nulls[0].arguments == {"threshold": None, "columns": None, "offset": "last"}
    literal = xml("ehr__finish", response="['no']")  # a Python literal, not JSON
    finish, _ = read(f"<tool_call>\n{literal}\n</tool_call>")
    assert finish[0].arguments == {"response": ["no"]}


def test_a_value_that_does_not_fit_its_type_stays_text_for_the_tools_own_check() -> None:
    calls, _ = read(f"<tool_call>\n{xml('ehr__get_records', limit='five', desc='maybe', columns='[unclosed')}\n"
                    "</tool_call>")
    assert calls[0].error_kind is None  # sent on as the same value in JSON would be: the tool says bad_argument
    assert calls[0].arguments == {"limit": "five", "desc": "maybe", "columns": "[unclosed"}


def test_numbers_python_cannot_hold_stay_text_never_a_crash() -> None:
    calls, _ = read(f"<tool_call>\n{xml('ehr__get_records', limit='9' * 5000, threshold='1e400', offset='2.5')}\n"
                    "</tool_call>")
    assert calls[0].error_kind is None
    assert calls[0].arguments == {"limit": "9" * 5000, "threshold": "1e400", "offset": "2.5"}


def test_missing_and_extra_parameters_are_passed_on_as_written() -> None:
    calls, _ = read(f"<tool_call>\n{xml('ehr__get_records', limit='3', colour='red')}\n</tool_call>")
    assert (calls[0].arguments, calls[0].error_kind) == ({"limit": 3, "colour": "red"}, None)
    empty, _ = read("<tool_call>\n<function=ehr__finish>\n</function>\n</tool_call>")
    assert (empty[0].name, empty[0].arguments, empty[0].error_kind) == ("ehr.finish", {}, None)


def test_every_function_in_one_or_several_blocks_is_a_call_in_order() -> None:
    one_block = (f"<tool_call>\n{xml('ehr__run_sql_query', sql_query='SELECT 1')}\n"
                 f"{xml('ehr__get_records', limit='2')}\n</tool_call>")
    finish = xml("ehr__finish", response='["yes"]')
    calls, _ = read(one_block + f"\n<tool_call>\n{finish}\n</tool_call>")
    assert [(c.name, c.arguments) for c in calls] == [("ehr.run_sql_query", {"sql_query": "SELECT 1"}),
                                                      ("ehr.get_records", {"limit": 2}),
                                                      ("ehr.finish", {"response": ["yes"]})]
    assert len({c.id for c in calls}) == 3


def test_an_unknown_function_is_an_unknown_tool_call() -> None:
    calls, _ = read(f"<tool_call>\n{xml('python', code='print(1)')}\n</tool_call>")
    assert (calls[0].name, calls[0].error_kind) == ("python", "unknown_tool")
    assert "ehr.run_sql_query" in (calls[0].error or "")


def test_a_malformed_function_body_is_a_format_error_naming_the_tool() -> None:
    for body in ("<function=ehr__run_sql_query>\nSELECT 1\n</function>",
                 "<function=ehr__run_sql_query>\n<parameter=sql_query>a</parameter>\n"
                 "<parameter=sql_query>b</parameter>\n</function>"):
        calls, _ = read(f"<tool_call>\n{body}\n</tool_call>")
        assert (calls[0].name, calls[0].error_kind) == ("ehr.run_sql_query", "format"), body
    stray, _ = read(f"<tool_call>\n{xml('ehr__finish', response='[]')}\nand more\n</tool_call>")
    assert (stray[0].name, stray[0].error_kind) == ("(unparsed)", "format")


def test_a_block_cut_at_the_token_limit_gets_the_cut_message() -> None:
    text = "<tool_call>\n<function=ehr__run_sql_query>\n<parameter=sql_query>\nSELECT subject_id, hadm_id, adm"
    for cut in (text, "<tool_call>\n<function=ehr__run_sq", text + "ittime\n</parameter>\n"):
        calls, _ = read(cut)
        assert len(calls) == 1 and calls[0].error_kind == "format", cut
    message, source = decode_message({"role": "assistant", "content": text}, NAMES, SPECS)
    assert source == "content" and message.tool_calls[0].name == "ehr.run_sql_query"
    assert "</function>" in (message.tool_calls[0].error or "")


def test_the_openai_provider_types_values_with_the_offered_schemas(openai_server: OpenAIFake) -> None:
    """Through ``generate`` against a loopback server: the schemas offered in the request type the values."""
    call = f"<tool_call>\n{xml('ehr__get_records', limit='7', desc='false')}\n</tool_call>"
    openai_server.script(openai_server.text(call), openai_server.text(call[:40], finish="length"))

    async def body() -> list[ModelResponse]:
        model = get_model("openai:gpt-test", base_url=openai_server.url)
        try:
            return [await model.generate([Message.user("go")], [*TOOLS, *EXTRA], GenerateConfig(timeout_s=5))
                    for _ in range(2)]
        finally:
            await model.aclose()

    whole, cut = run(body)
    assert (whole.message.tool_calls[0].arguments, whole.tool_calls_source) == ({"limit": 7, "desc": False}, "content")
    assert (cut.message.tool_calls[0].error, cut.stop_reason) == (CUT_CALL, "tool_calls")


def test_without_schemas_values_stay_text() -> None:
    calls, _ = calls_in_content(f"<tool_call>\n{xml('ehr__get_records', limit='7')}\n</tool_call>", NAMES)
    assert calls[0].arguments == {"limit": "7"}
