"""Loopback fake LLM servers that speak the OpenAI Chat Completions and Anthropic Messages APIs.

Real HTTP on 127.0.0.1 (stdlib ``ThreadingHTTPServer`` in a thread), so the real ``openai`` and
``anthropic`` SDKs are driven end to end — no monkey-patched clients. Replies are scripted (a FIFO
of ``Reply``), or computed by a ``responder`` callback once the script is empty, optionally after a
fixed ``latency_s`` (for throughput benchmarks)::

    with OpenAIFake() as server:
        server.script(server.tool_calls([("ehr__finish", {"response": ["yes"]})]), server.rate_limited(2))
        model = get_model("openai:gpt-test", base_url=server.url)
        ...
        server.requests[0].json["messages"]

Builders: ``text``, ``tool_calls`` (several = parallel calls; a ``str`` argument is sent verbatim,
so malformed JSON is easy), ``error``, ``rate_limited`` (429 + retry-after), ``server_error``
(500), ``overloaded``, ``context_length`` (the provider's own 400), ``malformed_body`` (200 with
invalid JSON), and ``slow(reply, delay_s)`` (timeouts). ``usage(...)`` shapes token counts,
including cached tokens. ``OpenAIFake(profile="llama-cpp-python")`` (``vllm``, ``llama.cpp``,
``sglang``, ``ollama``, ``tgi``, ...: :data:`PROFILES`) refuses requests as that server does
(null content → 500, non-JSON arguments → 400, ...) and answers ``/v1/models`` and its tokenizer
endpoint by itself. The Anthropic fake answers any POST path, so Bedrock
(``/model/<id>/invoke``) and Vertex (``…:rawPredict``) clients work against it too; with a
:class:`ClaudeService` (``AnthropicFake(service="bedrock")``, :data:`SERVICES`) it is as strict as
that service: its URL paths, its credentials, its error bodies and status codes.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import socket
import threading
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self


@dataclass(frozen=True)
class Reply:
    """One scripted HTTP reply."""

    status: int = 200
    body: Any = None  # dict/list → JSON; str/bytes → sent verbatim
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0


@dataclass(frozen=True)
class RecordedRequest:
    """A request the fake received."""

    method: str
    path: str
    headers: dict[str, str]
    json: Any
    raw: bytes = b""
    """The body exactly as sent."""


Responder = Callable[[RecordedRequest], Reply]


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 512
    fake: FakeLLMServer

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.open: set[Any] = set()
        """The connections being served (kept alive between requests): closed by :meth:`FakeLLMServer.stop`."""

    def process_request(self, request: Any, client_address: Any) -> None:
        self.open.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        self.open.discard(request)
        super().shutdown_request(request)

    def handle_error(self, request: Any, client_address: Any) -> None:  # clients hang up on timeouts
        pass


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def do_GET(self) -> None:
        self._answer("GET")

    def do_POST(self) -> None:
        self._answer("POST")

    def _answer(self, method: str) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            payload = json.loads(raw) if raw else None
        except json.JSONDecodeError:
            payload = raw.decode("utf-8", "replace")
        request = RecordedRequest(method, self.path, {k.lower(): v for k, v in self.headers.items()}, payload, raw)
        reply = self.server.fake._next(request)
        wait = reply.delay_s + self.server.fake.latency_s
        if wait and self.server.fake._stopping.wait(wait):
            return
        body = reply.body if isinstance(reply.body, bytes) else (
            reply.body.encode() if isinstance(reply.body, str) else json.dumps(reply.body).encode()
        )
        headers = {"content-type": "application/json", **reply.headers}
        try:
            self.send_response(reply.status)
            self.send_header("content-length", str(len(body)))
            for key, value in headers.items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(body)
        except OSError:
            pass

    def log_message(self, format: str, *args: Any) -> None:
        pass


class FakeLLMServer:
    """Base of the two fakes: lifecycle, the script, the recorded requests."""

    def __init__(self, *, latency_s: float = 0.0, responder: Responder | None = None) -> None:
        self.latency_s = latency_s
        self.responder = responder
        self.requests: list[RecordedRequest] = []
        self._script: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._stopping = threading.Event()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # lifecycle -------------------------------------------------------------------------------
    def start(self, port: int = 0) -> FakeLLMServer:
        """Listen on ``port`` (``0``: any free one; a stopped server's port to restart it at the same URL)."""
        self._stopping.clear()
        self._server = _Server(("127.0.0.1", port), _Handler)
        self._server.fake = self
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True, name=type(self).__name__
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop as a killed server does: no more connections, and the open ones (kept alive) are cut."""
        self._stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            for connection in list(self._server.open):
                with contextlib.suppress(OSError):
                    connection.shutdown(socket.SHUT_RDWR)
            self._server = None

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._server is not None, "server not started"
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        raise NotImplementedError

    # script ----------------------------------------------------------------------------------
    def script(self, *replies: Reply) -> None:
        """Queue replies, answered in order."""
        with self._lock:
            self._script.extend(replies)

    def reset(self) -> None:
        """Forget the script and the recorded requests."""
        with self._lock:
            self._script.clear()
            self.requests.clear()

    def _next(self, request: RecordedRequest) -> Reply:
        with self._lock:
            self.requests.append(request)
            fixed = self._fixed(request)
            if fixed is not None:
                return fixed
            if self._script:
                return self._script.popleft()
        if self.responder is not None:
            return self.responder(request)
        return self.error(599, "the fake server's script is empty")

    def next_id(self, prefix: str) -> str:
        return f"{prefix}{next(self._ids)}"

    def _fixed(self, request: RecordedRequest) -> Reply | None:
        """A reply the server gives by itself (model lists, tokenizers, refusals), before the script."""
        return None

    # builders shared by both -----------------------------------------------------------------
    @staticmethod
    def slow(reply: Reply, delay_s: float) -> Reply:
        """``reply`` sent after ``delay_s`` seconds (use a delay beyond the client timeout for timeouts)."""
        return replace(reply, delay_s=delay_s)

    @staticmethod
    def malformed_body() -> Reply:
        """HTTP 200 whose body is not JSON."""
        return Reply(200, "{this is not json")

    def error(self, status: int, message: str, *, headers: dict[str, str] | None = None, code: str | None = None) -> Reply:
        raise NotImplementedError

    def rate_limited(self, retry_after_s: float | None = 1.0) -> Reply:
        headers = {} if retry_after_s is None else {"retry-after": f"{retry_after_s:g}"}
        return self.error(429, "Rate limit reached; slow down", headers=headers)

    def server_error(self, status: int = 500) -> Reply:
        return self.error(status, "The server had an error while processing your request")


def usage_openai(input: int = 10, output: int = 5, cached: int = 0, cache_write: int | None = None) -> dict[str, Any]:
    details: dict[str, Any] = {"cached_tokens": cached}
    if cache_write is not None:
        details["cache_write_tokens"] = cache_write
    return {
        "prompt_tokens": input,
        "completion_tokens": output,
        "total_tokens": input + output,
        "prompt_tokens_details": details,
    }


def usage_anthropic(input: int = 10, output: int = 5, cached: int = 0, cache_write: int = 0) -> dict[str, Any]:
    """Anthropic semantics: ``input`` here is the *uncached* part, as the API reports it."""
    return {
        "input_tokens": input,
        "output_tokens": output,
        "cache_read_input_tokens": cached,
        "cache_creation_input_tokens": cache_write,
    }


@dataclass(frozen=True)
class ServerProfile:
    """What one OpenAI-compatible server refuses and offers besides chat completions.

    A fake with a profile checks every chat request the way that server does and answers a
    violation with that server's own error (status and wording), before any scripted reply; it
    answers ``GET /v1/models`` and its tokenizer endpoint by itself. See :data:`PROFILES`.
    """

    name: str
    null_content_status: int | None = None
    """Status for an assistant turn whose ``content`` is null (llama-cpp-python: 500)."""
    missing_content_status: int | None = None
    """Status for an assistant turn without a ``content`` key (templates that read it: 500)."""
    json_arguments: bool = False
    """Tool-call argument text must be a JSON object (vLLM, SGLang parse it to render the template: 400)."""
    tool_call_id_length: int | None = None
    """Tool-call ids must be exactly this many ``[A-Za-z0-9]`` characters (Mistral templates: 9)."""
    refuses_auto_tools: str | None = None
    """The 400 message for ``tool_choice: auto`` (vLLM without ``--enable-auto-tool-choice``)."""
    models: tuple[str, ...] | None = None
    """Served model ids: another id gets a 404 (vLLM, Ollama). ``None``: any name is served (llama-cpp-python)."""
    listed: tuple[str, ...] = ("fake-model",)
    """What ``GET /v1/models`` lists."""
    tokenizer: str | None = None
    """``llama.cpp`` (``POST /tokenize`` {content}), ``vllm`` (``POST /tokenize`` {model, prompt}),
    ``llama-cpp-python`` (``POST /extras/tokenize/count`` {input}), or ``None``."""
    context_window: int | None = None
    """Reported context length (vLLM ``max_model_len`` in ``/v1/models``, llama.cpp ``/props``)."""


def fake_token_count(text: str) -> int:
    """The fake tokenizer: one token per 3 characters, rounded up (deterministic, not a real one)."""
    return -(-len(text) // 3)


PROFILES: dict[str, ServerProfile] = {
    "llama-cpp-python": ServerProfile(
        "llama-cpp-python", null_content_status=500, missing_content_status=500, listed=("model.gguf",),
        tokenizer="llama-cpp-python",
    ),
    "llama.cpp": ServerProfile("llama.cpp", json_arguments=True, listed=("model.gguf",), tokenizer="llama.cpp",
                               context_window=16_384),
    "vllm": ServerProfile(
        "vllm", json_arguments=True, models=("Qwen/Qwen3-8B",), listed=("Qwen/Qwen3-8B",), tokenizer="vllm",
        context_window=32_768,
    ),
    "vllm-no-tool-parser": ServerProfile(
        "vllm-no-tool-parser", json_arguments=True, models=("Qwen/Qwen3-8B",), listed=("Qwen/Qwen3-8B",),
        tokenizer="vllm", context_window=32_768,
        refuses_auto_tools='"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set',
    ),
    "vllm-mistral": ServerProfile(
        "vllm-mistral", json_arguments=True, tool_call_id_length=9, models=("mistralai/Mistral-Small",),
        listed=("mistralai/Mistral-Small",), tokenizer="vllm",
    ),
    "sglang": ServerProfile("sglang", json_arguments=True, listed=("default",)),
    "ollama": ServerProfile("ollama", models=("qwen2.5:7b",), listed=("qwen2.5:7b",)),
    "tgi": ServerProfile("tgi", listed=("tgi",)),
}
"""Documented strictness of the servers docs/models.md lists (requests) and what they offer."""


class OpenAIFake(FakeLLMServer):
    """Speaks ``POST /v1/chat/completions`` (and ``GET /v1/models``); with a :class:`ServerProfile`
    (``OpenAIFake(profile="vllm")``) it refuses requests the way that server does."""

    def __init__(self, *, latency_s: float = 0.0, responder: Responder | None = None,
                 profile: str | ServerProfile | None = None) -> None:
        super().__init__(latency_s=latency_s, responder=responder)
        self.profile = PROFILES[profile] if isinstance(profile, str) else profile

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    # the server's own replies ------------------------------------------------------------------
    def _fixed(self, request: RecordedRequest) -> Reply | None:
        path = request.path.split("?")[0]
        if request.method == "GET" and path == "/v1/models":
            return self._models()
        if self.profile is None:
            return None
        if request.method == "POST" and path in ("/tokenize", "/extras/tokenize/count"):
            return self._tokenize(path, request.json)
        if request.method == "GET" and path == "/props" and self.profile.tokenizer == "llama.cpp":
            return Reply(200, {"default_generation_settings": {"n_ctx": self.profile.context_window}})
        if request.method == "POST" and path == "/v1/chat/completions" and isinstance(request.json, dict):
            return self._refusal(request.json)
        return None

    def _models(self) -> Reply:
        listed = self.profile.listed if self.profile else ("fake-model",)
        data = []
        for model_id in listed:
            entry: dict[str, Any] = {"id": model_id, "object": "model", "created": 1_700_000_000, "owned_by": "fake"}
            if self.profile is not None and self.profile.tokenizer == "vllm" and self.profile.context_window:
                entry["max_model_len"] = self.profile.context_window
            data.append(entry)
        return Reply(200, {"object": "list", "data": data})

    def _tokenize(self, path: str, body: Any) -> Reply:
        assert self.profile is not None
        dialect = self.profile.tokenizer
        body = body if isinstance(body, dict) else {}
        if dialect == "llama.cpp" and path == "/tokenize" and isinstance(body.get("content"), str):
            return Reply(200, {"tokens": list(range(fake_token_count(body["content"])))})
        if dialect == "vllm" and path == "/tokenize" and isinstance(body.get("prompt"), str):
            n = fake_token_count(body["prompt"])
            return Reply(200, {"count": n, "max_model_len": self.profile.context_window, "tokens": list(range(n))})
        if dialect == "llama-cpp-python" and path == "/extras/tokenize/count" and isinstance(body.get("input"), str):
            return Reply(200, {"count": fake_token_count(body["input"])})
        return Reply(404 if dialect is None or (dialect == "llama-cpp-python" and path == "/tokenize") else 400,
                     {"error": {"message": "Not Found" if dialect is None else "invalid tokenize request"}})

    def _refusal(self, body: dict[str, Any]) -> Reply | None:
        """The profile's error for a request the server would refuse, else ``None``."""
        p = self.profile
        assert p is not None
        if p.models is not None and body.get("model") not in p.models:
            return self.error(404, f"The model `{body.get('model')}` does not exist.", code="model_not_found")
        if p.refuses_auto_tools and body.get("tools") and body.get("tool_choice", "auto") == "auto":
            return self.error(400, p.refuses_auto_tools)
        for message in body.get("messages") or []:
            problem = self._message_problem(message)
            if problem is not None:
                return problem
        return None

    def _message_problem(self, message: dict[str, Any]) -> Reply | None:
        p = self.profile
        assert p is not None
        if message.get("role") != "assistant":
            return None
        if "content" not in message and p.missing_content_status:
            return self.error(p.missing_content_status, "'dict object' has no attribute 'content'")
        if message.get("content", "") is None and p.null_content_status:
            return self.error(p.null_content_status, "can only concatenate str (not \"NoneType\") to str")
        for call in message.get("tool_calls") or []:
            arguments = (call.get("function") or {}).get("arguments")
            if p.json_arguments:
                try:
                    parsed = json.loads(arguments) if isinstance(arguments, str) else None
                except json.JSONDecodeError as err:
                    return self.error(400, f"Expecting value: line 1 column {err.colno} (char {err.pos})")
                if not isinstance(parsed, dict):
                    return self.error(400, "tool call arguments must be a JSON object")
            call_id = call.get("id")
            if p.tool_call_id_length is not None and not (
                isinstance(call_id, str) and len(call_id) == p.tool_call_id_length and call_id.isalnum()
            ):
                return self.error(400, f"Tool call id was {call_id} but must be a-z, A-Z, 0-9, with a length of "
                                       f"{p.tool_call_id_length}.")
        return None

    # replies -----------------------------------------------------------------------------------
    def _completion(self, message: dict[str, Any], finish: str, usage: dict[str, Any] | None, model: str,
                    with_usage: bool = True) -> Reply:
        body = {
            "id": self.next_id("chatcmpl-"),
            "object": "chat.completion",
            "created": 1_700_000_000,
            "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
        }
        if with_usage:
            body["usage"] = usage if usage is not None else usage_openai()
        return Reply(200, body, {"x-request-id": self.next_id("req_")})

    def text(
        self, content: str | None, *, usage: dict[str, Any] | None = None, finish: str | None = "stop",
        model: str = "fake-model", reasoning: str | None = None, with_usage: bool = True,
        reasoning_field: str = "reasoning_content",
    ) -> Reply:
        """A reply with this text (which may hold a tool call written in text, ``<think>`` blocks...);
        ``with_usage=False`` leaves ``usage`` out (servers that do not report it)."""
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if reasoning is not None:
            message[reasoning_field] = reasoning
        return self._completion(message, finish, usage, model, with_usage)  # type: ignore[arg-type]

    def tool_calls(
        self, calls: Sequence[tuple[str, dict[str, Any] | str]], *, content: str | None = None,
        usage: dict[str, Any] | None = None, model: str = "fake-model", ids: Sequence[str | None] | None = None,
        arguments_as_objects: bool = False,
    ) -> Reply:
        """One assistant turn with these ``(wire_name, arguments)`` calls (several = parallel).

        ``ids`` replaces the generated call ids (``None`` leaves the key out, as some servers do);
        ``arguments_as_objects`` sends arguments as JSON objects, not text (TGI, older Ollama).
        """
        tool_calls = []
        for n, (name, args) in enumerate(calls):
            arguments: Any = args if isinstance(args, str) or arguments_as_objects else json.dumps(args)
            entry: dict[str, Any] = {"type": "function", "function": {"name": name, "arguments": arguments}}
            call_id = ids[n] if ids is not None else self.next_id("call_")
            if call_id is not None:
                entry["id"] = call_id
            tool_calls.append(entry)
        message = {"role": "assistant", "content": content, "tool_calls": tool_calls}
        return self._completion(message, "tool_calls", usage, model)

    def error(self, status: int, message: str, *, headers: dict[str, str] | None = None, code: str | None = None) -> Reply:
        kind = {400: "invalid_request_error", 401: "authentication_error", 429: "rate_limit_exceeded"}.get(status, "server_error")
        body = {"error": {"message": message, "type": kind, "param": None, "code": code}}
        return Reply(status, body, headers or {})

    def context_length(self) -> Reply:
        return self.error(
            400,
            "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.",
            code="context_length_exceeded",
        )

    def overloaded(self) -> Reply:
        return self.error(503, "The engine is currently overloaded, please try again later")


@dataclass(frozen=True)
class ClaudeService:
    """How one service that serves Claude answers (:data:`SERVICES`): the Anthropic API, AWS Bedrock
    or Google Vertex AI. A fake with a service checks every request as that service does (path,
    credentials, body) and answers a violation with that service's own error (status, body shape,
    wording), before any scripted reply.

    - ``anthropic``: the key as ``x-api-key`` or ``Authorization: Bearer`` (the SDK sends the latter),
      and an ``anthropic-version`` header; ``GET /v1/models/{id}``,
      ``GET /v1/models``, ``POST /v1/messages``; errors ``{"type": "error", "error": {type, message}}``.
    - ``bedrock``: ``POST /model/{id}/invoke`` with ``anthropic_version`` in the body and no ``model``;
      ``Authorization: Bearer <key>`` or SigV4 (``AWS4-HMAC-SHA256 Credential=<access key id>/…`` with
      ``x-amz-date``); errors ``{"message": …}`` with ``x-amzn-ErrorType``; unknown model → 400
      ``ValidationException``.
    - ``vertex``: ``POST /v1/projects/{p}/locations/{r}/publishers/anthropic/models/{id}:rawPredict``
      with ``Authorization: Bearer <token>``; errors ``{"error": {code, message, status}}``; unknown
      model → 404 ``NOT_FOUND``; other paths → Google's HTML 404.
    """

    name: str
    models: tuple[str, ...] = ("claude-fake",)
    """Model ids served; another id is refused as the service refuses it."""
    credential: str = "sk-test-SECRET-0123456789abcdef"
    """The accepted API key, bearer token, access token, or (SigV4) AWS access key id."""
    tools: bool = True
    """False: a request with ``tools`` is refused (a model without tool use)."""
    project: str = "proj"
    region: str = "us-east5"
    context_window: int = 200_000
    """``max_input_tokens`` of ``GET /v1/models/{id}`` (anthropic)."""
    chars_per_token: float = 3.0
    """The fake tokenizer of ``count_tokens`` (anthropic, vertex): characters per token, rounded up, plus
    a message overhead of 7 tokens."""
    lifecycle: str = "active"
    """``lifecycle`` of ``GET /v1/models/{id}`` (anthropic): ``active``, ``deprecated`` or ``retired``."""


SERVICES: dict[str, ClaudeService] = {
    "anthropic": ClaudeService("anthropic", models=("claude-fake",)),
    "bedrock": ClaudeService("bedrock", models=("us.anthropic.claude-fake-v1:0",), region="us-east-1"),
    "vertex": ClaudeService("vertex", models=("claude-fake@20250101",)),
}
"""The three services with their default models and credentials (``dataclasses.replace`` to vary)."""

_AWS_TYPES = {400: "ValidationException", 403: "AccessDeniedException", 404: "ResourceNotFoundException",
              408: "ModelTimeoutException", 429: "ThrottlingException", 500: "InternalServerException",
              503: "ServiceUnavailableException"}
_GOOGLE_STATUS = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
                  429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE", 529: "UNAVAILABLE"}
_GOOGLE_404 = ("<!DOCTYPE html>\n<html lang=en><meta charset=utf-8><title>Error 404 (Not Found)!!1</title>"
               "<p><b>404.</b> <ins>That\u2019s an error.</ins><p>The requested URL was not found on this server.")


class AnthropicFake(FakeLLMServer):
    """Speaks ``POST /v1/messages`` (any POST path, so Bedrock and Vertex clients work too); with a
    :class:`ClaudeService` (``AnthropicFake(service="vertex")``) it is as strict as that service."""

    def __init__(self, *, latency_s: float = 0.0, responder: Responder | None = None,
                 service: str | ClaudeService | None = None) -> None:
        super().__init__(latency_s=latency_s, responder=responder)
        self.service = SERVICES[service] if isinstance(service, str) else service

    @property
    def url(self) -> str:
        """The base URL a client is given (Vertex's ends in ``/v1``, as the SDK's default does)."""
        suffix = "/v1" if self.service is not None and self.service.name == "vertex" else ""
        return f"http://127.0.0.1:{self.port}{suffix}"

    # the service's own replies -----------------------------------------------------------------
    def _fixed(self, request: RecordedRequest) -> Reply | None:
        if self.service is None:
            return None
        check = {"anthropic": self._anthropic, "bedrock": self._bedrock, "vertex": self._vertex}[self.service.name]
        return check(request, request.path.split("?")[0])

    def _anthropic(self, request: RecordedRequest, path: str) -> Reply | None:
        s = self.service
        assert s is not None
        if s.credential not in (request.headers.get("x-api-key"), request.headers.get("authorization", "")[7:]):
            return self.error(401, "invalid x-api-key")
        if "anthropic-version" not in request.headers:
            return self.error(400, "anthropic-version: header is required")
        if request.method == "GET" and path == "/v1/models":
            data = [self._model_info(m) for m in s.models]
            return Reply(200, {"data": data, "has_more": False, "first_id": s.models[0], "last_id": s.models[-1]})
        if request.method == "GET" and path.startswith("/v1/models/"):
            model_id = path.removeprefix("/v1/models/")
            if model_id not in s.models:
                return self.error(404, f"model: {model_id}", kind="not_found_error")
            return Reply(200, self._model_info(model_id))
        if request.method == "POST" and path == "/v1/messages/count_tokens" and isinstance(request.json, dict):
            return self._count_tokens(request.json)
        if request.method == "POST" and path == "/v1/messages" and isinstance(request.json, dict):
            body = request.json
            if body.get("model") not in s.models:
                return self.error(404, f"model: {body.get('model')}", kind="not_found_error")
            return self._body_problem(body)
        return self.error(404, "Not Found", kind="not_found_error")

    def _model_info(self, model_id: str) -> dict[str, Any]:
        assert self.service is not None
        return {"type": "model", "id": model_id, "display_name": model_id, "created_at": "2025-01-01T00:00:00Z",
                "lifecycle": self.service.lifecycle, "max_input_tokens": self.service.context_window, "max_tokens": 64_000}

    def _bedrock(self, request: RecordedRequest, path: str) -> Reply | None:
        s = self.service
        assert s is not None
        auth = request.headers.get("authorization", "")
        if not auth:
            return self.error(403, "Missing Authentication Token", kind="MissingAuthenticationTokenException")
        signed = auth.startswith(f"AWS4-HMAC-SHA256 Credential={s.credential}/") and "x-amz-date" in request.headers
        if auth != f"Bearer {s.credential}" and not signed:
            return self.error(403, "The security token included in the request is invalid.",
                              kind="UnrecognizedClientException")
        parts = path.split("/")
        if request.method != "POST" or len(parts) != 4 or parts[1] != "model" or parts[3] != "invoke":
            return Reply(404, {"Output": {"__type": "com.amazon.coral.service#UnknownOperationException"},
                               "Version": "1.0"}, {"x-amzn-ErrorType": "UnknownOperationException"})
        from urllib.parse import unquote

        body = request.json if isinstance(request.json, dict) else {}
        if "model" in body or "anthropic_version" not in body:
            return self.error(400, "Malformed input request: #: required key [anthropic_version] not found, "
                                   "extraneous key [model] is not permitted, please reformat your input and try again.")
        if unquote(parts[2]) not in s.models:
            return self.error(400, "The provided model identifier is invalid.")
        return self._body_problem(body)

    def _vertex(self, request: RecordedRequest, path: str) -> Reply | None:
        s = self.service
        assert s is not None
        prefix = "/v1/projects/"
        if request.method != "POST" or not path.startswith(prefix) or not path.endswith(":rawPredict"):
            return Reply(404, _GOOGLE_404, {"content-type": "text/html; charset=UTF-8"})
        if request.headers.get("authorization") != f"Bearer {s.credential}":
            return self.error(401, "Request had invalid authentication credentials. Expected OAuth 2 access token, "
                                   "login cookie or other valid authentication credential.")
        resource = path.removeprefix("/v1/").removesuffix(":rawPredict")
        parts = resource.split("/")  # projects/{p}/locations/{r}/publishers/anthropic/models/{m}
        if len(parts) != 8 or parts[2] != "locations" or parts[4:7] != ["publishers", "anthropic", "models"]:
            return Reply(404, _GOOGLE_404, {"content-type": "text/html; charset=UTF-8"})
        if parts[1] != s.project or parts[3] != s.region:
            return self.error(403, f"Permission 'aiplatform.endpoints.predict' denied on resource "
                                   f"'//aiplatform.googleapis.com/{resource}' (or it may not exist).")
        body = request.json if isinstance(request.json, dict) else {}
        if parts[7] == "count-tokens":  # the model is named in the body here
            return self._count_tokens(body)
        if "model" in body or "anthropic_version" not in body:
            return self.error(400, "Invalid JSON payload received. anthropic_version is required; model is not "
                                   "allowed in the body.")
        if parts[7] not in s.models:
            return self.error(404, f"Publisher Model `{resource}` not found.")
        return self._body_problem(body)

    def _count_tokens(self, body: dict[str, Any]) -> Reply:
        assert self.service is not None
        if body.get("model") not in self.service.models:
            return self.error(404, f"model: {body.get('model')}", kind="not_found_error")
        texts = [m.get("content") for m in body.get("messages") or [] if isinstance(m, dict)]
        chars = sum(len(t) for t in texts if isinstance(t, str))
        return Reply(200, {"input_tokens": 7 + int(-(-chars // self.service.chars_per_token))})

    def _body_problem(self, body: dict[str, Any]) -> Reply | None:
        assert self.service is not None
        if not isinstance(body.get("max_tokens"), int):
            return self.error(400, "max_tokens: Field required")
        if body.get("tools") and not self.service.tools:
            return self.error(400, "This model doesn't support tool use.")
        return None

    # replies -----------------------------------------------------------------------------------
    def _message(self, content: list[dict[str, Any]], stop: str, usage: dict[str, Any] | None, model: str) -> Reply:
        body = {
            "id": self.next_id("msg_"),
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": usage if usage is not None else usage_anthropic(),
        }
        return Reply(200, body, {"request-id": self.next_id("req_")})

    def text(
        self, content: str, *, usage: dict[str, Any] | None = None, stop: str = "end_turn", model: str = "claude-fake",
        thinking: str | None = None, signature: str = "sig-1",
    ) -> Reply:
        blocks: list[dict[str, Any]] = []
        if thinking is not None:
            blocks.append({"type": "thinking", "thinking": thinking, "signature": signature})
        blocks.append({"type": "text", "text": content})
        return self._message(blocks, stop, usage, model)

    def tool_calls(
        self, calls: Sequence[tuple[str, dict[str, Any]]], *, content: str | None = None,
        usage: dict[str, Any] | None = None, model: str = "claude-fake",
    ) -> Reply:
        """One assistant turn with these ``(wire_name, input)`` tool_use blocks (several = parallel)."""
        blocks: list[dict[str, Any]] = [{"type": "text", "text": content}] if content else []
        blocks += [{"type": "tool_use", "id": self.next_id("toolu_"), "name": n, "input": a} for n, a in calls]
        return self._message(blocks, "tool_use", usage, model)

    def error(self, status: int, message: str, *, headers: dict[str, str] | None = None, code: str | None = None,
              kind: str | None = None) -> Reply:
        """An error in the service's own shape (Anthropic's by default); ``kind`` overrides its type."""
        name = self.service.name if self.service is not None else "anthropic"
        if name == "bedrock":
            kind = kind or _AWS_TYPES.get(status, "InternalServerException")
            return Reply(status, {"message": message}, {"x-amzn-ErrorType": f"{kind}:http://internal.amazon.com/coral/"
                                                        "com.amazon.bedrock/", **(headers or {})})
        if name == "vertex":
            google = {"code": status, "message": message, "status": kind or _GOOGLE_STATUS.get(status, "UNKNOWN")}
            return Reply(status, {"error": google}, headers or {})
        kind = kind or {
            400: "invalid_request_error", 401: "authentication_error", 403: "permission_error", 404: "not_found_error",
            413: "request_too_large", 429: "rate_limit_error", 529: "overloaded_error",
        }.get(status, "api_error")
        return Reply(status, {"type": "error", "error": {"type": kind, "message": message}}, headers or {})

    def context_length(self) -> Reply:
        return self.error(400, "prompt is too long: 210000 tokens > 200000 maximum")

    def overloaded(self) -> Reply:
        return self.error(529, "Overloaded")


__all__ = [
    "PROFILES",
    "SERVICES",
    "AnthropicFake",
    "ClaudeService",
    "FakeLLMServer",
    "OpenAIFake",
    "RecordedRequest",
    "Reply",
    "Responder",
    "ServerProfile",
    "fake_token_count",
    "usage_anthropic",
    "usage_openai",
]
