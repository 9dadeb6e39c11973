"""Payloads go through the real ``anthropic`` and ``openai`` clients unchanged: each is
sent to a local HTTP server (127.0.0.1, a thread) and the JSON body received must equal
the payload plus the request's own fields."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import anthropic
import openai
import pytest

from tests.helpers.timeline_gen import payload_cases

ANTHROPIC_REPLY = {
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "model": "claude-test",
    "content": [{"type": "text", "text": "ok"}],
    "stop_reason": "end_turn",
    "stop_sequence": None,
    "usage": {"input_tokens": 1, "output_tokens": 1},
}
CHAT_REPLY = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "created": 0,
    "model": "gpt-test",
    "choices": [
        {
            "index": 0,
            "finish_reason": "stop",
            "message": {"role": "assistant", "content": "ok"},
        }
    ],
}
RESPONSES_REPLY = {
    "id": "resp_1",
    "object": "response",
    "created_at": 0,
    "model": "gpt-test",
    "status": "completed",
    "output": [],
    "parallel_tool_calls": True,
    "tool_choice": "auto",
    "tools": [],
}


class _Handler(BaseHTTPRequestHandler):
    bodies: list[Any]

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.bodies.append((self.path, body))  # type: ignore[attr-defined]
        if self.path.endswith("/messages"):
            reply: dict[str, Any] = ANTHROPIC_REPLY
        elif self.path.endswith("/chat/completions"):
            reply = CHAT_REPLY
        else:
            reply = RESPONSES_REPLY
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def server() -> Iterator[ThreadingHTTPServer]:
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    srv.bodies = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield srv
    srv.shutdown()
    srv.server_close()


def _last_body(srv: ThreadingHTTPServer) -> tuple[str, Any]:
    return srv.bodies[-1]  # type: ignore[attr-defined, no-any-return]


@pytest.mark.slow
def test_payloads_reach_the_server_unchanged(server: ThreadingHTTPServer) -> None:
    """Generated payloads of all four formats, sent through ``anthropic.Anthropic`` and
    ``openai.OpenAI``, arrive byte-for-byte as built (as JSON), tools included."""
    url = f"http://127.0.0.1:{server.server_address[1]}"
    claude = anthropic.Anthropic(api_key="test", base_url=url, max_retries=0)
    gpt = openai.OpenAI(api_key="test", base_url=f"{url}/v1", max_retries=0)
    sent = 0
    for seed in range(20):
        for fmt, payload, _ in payload_cases(seed, renders=2, tools=seed % 2 == 1):
            if fmt in ("anthropic", "document"):
                claude.messages.create(model="claude-test", max_tokens=64, **payload)
                expected = {"model": "claude-test", "max_tokens": 64, **payload}
                path = "/v1/messages"
            elif fmt == "openai":  # the messages, or the request's keywords with tools
                request = payload if isinstance(payload, dict) else {"messages": payload}
                gpt.chat.completions.create(model="gpt-test", **request)
                expected, path = {"model": "gpt-test", **request}, "/v1/chat/completions"
            else:
                request = payload if isinstance(payload, dict) else {"input": payload}
                gpt.responses.create(model="gpt-test", **request)
                expected, path = {"model": "gpt-test", **request}, "/v1/responses"
            assert _last_body(server) == (path, expected), f"seed {seed} {fmt}"
            sent += 1
    assert sent >= 150
