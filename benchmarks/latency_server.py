"""A chat-completions server for the judge benchmark: it answers every request exactly
``--latency`` seconds after it arrived and spends as little CPU as it can on the way, so that
the benchmark measures the client, not the server.

The test servers (``tests/chat_server.py``) check every field of a request as a provider would
and cost about 0.45 ms of CPU per request in aiohttp's web framework. On this 2-core machine a
burst of 16 requests then waits up to 7 ms in the server's queue before its 50 ms even start,
which the benchmark would count against the client. Here each connection is an
``asyncio.Protocol`` that reads the request line, the headers it needs (``Content-Length``,
``X-Textgen-Task``) and the body, and schedules the prepared answer with ``call_later``: about
0.05 ms per request. It speaks HTTP/1.1 with keep-alive, which is all the judge clients use.

Run as its own process: prints its URL, serves until stdin closes, then prints the number of
requests and the most it had in flight at once as JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Callable

CLAIMS = '{"claims": ["first claim", "second claim"]}'
VERDICTS = ('{"verdicts": [{"index": 1, "reason": "implied", "verdict": "yes"}, '
            '{"index": 2, "reason": "not stated", "verdict": "no"}]}')


def http_response(content: str) -> bytes:
    """A whole HTTP/1.1 answer carrying a chat completion of ``content``."""
    body = json.dumps({
        "id": "chatcmpl-bench", "object": "chat.completion", "model": "bench",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 20, "completion_tokens": 10, "total_tokens": 30},
    }).encode()
    head = (f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n"
            "Connection: keep-alive\r\n\r\n").encode()
    return head + body


class Stats:
    def __init__(self) -> None:
        self.count = 0
        self.in_flight = 0
        self.max_in_flight = 0


class Connection(asyncio.Protocol):
    def __init__(self, answer_for: Callable[[str], bytes], latency: float, stats: Stats) -> None:
        self.answer_for, self.latency, self.stats = answer_for, latency, stats
        self.buffer = b""
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while True:
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            length, task = 0, ""
            for line in self.buffer[:end].split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                name = name.strip().lower()
                if name == b"content-length":
                    length = int(value)
                elif name == b"x-textgen-task":
                    task = value.strip().decode()
            if len(self.buffer) < end + 4 + length:
                return  # the body is still on its way
            self.buffer = self.buffer[end + 4 + length:]
            self.stats.count += 1
            self.stats.in_flight += 1
            self.stats.max_in_flight = max(self.stats.max_in_flight, self.stats.in_flight)
            asyncio.get_running_loop().call_later(self.latency, self.answer, self.answer_for(task))

    def answer(self, response: bytes) -> None:
        self.stats.in_flight -= 1
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(response)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--latency", type=float, default=0.0)
    p.add_argument("--answer", default='{"verdict": "yes"}')
    p.add_argument("--faithfulness", action="store_true",
                   help="answer claim extraction with two claims and verdicts with yes/no")
    args = p.parse_args(argv)
    fixed = http_response(args.answer)
    claims, verdicts = http_response(CLAIMS), http_response(VERDICTS)

    def answer_for(task: str) -> bytes:
        if not args.faithfulness:
            return fixed
        return claims if task == "faithfulness/claims" else verdicts

    stats = Stats()

    async def run() -> None:
        loop = asyncio.get_running_loop()
        server = await loop.create_server(lambda: Connection(answer_for, args.latency, stats), "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        print(f"http://127.0.0.1:{port}/v1", flush=True)
        await loop.run_in_executor(None, sys.stdin.read)
        print(json.dumps({"count": stats.count, "max_in_flight": stats.max_in_flight}), flush=True)
        server.close()

    asyncio.run(run())


if __name__ == "__main__":
    main()
