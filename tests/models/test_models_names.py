"""The canonical tool-name map: one-to-one, decoded by lookup, never repaired."""

from __future__ import annotations

import pytest
from _models_helpers import TOOLS

from clinseek.errors import ModelError
from clinseek.models import WIRE_NAME_RULES, ToolNameMap, decode_tool_call, to_tool_infos, wire_name

CANONICAL = [
    "ehr.load_ehr",
    "ehr.get_table_names",
    "ehr.run_sql_query",
    "ehr.get_candidates_by_fuzzy_matching",
    "ehr.think",
    "ehr.finish",
    "browser.search",
    "browser.open",
    "browser.find",
    "image.chest_xray_classifier",
    "image.xray_phrase_grounding",
    "ehr_load_ehr",  # a name without a dot stays distinct from ehr.load_ehr
]


@pytest.mark.parametrize("provider", sorted(WIRE_NAME_RULES))
def test_every_name_round_trips_one_to_one(provider: str) -> None:
    names = ToolNameMap(provider, CANONICAL)
    wires = [names.to_wire(n) for n in CANONICAL]
    assert len(set(wires)) == len(CANONICAL)
    assert [names.from_wire(w) for w in wires] == CANONICAL
    rule = WIRE_NAME_RULES[provider]
    assert all(rule.pattern.match(w) for w in wires)


def test_dots_become_double_underscores_for_native_providers() -> None:
    assert wire_name("openai", "ehr.run_sql_query") == "ehr__run_sql_query"
    assert wire_name("anthropic", "image.chest_xray_classifier") == "image__chest_xray_classifier"
    assert wire_name("text", "ehr.finish") == "ehr.finish"


def test_unknown_wire_name_is_not_repaired() -> None:
    names = ToolNameMap("openai", CANONICAL)
    for guess in ["ehr_finish", "finish", "ehr.finish", "EHR__FINISH", "ehr__finis"]:
        assert names.from_wire(guess) is None


def test_names_that_would_share_a_wire_name_are_refused() -> None:
    with pytest.raises(ModelError, match="share a wire name"):
        ToolNameMap("openai", ["ehr__x.finish", "ehr.x__finish"])
    with pytest.raises(ModelError, match="share a wire name"):
        ToolNameMap("anthropic", ["a._b", "a_.b"])


def test_names_that_are_not_dotted_identifiers_are_refused() -> None:
    for bad in ["ehr..finish", "ehr finish", ".finish", "ehr/finish", ""]:
        with pytest.raises(ModelError):
            ToolNameMap("openai", [bad])


def test_a_name_too_long_for_the_provider_is_refused() -> None:
    with pytest.raises(ModelError, match="does not accept"):
        ToolNameMap("anthropic", ["ehr." + "x" * 70])


def test_decoding_an_unknown_wire_name_gives_an_unknown_tool_error() -> None:
    names = ToolNameMap("openai", ["ehr.finish"])
    call = decode_tool_call("c1", "ehr_finish", '{"response": ["yes"]}', names)
    assert call.error_kind == "unknown_tool"
    assert call.name == "ehr_finish"
    assert "ehr.finish" in (call.error or "")
    assert call.arguments == {"response": ["yes"]}


def test_decoding_malformed_arguments_keeps_the_raw_text() -> None:
    names = ToolNameMap("openai", ["ehr.finish"])
    bad = decode_tool_call("c1", "ehr__finish", '{"response": ["yes"', names)
    assert (bad.name, bad.arguments, bad.raw_arguments, bad.error_kind) == (
        "ehr.finish", {}, '{"response": ["yes"', "invalid_json"
    )
    array = decode_tool_call("c2", "ehr__finish", '["yes"]', names)
    assert array.error_kind == "not_an_object"
    empty = decode_tool_call("c3", "ehr__finish", "", names)
    assert (empty.arguments, empty.error_kind) == ({}, None)


def test_tool_specs_accept_openai_and_flat_schemas() -> None:
    specs = to_tool_infos(TOOLS)
    assert [s.name for s in specs] == ["ehr.run_sql_query", "ehr.finish", "browser.search"]
    assert specs[0].parameters["required"] == ["sql_query"]


def test_tool_specs_refuse_duplicates_and_nameless_schemas() -> None:
    with pytest.raises(ModelError, match="given twice"):
        to_tool_infos([TOOLS[0], TOOLS[0]])
    with pytest.raises(ModelError, match="no 'name'"):
        to_tool_infos([{"type": "function", "function": {"description": "x"}}])
