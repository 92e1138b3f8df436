"""A local OpenAI-compatible server for a trained student: chat completions over ``transformers`` ``generate``.

For checking a student end to end without vLLM: ``clinseek run --model openai:<name> --base-url <url>``
talks to it exactly as to a vLLM endpoint. A request's messages and ``tools`` go through the student's own
chat template (tool-call arguments turned back into objects, as vLLM does) with the chat-template arguments
it was trained with (its ``training_card.json``); the reply's tool calls are read with the family's parser
(:func:`clinseek.distill.parse_tool_calls`); text that holds no readable call comes back as ``content``,
as vLLM's auto tool choice does. One generation runs at a time. Loopback by default; it is a test and
evaluation aid, not a production server (use vLLM with the ``vllm_tool_parser`` of the family for that).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Mapping, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any

from ..errors import ClinseekError, MissingExtraError
from ._parse import ParseFailure, ToolParser, parse_tool_calls
from ._train import TRAINING_CARD

MAX_NEW_TOKENS = 1024
"""Completion tokens per request when the request sets none (``max_tokens`` / ``max_completion_tokens``)."""


def _history(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """OpenAI request messages as the chat template expects them: call arguments as objects, no ``None`` text."""
    out = []
    for message in messages:
        item = dict(message)
        if item.get("content") is None:
            item["content"] = ""
        calls = []
        for call in item.get("tool_calls") or []:
            function = dict(call.get("function") or {})
            if isinstance(function.get("arguments"), str):
                try:
                    function["arguments"] = json.loads(function["arguments"] or "{}")
                except json.JSONDecodeError:
                    function["arguments"] = {"_raw": function["arguments"]}
            calls.append({**call, "function": function})
        if calls:
            item["tool_calls"] = calls
        out.append(item)
    return out


class StudentModel:
    """A causal LM and its tokenizer, loaded once from a local folder, answering chat requests.

    Args:
        folder: a model folder (``clinseek distill train`` output, or any local HF causal LM with a chat template).
        tool_parser: how calls are read from the generated text (default: the training card's, else ``auto``).
        template_kwargs: chat-template arguments (default: the training card's).
        device: torch device (default ``cpu``).

    Raises:
        ClinseekError: not a local model folder.
        MissingExtraError: torch or transformers is missing.
    """

    def __init__(self, folder: Path | str, *, tool_parser: ToolParser | None = None,
                 template_kwargs: Mapping[str, Any] | None = None, device: str = "cpu") -> None:
        self.folder = Path(folder)
        if not (self.folder / "config.json").is_file():
            raise ClinseekError(f"{self.folder}: not a local model folder (no config.json)")
        card = json.loads((self.folder / TRAINING_CARD).read_text(encoding="utf-8")) \
            if (self.folder / TRAINING_CARD).is_file() else {}
        self.tool_parser: ToolParser = tool_parser or card.get("tool_parser", "auto")
        self.template_kwargs = dict(template_kwargs if template_kwargs is not None else card.get("template_kwargs", {}))
        try:
            import torch
            from transformers import AutoModelForCausalLM, AutoTokenizer
        except ImportError as err:
            raise MissingExtraError("clinseek distill serve", extra="distill", detail=str(err)) from err
        self.torch = torch
        self.tokenizer = AutoTokenizer.from_pretrained(str(self.folder), local_files_only=True)
        model: Any = AutoModelForCausalLM.from_pretrained(str(self.folder), local_files_only=True)
        self.model = model.to(device).eval()
        self.device = device
        self.lock = threading.Lock()

    def complete(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """An OpenAI ``chat.completion`` object for a request body (messages, tools, max_tokens, temperature, seed)."""
        messages = _history(request.get("messages") or [])
        tools = request.get("tools") or None
        prompt = self.tokenizer.apply_chat_template(messages, tools=tools, tokenize=False, add_generation_prompt=True,
                                                    **self.template_kwargs)
        ids = self.tokenizer(prompt, add_special_tokens=False, return_tensors="pt")["input_ids"].to(self.device)
        limit = int(request.get("max_completion_tokens") or request.get("max_tokens") or MAX_NEW_TOKENS)
        temperature = float(request.get("temperature") or 0.0)
        with self.lock, self.torch.no_grad():
            if request.get("seed") is not None:
                self.torch.manual_seed(int(request["seed"]))
            sample = {"do_sample": True, "temperature": temperature} if temperature > 0 else {"do_sample": False}
            output = self.model.generate(ids, attention_mask=self.torch.ones_like(ids), max_new_tokens=limit,
                                         eos_token_id=self.tokenizer.eos_token_id,
                                         pad_token_id=self.tokenizer.pad_token_id or self.tokenizer.eos_token_id,
                                         **sample)
        new = output[0, ids.shape[1]:].tolist()
        return self._reply(request, new, ids.shape[1], limit)

    def _reply(self, request: Mapping[str, Any], new: list[int], prompt_tokens: int, limit: int) -> dict[str, Any]:
        eos = self.tokenizer.eos_token_id
        ended = eos is not None and eos in new
        kept = new[: new.index(eos)] if ended else new
        text = str(self.tokenizer.decode(kept, skip_special_tokens=False))
        try:
            calls = parse_tool_calls(text, self.tool_parser)
        except ParseFailure:
            calls = []
        message: dict[str, Any] = {"role": "assistant", "content": None}
        if calls:
            message["tool_calls"] = [
                {"id": f"call_{i}", "type": "function",
                 "function": {"name": name, "arguments": json.dumps(args, ensure_ascii=False)}}
                for i, (name, args) in enumerate(calls)
            ]
        else:
            message["content"] = self.tokenizer.decode(kept, skip_special_tokens=True)
        finish = "tool_calls" if calls else ("stop" if ended or len(new) < limit else "length")
        return {
            "id": f"chatcmpl-{time.time_ns()}", "object": "chat.completion", "created": int(time.time()),
            "model": str(request.get("model") or self.folder.name),
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": len(new),
                      "total_tokens": prompt_tokens + len(new)},
        }


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _send(self, status: int, body: Mapping[str, Any]) -> None:
        data = json.dumps(body).encode("utf-8")
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        if self.path.rstrip("/").endswith("/models"):
            self._send(200, {"object": "list", "data": [{"id": self.server.name, "object": "model"}]})
        else:
            self._send(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except json.JSONDecodeError as err:
            self._send(400, {"error": {"message": f"invalid JSON: {err}", "type": "invalid_request_error"}})
            return
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._send(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
            return
        try:
            self._send(200, self.server.student.complete(body))
        except (ValueError, TypeError, KeyError) as err:  # a request the template or the model cannot take
            self._send(400, {"error": {"message": f"{type(err).__name__}: {err}", "type": "invalid_request_error"}})


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    student: StudentModel
    name: str


class StudentServer:
    """The OpenAI-compatible endpoint of a :class:`StudentModel`, served from a background thread.

    Use as a context manager; ``url`` is the ``--base-url`` (``http://HOST:PORT/v1``). Port 0 picks a free one.
    """

    def __init__(self, student: StudentModel, *, host: str = "127.0.0.1", port: int = 0, name: str = "student") -> None:
        self.httpd = _Server((host, port), _Handler)
        self.httpd.student = student
        self.httpd.name = name
        self.thread = threading.Thread(target=self.httpd.serve_forever, name="clinseek-student", daemon=True)

    @property
    def url(self) -> str:
        """The base URL of the OpenAI API (``.../v1``)."""
        host, port = self.httpd.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def start(self) -> StudentServer:
        """Start serving in the background."""
        self.thread.start()
        return self

    def close(self) -> None:
        """Stop serving and release the port."""
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=10)

    def __enter__(self) -> StudentServer:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self.close()
