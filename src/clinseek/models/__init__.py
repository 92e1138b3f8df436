"""Model providers: one ``ChatModel`` interface over OpenAI-compatible and Anthropic endpoints.

``get_model("openai:gpt-5.1")``, ``get_model("anthropic:claude-opus-4-6")``,
``get_model("openai:Qwen/Qwen3.5-35B-A3B", base_url="http://127.0.0.1:8000/v1")``,
``get_model("bedrock:us.anthropic.claude-opus-4-6-v1")``, ``get_model("vertex:claude-opus-4-6")``;
``tool_protocol="text"`` for endpoints without native tool calling. Providers register with
``@provider("name")`` (the offline baselines too). Messages, tool calls, usage and responses are
provider-independent frozen records; tool names are canonical (dotted) everywhere above this
package. Errors: ``RateLimited``, ``ProviderUnavailable``, ``ContextLengthExceeded``, ``BadRequest``
(all ``ModelCallError``). Costs come from an editable price table; unknown prices are ``None``.
See ``docs/models.md``.
"""

from . import _builtin  # noqa: F401  (registers the built-in providers)
from ._decode import decode_tool_call
from ._errors import BadRequest, ContextLengthExceeded, ModelCallError, ProviderUnavailable, RateLimited
from ._messages import (
    GenerateConfig,
    ImageRef,
    Message,
    ModelResponse,
    ReasoningBlock,
    Role,
    StopReason,
    ToolCall,
    ToolCallErrorKind,
    Usage,
)
from ._names import WIRE_NAME_RULES, ToolNameMap, ToolSpec, WireNameRule, to_tool_specs, wire_name
from ._pricing import Price, PriceTable
from ._protocol import ChatModel
from ._registry import (
    ProviderFactory,
    ProviderOptions,
    ToolProtocol,
    get_model,
    parse_model_name,
    provider,
    provider_names,
)
from ._text_protocol import (
    TEXT_PROTOCOL_VERSION,
    TextProtocolModel,
    parse_action,
    render_messages,
    render_tool_instructions,
)
from ._vision import VISION_PATTERNS, accepts_images, vision_capable

__all__ = [
    "TEXT_PROTOCOL_VERSION",
    "VISION_PATTERNS",
    "WIRE_NAME_RULES",
    "BadRequest",
    "ChatModel",
    "ContextLengthExceeded",
    "GenerateConfig",
    "ImageRef",
    "Message",
    "ModelCallError",
    "ModelResponse",
    "Price",
    "PriceTable",
    "ProviderFactory",
    "ProviderOptions",
    "ProviderUnavailable",
    "RateLimited",
    "ReasoningBlock",
    "Role",
    "StopReason",
    "TextProtocolModel",
    "ToolCall",
    "ToolCallErrorKind",
    "ToolNameMap",
    "ToolProtocol",
    "ToolSpec",
    "Usage",
    "WireNameRule",
    "accepts_images",
    "decode_tool_call",
    "get_model",
    "parse_action",
    "parse_model_name",
    "provider",
    "provider_names",
    "render_messages",
    "render_tool_instructions",
    "to_tool_specs",
    "vision_capable",
    "wire_name",
]
