"""Model providers: one ``ChatModel`` interface over OpenAI-compatible and Anthropic endpoints.

``get_model("openai:gpt-5.1")``, ``get_model("anthropic:claude-opus-4-6")``,
``get_model("openai:Qwen/Qwen3.5-35B-A3B", base_url="http://127.0.0.1:8000/v1")``,
``get_model("bedrock:us.anthropic.claude-opus-4-6-v1")``, ``get_model("vertex:claude-opus-4-6")``;
``tool_protocol="text"`` for endpoints without native tool calling. Providers register with
``@provider("name")`` (the offline baselines too). Messages, tool calls, usage and responses are
provider-independent frozen records; tool names are canonical (dotted) everywhere above this
package. Errors: ``RateLimited``, ``ProviderUnavailable``, ``ContextLengthExceeded``, ``PromptRefused``,
``BadRequest`` (all ``ModelCallError``). Costs come from an editable price table; unknown prices are ``None``.
See ``docs/models.md``.
"""

from . import _builtin  # noqa: F401  (registers the built-in providers)
from ._content import calls_in_content, split_reasoning
from ._decode import decode_tool_call
from ._errors import (
    BadRequest,
    ContextLengthExceeded,
    ModelCallError,
    PromptRefused,
    ProviderUnavailable,
    RateLimited,
)
from ._messages import (
    CallAttempt,
    GenerateConfig,
    ImageRef,
    Message,
    ModelResponse,
    ReasoningBlock,
    Role,
    StopReason,
    ToolCall,
    ToolCallErrorKind,
    ToolCallSource,
    Usage,
)
from ._names import (
    WIRE_NAME_RULES,
    ToolInfo,
    ToolNameMap,
    ToolSet,
    WireNameRule,
    to_tool_infos,
    tool_set,
    wire_name,
)
from ._preflight import CONNECT_TIMEOUT_S, PreflightReport, preflight, safe_url
from ._pricing import Price, PriceTable, price_known
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
from ._tokens import (
    ESTIMATE,
    ESTIMATE_VERSION,
    EstimatedTokens,
    ServerTokenCounter,
    TokenCounter,
    estimate_tokens,
    messages_tokens,
    messages_tokens_bound,
    probe_token_counter,
)
from ._vision import VISION_PATTERNS, accepts_images, vision_capable

__all__ = [
    "CONNECT_TIMEOUT_S",
    "ESTIMATE",
    "ESTIMATE_VERSION",
    "TEXT_PROTOCOL_VERSION",
    "VISION_PATTERNS",
    "WIRE_NAME_RULES",
    "BadRequest",
    "CallAttempt",
    "ChatModel",
    "ContextLengthExceeded",
    "EstimatedTokens",
    "GenerateConfig",
    "ImageRef",
    "Message",
    "ModelCallError",
    "ModelResponse",
    "PreflightReport",
    "Price",
    "PriceTable",
    "PromptRefused",
    "ProviderFactory",
    "ProviderOptions",
    "ProviderUnavailable",
    "RateLimited",
    "ReasoningBlock",
    "Role",
    "ServerTokenCounter",
    "StopReason",
    "TextProtocolModel",
    "TokenCounter",
    "ToolCall",
    "ToolCallErrorKind",
    "ToolCallSource",
    "ToolInfo",
    "ToolNameMap",
    "ToolProtocol",
    "ToolSet",
    "Usage",
    "WireNameRule",
    "accepts_images",
    "calls_in_content",
    "decode_tool_call",
    "estimate_tokens",
    "get_model",
    "messages_tokens",
    "messages_tokens_bound",
    "parse_action",
    "parse_model_name",
    "preflight",
    "price_known",
    "probe_token_counter",
    "provider",
    "provider_names",
    "render_messages",
    "render_tool_instructions",
    "safe_url",
    "split_reasoning",
    "to_tool_infos",
    "tool_set",
    "vision_capable",
    "wire_name",
]
