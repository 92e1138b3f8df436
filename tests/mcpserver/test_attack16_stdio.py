"""attack16reach: what a client may write on the wire of ``clinseek mcp serve``, line by line.

A JavaScript client (Claude Desktop, Cursor, the TypeScript SDK) serialises a string holding a lone UTF-16
surrogate (a model's broken emoji, a cut string) as the escape ``"\\ud800"``: ``JSON.stringify`` has written
lone surrogates that way since ES2019, and Python's ``json`` reads it. The SDK's stdio transport parses each
line with pydantic, which refuses such an escape, and drops the request without an answer: the client
waited for ever (measured: no answer in 20 s to any of 9 such calls, nothing on the server's stderr).
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from _tool_cases import Case

pytestmark = pytest.mark.timeout(180)


class Wire:
    """A ``clinseek mcp serve`` subprocess spoken to one JSON-RPC line at a time."""

    def __init__(self, case: Case, errlog: Path) -> None:
        args = ["--store", str(case.store), "--subject-id", str(case.subject_id),
                "--prediction-time", case.prediction_time.isoformat(sep=" ")]
        self.err = errlog.open("wb")
        self.proc = subprocess.Popen([sys.executable, "-m", "clinseek", "mcp", "serve", *args],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.err)

    def send(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line.encode("ascii") + b"\n")
        self.proc.stdin.flush()

    def receive(self, timeout: float = 20) -> dict[str, Any] | None:
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        if not ready:
            return None
        line = self.proc.stdout.readline()
        return json.loads(line) if line else None

    def initialize(self) -> None:
        self.send(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}}))
        assert self.receive() is not None
        self.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            os.kill(self.proc.pid, 9)
            self.proc.wait()
        self.err.close()


@pytest.fixture
def wire(synthetic_case: Case, tmp_path: Path) -> Any:
    served = Wire(synthetic_case, tmp_path / "server.log")
    served.initialize()
    yield served
    served.close()


def _call(request_id: int, name: str, arguments_json: str) -> str:
    """A tools/call line whose arguments are given as JSON text (escapes kept as written)."""
    head = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "tools/call"})[:-1]
    return f'{head}, "params": {{"name": "{name}", "arguments": {arguments_json}}}}}'


def _text(reply: dict[str, Any]) -> str:
    return " | ".join(block.get("text", "") for block in reply["result"]["content"])


def test_a_lone_surrogate_escape_in_an_argument_is_answered(wire: Wire) -> None:
    wire.send(_call(1, "ehr.think", '{"response": "note \\ud800 end"}'))
    reply = wire.receive()
    assert reply is not None, "no answer: the request was dropped"
    assert reply["id"] == 1 and reply["result"]["isError"] is False and _text(reply) == "Thought recorded."


def test_a_lone_surrogate_in_sql_reaches_the_tool_as_u_fffd(wire: Wire) -> None:
    wire.send(_call(2, "ehr.run_sql_query", '{"sql_query": "SELECT \'a\\udc00b\' AS s"}'))
    reply = wire.receive()
    assert reply is not None, "no answer: the request was dropped"
    assert reply["result"]["isError"] is False
    assert reply["result"]["structuredContent"]["data"]["rows"] == [["a\ufffdb"]]


def test_a_surrogate_pair_and_an_escaped_backslash_are_kept(wire: Wire) -> None:
    """Only lone surrogates change: a pair is its character, and ``\\\\ud800`` is a backslash then 'ud800'."""
    wire.send(_call(3, "ehr.run_sql_query",
                    '{"sql_query": "SELECT \'\\ud83d\\udc89\' AS a, \'\\\\ud800\' AS b, \'\\u00e9\\ud800\' AS c"}'))
    reply = wire.receive()
    assert reply is not None, "no answer: the request was dropped"
    assert reply["result"]["structuredContent"]["data"]["rows"] == [["\U0001f489", "\\ud800", "\u00e9\ufffd"]]


def test_the_server_keeps_answering_after_lines_it_cannot_read(wire: Wire) -> None:
    """A line that is not JSON or nests too deeply gets no answer (the SDK drops it); the next one does."""
    wire.send("{not json")
    wire.send(_call(4, "ehr.think", '{"response": ' + "[" * 5000 + "]" * 5000 + "}"))
    wire.send(_call(5, "ehr.get_table_names", "{}"))
    reply = wire.receive()
    assert reply is not None and reply["id"] == 5 and reply["result"]["isError"] is False
