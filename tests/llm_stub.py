"""A tiny OpenAI-compatible chat-completions server on loopback, for proving the adapter.

It answers from the prompt it is sent, as a model with memory would: asked for
a name or a city, it looks for "my name is ..." or "I live in ..." in the
earlier user messages. So it passes the memory scenarios only if the whole
remembered session reached it. Offered tools with ``tool_choice="required"``,
it calls the first one. With ``"stream": true`` it sends the answer as
server-sent chunks, a word at a time. Run it for the ``@llm_smoke`` scenarios::

    python -m tests.llm_stub --port 8765 &
    LLM_BASE_URL=http://127.0.0.1:8765/v1 pytest features/ -m llm_smoke
"""

from __future__ import annotations

import argparse
import json
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

FACTS = {
    "name": (re.compile(r"my name is ([^.!?]+)", re.IGNORECASE), "Your name is {}."),
    "city": (re.compile(r"i live in ([^.!?]+)", re.IGNORECASE), "You live in {}."),
}


def answer(messages: list[dict[str, Any]]) -> str:
    """Reply to ``messages`` from what the earlier user messages said.

    A question (with "?") about a name or a city is answered from earlier user
    messages; anything else is acknowledged with "Noted."
    """
    users = [m.get("content") or "" for m in messages if m.get("role") == "user"]
    question = users[-1].lower() if users else ""
    for topic, (pattern, reply) in FACTS.items():
        if topic in question and "?" in question:
            for said in reversed(users[:-1]):
                if found := pattern.search(said):
                    return reply.format(found.group(1).strip())
            return f"I don't know your {topic}."
    return "Noted."


def call(body: dict[str, Any], messages: list[dict[str, Any]]) -> dict[str, Any]:
    """A call of the first tool offered, as a model that must call one answers.

    Its one argument is the place named in the last user message ("in Paris"), if any.
    """
    function = body["tools"][0]["function"]
    users = [m.get("content") or "" for m in messages if m.get("role") == "user"]
    place = re.search(r"\bin ([A-Z][a-z]+)", users[-1] if users else "")
    parameters = list(function.get("parameters", {}).get("properties", {}))
    arguments = {parameters[0]: place.group(1)} if place and parameters else {}
    return {
        "id": f"call_stub_{len(messages)}",
        "type": "function",
        "function": {"name": function["name"], "arguments": json.dumps(arguments)},
    }


class _Handler(BaseHTTPRequestHandler):
    server: StubServer

    def do_POST(self) -> None:
        if self.path.rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
            self._send(404, {"error": {"message": f"no route {self.path}"}})
            return
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        messages = body.get("messages")
        if not isinstance(messages, list) or not body.get("model"):
            self._send(400, {"error": {"message": "model and messages are required"}})
            return
        self.server.requests.append(body)
        if body.get("stream"):
            self._stream(body["model"], answer(messages))
            return
        message: dict[str, Any] = {"role": "assistant", "content": answer(messages)}
        if body.get("tools") and body.get("tool_choice") == "required":
            message = {"role": "assistant", "content": None, "tool_calls": [call(body, messages)]}
        self._send(
            200,
            {
                "id": f"chatcmpl-stub-{len(self.server.requests)}",
                "object": "chat.completion",
                "created": 0,
                "model": body["model"],
                "choices": [
                    {
                        "index": 0,
                        "message": message,
                        "finish_reason": "tool_calls" if "tool_calls" in message else "stop",
                    }
                ],
                "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
            },
        )

    def _stream(self, model: str, text: str) -> None:
        """Send ``text`` as server-sent chat-completion chunks, a word at a time, then [DONE]."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        pieces = [{"role": "assistant", "content": ""}]
        pieces += [{"content": word} for word in re.findall(r"\S+\s*", text)]
        for number, delta in enumerate([*pieces, {}]):
            chunk = {
                "id": f"chatcmpl-stub-{len(self.server.requests)}",
                "object": "chat.completion.chunk",
                "created": 0,
                "model": model,
                "choices": [
                    {
                        "index": 0,
                        "delta": delta,
                        "finish_reason": "stop" if number == len(pieces) else None,
                    }
                ],
            }
            self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
        self.wfile.write(b"data: [DONE]\n\n")

    def _send(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        pass


class StubServer(ThreadingHTTPServer):
    """The stub, keeping every request body it answered."""

    def __init__(self, port: int = 0) -> None:
        super().__init__(("127.0.0.1", port), _Handler)
        self.requests: list[dict[str, Any]] = []

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


@contextmanager
def running_stub() -> Iterator[StubServer]:
    """Serve the stub on a free loopback port in a thread, for the duration of the block."""
    server = StubServer()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8765)
    stub = StubServer(parser.parse_args().port)
    print(f"chat-completions stub at {stub.base_url}", flush=True)
    stub.serve_forever()
