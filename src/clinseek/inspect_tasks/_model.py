"""``--model clinseek/baseline:evidence``: clinseek's offline baselines as an inspect_ai model provider.

The scripted baselines (``baseline:evidence``, ``baseline:null``; docs/agent.md) need no network and no
key, so an inspect eval of the clinseek tasks runs offline end to end, and the same baseline run through
``clinseek run`` and through inspect gives the same answers. Real models go through inspect's own
providers (``openai/...``, ``anthropic/...``): this provider refuses them.
"""

from __future__ import annotations

from typing import Any

from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    GenerateConfig,
    ModelAPI,
    ModelOutput,
    ModelUsage,
    modelapi,
)
from inspect_ai.tool import ToolCall as InspectToolCall
from inspect_ai.tool import ToolChoice, ToolInfo

from ..errors import ModelError
from ..models import ChatModel, ModelResponse, ToolNameMap
from ..tools import tool_names
from ._messages import from_inspect, inspect_name_map

PROVIDER = "clinseek"
"""The inspect_ai model provider name: ``--model clinseek/<clinseek model name>``."""


@modelapi(name=PROVIDER)
class ClinseekBaselineAPI(ModelAPI):
    """A clinseek scripted baseline behind inspect_ai's ``ModelAPI`` (usage reported as 0 tokens).

    Raises:
        ModelError: the name is not a scripted baseline (``baseline:null``, ``baseline:evidence``).
    """

    def __init__(self, model_name: str, base_url: str | None = None, api_key: str | None = None,
                 config: GenerateConfig | None = None, **model_args: Any) -> None:
        super().__init__(model_name, base_url, api_key, [], config or GenerateConfig())
        from ..agent import is_scripted_baseline
        from ..models import get_model

        if not is_scripted_baseline(model_name):
            raise ModelError(f"--model {PROVIDER}/{model_name}: the {PROVIDER} provider serves the offline "
                             "baselines (baseline:null, baseline:evidence); run other models through inspect's "
                             "own providers (openai/..., anthropic/...)")
        self.chat: ChatModel = get_model(model_name)
        self.names: ToolNameMap = inspect_name_map(tool_names())

    async def generate(self, input: list[ChatMessage], tools: list[ToolInfo], tool_choice: ToolChoice,
                       config: GenerateConfig) -> ModelOutput:
        """One call of the baseline: inspect's messages and tools in clinseek's names, its reply in inspect's."""
        messages = [from_inspect(m, self.names) for m in input]
        schemas = [{"type": "function", "function": {
            "name": self.names.from_wire(t.name) or t.name, "description": t.description,
            "parameters": t.parameters.model_dump(exclude_none=True)}} for t in tools]
        return self.output(await self.chat.generate(messages, schemas))

    def output(self, response: ModelResponse) -> ModelOutput:
        """``response`` as inspect's output: tool calls under their inspect names, its token usage."""
        message = response.message
        calls = [InspectToolCall(id=c.id, function=self.names.to_wire(c.name), arguments=dict(c.arguments))
                 for c in message.tool_calls]
        usage = response.usage
        output = ModelOutput.from_message(
            ChatMessageAssistant(content=message.content, tool_calls=calls or None, model=self.model_name,
                                 source="generate"),
            stop_reason="tool_calls" if calls else "stop")
        output.usage = ModelUsage(input_tokens=usage.input_tokens, output_tokens=usage.output_tokens,
                                  total_tokens=usage.total_tokens)
        return output

    def max_connections(self) -> int:
        """The baselines are local: no provider limit to respect."""
        return 64
