"""Tools that cannot run are not offered: the semantic candidate tool needs its model and extra."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from clinseek.agent import default_tools
from clinseek.tools import EHR_SEMANTIC_TOOL, EHR_TOOLS, Limits, available_tools, semantic_available


def test_semantic_tool_is_not_offered_without_a_model() -> None:
    assert not semantic_available(Limits())
    assert EHR_SEMANTIC_TOOL not in default_tools()
    assert EHR_SEMANTIC_TOOL not in default_tools(Limits())


def test_other_ehr_tools_are_all_offered() -> None:
    assert set(default_tools()) == set(EHR_TOOLS) - {EHR_SEMANTIC_TOOL}


def test_semantic_tool_is_offered_only_with_model_and_extra(tmp_path: Path) -> None:
    limits = Limits(semantic_model_path=str(tmp_path))
    installed = importlib.util.find_spec("sentence_transformers") is not None
    assert semantic_available(limits) is installed
    assert (EHR_SEMANTIC_TOOL in available_tools(EHR_TOOLS, limits)) is installed
