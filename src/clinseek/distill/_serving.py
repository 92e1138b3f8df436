"""The prompts a distilled model must be served with, and a check that ``clinseek run`` serves exactly those.

The reference trained on native tool-call XML but shipped a serving prompt demanding a plain-text
bracket format (ref_data_scoring.md §4.5). Here the card records each system prompt and tool set
the samples were trained on; :func:`check_serving` compares them with what this clinseek's agent
loop sends (``SYSTEM_AGENT``, every ``ehr.*`` tool, the same wire names), so a mismatch is found
before an evaluation, not after.
"""

from __future__ import annotations

from pathlib import Path

from ..agent import PROMPT_VERSION, SYSTEM_AGENT, default_tools
from ._convert import canonical_json, sha256_text, wire_tools
from ._model import PromptRecord
from ._render import read_card


def serving_prompts(dataset: Path | str) -> list[PromptRecord]:
    """Every (system prompt, tool set) the dataset's samples were trained on, most used first."""
    return list(read_card(dataset).prompts)


def check_serving(dataset: Path | str) -> list[str]:
    """Differences between the dataset's trained prompts and what ``clinseek run`` sends now (``[]`` = same).

    ``clinseek run --mode agent`` sends ``SYSTEM_AGENT`` and every registered ``ehr.*`` tool, named
    for the provider the dataset was exported for (``openai`` for a vLLM endpoint).
    """
    card = read_card(dataset)
    tools = wire_tools(default_tools(), card.filters.wire_provider)
    system_sha, tools_sha = sha256_text(SYSTEM_AGENT), sha256_text(canonical_json(tools))
    problems = []
    for record in card.prompts:
        if record.system_sha256 != system_sha:
            problems.append(f"system prompt {record.system_sha256[:12]} ({record.prompt_version}, "
                            f"{record.samples} samples) differs from the served {PROMPT_VERSION} prompt")
        if record.tools_sha256 != tools_sha:
            trained = {t["function"]["name"] for t in record.tools}
            served = {t["function"]["name"] for t in tools}
            diff = f"only trained: {sorted(trained - served)}, only served: {sorted(served - trained)}"
            problems.append(f"tool set {record.tools_sha256[:12]} ({record.samples} samples) differs from the "
                            f"served tools ({diff if trained != served else 'same names, different schemas'})")
    return problems
