"""The prompts a distilled model must be served with, and a check that ``clinseek run`` serves exactly those.

The reference trained on native tool-call XML but shipped a serving prompt demanding a plain-text
bracket format (ref_data_scoring.md §4.5). Here the card records each system prompt and tool set
the samples were trained on; :func:`check_serving` compares them with what this clinseek's agent
loop sends for the same tool families (the EHR-only or the EHR + browser system prompt, the same
tools, the same wire names), so a mismatch is found before an evaluation, not after.
"""

from __future__ import annotations

from pathlib import Path

from ..agent import PROMPT_VERSION, agent_system_prompt, default_tools
from ..tools import BROWSER_TOOLS
from ._convert import canonical_json, sha256_text, wire_tools
from ._model import PromptRecord
from ._render import read_card


def serving_prompts(dataset: Path | str) -> list[PromptRecord]:
    """Every (system prompt, tool set) the dataset's samples were trained on, most used first."""
    return list(read_card(dataset).prompts)


def check_serving(dataset: Path | str) -> list[str]:
    """Differences between the dataset's trained prompts and what ``clinseek run`` sends now (``[]`` = same).

    ``clinseek run --mode agent`` sends the agent system prompt and every registered ``ehr.*`` tool,
    plus the ``browser.*`` tools and the browser paragraph of the prompt when a knowledge source is
    on; each trained record is compared with the served configuration of the same families, named
    for the provider the dataset was exported for (``openai`` for a vLLM endpoint).
    """
    card = read_card(dataset)
    problems = []
    for record in card.prompts:
        trained = {t["function"]["name"] for t in record.tools}
        browser = any(name.startswith("browser") for name in trained)
        names = (*default_tools(), *BROWSER_TOOLS) if browser else default_tools()
        tools = wire_tools(names, card.filters.wire_provider)
        system_sha = sha256_text(agent_system_prompt(browser=browser))
        tools_sha = sha256_text(canonical_json(tools))
        if record.system_sha256 != system_sha:
            problems.append(f"system prompt {record.system_sha256[:12]} ({record.prompt_version}, "
                            f"{record.samples} samples) differs from the served {PROMPT_VERSION} prompt")
        if record.tools_sha256 != tools_sha:
            served = {t["function"]["name"] for t in tools}
            diff = f"only trained: {sorted(trained - served)}, only served: {sorted(served - trained)}"
            problems.append(f"tool set {record.tools_sha256[:12]} ({record.samples} samples) differs from the "
                            f"served tools ({diff if trained != served else 'same names, different schemas'})")
    return problems
