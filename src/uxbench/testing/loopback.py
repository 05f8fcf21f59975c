"""A real OpenAI-compatible HTTP server on 127.0.0.1, for tests and benchmarks.

The answer comes from a responder (default: `[[SAY:x]]` in the last user message, else a fixed
answer). Faults are injected deterministically from markers in the request, counted per distinct
message list: `[[FAULT:429:2]]` answers 429 to the first two attempts, `[[FAULT:500]]` 500 once,
`[[FAULT:timeout]]` stalls once, `[[FAULT:malformed]]` sends broken JSON once, `[[FAULT:empty]]`
sends no choices once, `[[FAULT:400]]` (any other 4xx) always fails, `[[FAULT:echo]]` always answers
400 with a plain-text page that echoes the request's headers (a debugging proxy: the page holds the key).
`LoopbackConfig.echo_headers_status` makes every answer such a page, with any status (200 included).

`max_inflight=1` makes it a single-slot server (llama.cpp with one slot): it works on one request at a
time, the others wait in its queue, and a request whose client gave up is still worked on to the end.

    with LoopbackServer(LoopbackConfig(latency_ms=5)) as srv:
        model = create_model_api("openai:loopback", {"base_url": srv.base_url})

    python -m uxbench.testing.loopback --port 8765 --latency-ms 100   # foreground, prints the base URL
    python -m uxbench.testing.loopback --agent reference               # the scripted tool-task agent behind it

Tools: with `tools` in the request, `[[CALL:name {...}]]` in the last user message answers with that tool call and
a conversation ending with tool results gets them quoted back (the scripted tool agent); a responder may answer
with tool calls itself (`testing/agents.py`: the scripted plan agents of tool tasks).
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import itertools
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

import orjson
from aiohttp import web

from uxbench.models.providers._markers import (
    FAULT_RE,
    SAY_RE,
    THINK_RE,
    fake_logprobs,
    fake_tokens,
    marker_probability,
)
from uxbench.models.providers._tools import scripted_tool_reply
from uxbench.testing.server import BackgroundServer

Responder = Callable[[list[dict[str, Any]], dict[str, Any]], "str | dict[str, Any]"]
"""(messages, request body) -> the answer's text, or a message {"content": ..., "tool_calls": [{"name": ...,
"arguments": {...}}]} to answer with tool calls."""
LogprobEntry = tuple[str, float, list[tuple[str, float]]]
PageResponder = Callable[[list[dict[str, Any]], dict[str, Any], dict[str, str]], "tuple[int, str] | None"]
LogprobsResponder = Callable[[list[dict[str, Any]], dict[str, Any], str], "list[LogprobEntry] | None"]
_BROKEN_BODY = b'{"id": "chatcmpl-broken", "choices": [{"message": {"content": "'
_JSON = "application/json"


@dataclass
class LoopbackConfig:
    """How the loopback server behaves."""

    latency_ms: float = 0.0
    """Delay before every answer (asyncio.sleep: costs no CPU)."""
    default_answer: str = "好"
    """Answer when the last user message has no `[[SAY:...]]` marker."""
    model: str = "loopback"
    """Model name reported when the request names none."""
    retry_after_s: float = 1.0
    """Value of the Retry-After header on injected 429/503 answers."""
    timeout_sleep_s: float = 5.0
    """How long an injected `timeout` fault stalls (set above the client's timeout)."""
    reasoning_field: str = "reasoning_content"
    """Message field for `[[THINK:...]]` text: `reasoning_content` (DeepSeek, vLLM) or `reasoning`."""
    responder: Responder | None = None
    """Custom answer function (messages, request body) -> text; replaces the SAY rule."""
    echo_headers_status: int | None = None
    """When set, answer every chat request with this status and a plain-text body that echoes the request
    line and headers (Authorization included), as a misconfigured proxy or debug endpoint does."""
    page: PageResponder | None = None
    """Custom raw answer (messages, request body, request headers) -> (status, plain-text body), or None for
    the usual answer: a server's own error pages, echoes and bodies that are not JSON (the secrets sweep)."""
    logprobs_responder: LogprobsResponder | None = None
    """Custom logprobs (messages, request body, answer) -> [(token, logprob, [(alternative, logprob)])] for a
    request that asks for logprobs; None from it falls back to the fabricated ones."""
    logprobs_supported: bool = True
    """False: answer `logprobs: null` even when asked (as servers without logprob support do)."""
    max_prompt_chars: int = 0
    """When > 0, a request whose messages hold more characters is refused with HTTP 400 and vLLM's
    "maximum context length" message, as a server with a small context window does."""
    max_inflight: int = 0
    """How many requests the server works on at once (0: no limit). The others queue, and each one's
    `latency_ms` starts when its turn comes, so with 1 the latency of the n-th queued request is n times
    `latency_ms`. Work on a request continues when its client has given up, as on a real server."""


@dataclass
class LoopbackStats:
    """Counters the tests read (all updated on the server's own thread)."""

    requests: int = 0
    in_flight: int = 0
    max_in_flight: int = 0
    processing: int = 0
    """Requests being worked on now (at most `max_inflight` when that is set)."""
    max_processing: int = 0
    abandoned: int = 0
    """Requests whose client had gone by the time the answer was ready (it timed out)."""
    attempts: Counter[str] = field(default_factory=Counter)
    statuses: Counter[int] = field(default_factory=Counter)
    last_headers: dict[str, str] = field(default_factory=dict)
    last_body: dict[str, Any] = field(default_factory=dict)

    def reset(self) -> None:
        self.requests = self.in_flight = self.max_in_flight = 0
        self.processing = self.max_processing = self.abandoned = 0
        self.attempts.clear()
        self.statuses.clear()
        self.last_headers = {}
        self.last_body = {}


def messages_key(messages: list[dict[str, Any]]) -> str:
    """Key of a request's message list for per-prompt attempt counts."""
    pairs = [[m.get("role", ""), m.get("content", "")] for m in messages]
    return hashlib.sha1(orjson.dumps(pairs)).hexdigest()[:16]


def _last_user(messages: list[dict[str, Any]]) -> str:
    for message in reversed(messages):
        if message.get("role") == "user":
            return str(message.get("content") or "")
    return "\n".join(str(m.get("content") or "") for m in messages)


def default_responder(default_answer: str) -> Responder:
    """`[[SAY:x]]`, else the default answer; with tools offered, the scripted tool agent (`[[CALL:name {...}]]`
    in the last user message calls a tool, tool results are quoted back)."""

    def respond(messages: list[dict[str, Any]], body: dict[str, Any]) -> str | dict[str, Any]:
        names = [str((t.get("function") or {}).get("name")) for t in body.get("tools") or [] if isinstance(t, dict)]
        tool_reply = scripted_tool_reply(messages, names)
        if tool_reply is not None:
            if tool_reply.calls:
                return {"content": None, "tool_calls": [{"name": n, "arguments": a} for n, a in tool_reply.calls]}
            return tool_reply.text
        found = SAY_RE.search(_last_user(messages))
        return found.group(1) if found else default_answer

    return respond


class LoopbackApp:
    """The request handlers and their counters; `app` is the aiohttp application."""

    def __init__(self, config: LoopbackConfig | None = None) -> None:
        self.config = config or LoopbackConfig()
        self.stats = LoopbackStats()
        self._responder = self.config.responder or default_responder(self.config.default_answer)
        self._ids = itertools.count(1)
        self._slots: asyncio.Semaphore | None = None  # created on the server's own loop
        self.app = web.Application(client_max_size=64 * 1024 * 1024)
        self.app.router.add_post("/v1/chat/completions", self._chat)
        self.app.router.add_get("/v1/models", self._models)

    async def _models(self, request: web.Request) -> web.Response:
        data = {
            "object": "list",
            "data": [{"id": self.config.model, "object": "model", "owned_by": "uxbench"}],
        }
        return web.Response(body=orjson.dumps(data), content_type=_JSON)

    async def _chat(self, request: web.Request) -> web.Response:
        stats = self.stats
        stats.requests += 1
        stats.in_flight += 1
        stats.max_in_flight = max(stats.max_in_flight, stats.in_flight)
        try:
            raw = await request.read()  # received at once, as a real server does, then queued
            if self.config.max_inflight > 0:
                if self._slots is None:
                    self._slots = asyncio.Semaphore(self.config.max_inflight)
                async with self._slots:
                    response = await self._work(request, raw)
            else:
                response = await self._work(request, raw)
        finally:
            stats.in_flight -= 1
        stats.statuses[response.status] += 1
        transport = request.transport
        if transport is None or transport.is_closing():
            stats.abandoned += 1
        return response

    async def _work(self, request: web.Request, raw: bytes) -> web.Response:
        stats = self.stats
        stats.processing += 1
        stats.max_processing = max(stats.max_processing, stats.processing)
        try:
            return await self._answer(request, raw)
        finally:
            stats.processing -= 1

    async def _answer(self, request: web.Request, raw: bytes) -> web.Response:
        cfg = self.config
        try:
            body = orjson.loads(raw)
            messages = body["messages"]
            if not isinstance(messages, list) or not messages:
                raise ValueError("messages must be a non-empty list")
        except (orjson.JSONDecodeError, KeyError, TypeError, ValueError) as err:
            return _error(400, f"bad request: {err}", "invalid_request_error")
        self.stats.last_headers = dict(request.headers)
        self.stats.last_body = body
        if cfg.echo_headers_status is not None:
            return _echo(request, cfg.echo_headers_status)
        if cfg.page is not None:
            page = cfg.page(messages, body, dict(request.headers))
            if page is not None:
                return web.Response(status=page[0], text=page[1], content_type="text/plain")
        key = messages_key(messages)
        self.stats.attempts[key] += 1
        attempt = self.stats.attempts[key]
        if cfg.latency_ms > 0:
            await asyncio.sleep(cfg.latency_ms / 1000.0)
        text = "\n".join(str(m.get("content") or "") for m in messages)
        if 0 < cfg.max_prompt_chars < len(text):
            return _error(400, f"This model's maximum context length is {cfg.max_prompt_chars // 4} tokens. "
                          f"However, you requested {len(text) // 4} tokens. Please reduce the length of the "
                          "messages.", "BadRequestError")
        if "[[FAULT:" in text:
            fault = await self._fault(text, attempt, request)
            if fault is not None:
                return fault
        answer = self._responder(messages, body)
        return web.Response(body=orjson.dumps(self._completion(body, messages, answer)), content_type=_JSON)

    async def _fault(self, text: str, attempt: int, request: web.Request) -> web.Response | None:
        for kind, count in FAULT_RE.findall(text):
            kind = kind.lower()
            if kind == "echo":
                return _echo(request, 400)
            status = int(kind) if kind.isdigit() else None
            always = status is not None and 400 <= status < 500 and status != 429 and not count
            if not always and attempt > int(count or 1):
                continue
            if status is not None:
                headers = (
                    {"Retry-After": f"{self.config.retry_after_s:g}"} if status in (429, 503, 529) else None
                )
                return _error(status, f"injected fault {status}", "injected", headers)
            if kind == "timeout":
                await asyncio.sleep(self.config.timeout_sleep_s)
                return None
            if kind == "malformed":
                return web.Response(body=_BROKEN_BODY, content_type=_JSON)
            if kind == "empty":
                return web.Response(body=orjson.dumps({"id": "x", "choices": []}), content_type=_JSON)
        return None

    def _completion(
        self, body: dict[str, Any], messages: list[dict[str, Any]], reply: str | dict[str, Any]
    ) -> dict[str, Any]:
        cfg = self.config
        last = _last_user(messages)
        finish = "stop"
        calls: list[dict[str, Any]] = []
        if isinstance(reply, dict):
            answer = str(reply.get("content") or "")
            for call in reply.get("tool_calls") or []:
                arguments = call.get("arguments") or {}
                calls.append({"id": f"call_{next(self._ids)}", "type": "function", "function": {
                    "name": call["name"],
                    "arguments": arguments if isinstance(arguments, str) else orjson.dumps(arguments).decode()}})
        else:
            answer = reply
        max_tokens = body.get("max_tokens") or body.get("max_completion_tokens")
        tokens: list[str] | None = None
        if isinstance(max_tokens, int):
            tokens = fake_tokens(answer)
            if len(tokens) > max_tokens:
                answer, finish = "".join(tokens[:max_tokens]), "length"
        message: dict[str, Any] = {"role": "assistant", "content": answer}
        if calls:
            message["content"] = answer or None
            message["tool_calls"] = calls
            finish = "tool_calls"
        think = THINK_RE.search(last)
        reasoning_tokens = 0
        if think:
            message[cfg.reasoning_field] = think.group(1)
            reasoning_tokens = len(think.group(1)) // 4 + 1
        choice: dict[str, Any] = {"index": 0, "message": message, "finish_reason": finish, "logprobs": None}
        if body.get("logprobs") and cfg.logprobs_supported:
            k = int(body.get("top_logprobs") or 1)
            scripted = cfg.logprobs_responder(messages, body, answer) if cfg.logprobs_responder else None
            entries = scripted if scripted is not None else fake_logprobs(answer, k, 64, marker_probability(last))
            choice["logprobs"] = {
                "content": [
                    {
                        "token": tok,
                        "logprob": lp,
                        "bytes": list(tok.encode()),
                        "top_logprobs": [
                            {"token": t, "logprob": v, "bytes": list(t.encode())} for t, v in top
                        ],
                    }
                    for tok, lp, top in entries
                ]
            }
        prompt_chars = sum(len(str(m.get("content") or "")) for m in messages)
        completion = (len(tokens) if tokens is not None else len(answer) // 4 + 1) + reasoning_tokens
        completion += sum(len(c["function"]["arguments"]) // 4 + 1 for c in calls)
        prompt = prompt_chars // 4 + 1
        return {
            "id": f"chatcmpl-{next(self._ids)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model") or cfg.model,
            "choices": [choice],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
                "completion_tokens_details": {"reasoning_tokens": reasoning_tokens},
            },
        }


def _error(status: int, message: str, kind: str, headers: dict[str, str] | None = None) -> web.Response:
    data = {"error": {"message": message, "type": kind, "code": status}}
    return web.Response(status=status, body=orjson.dumps(data), content_type=_JSON, headers=headers)


def _echo(request: web.Request, status: int) -> web.Response:
    lines = [f"{request.method} {request.path_qs} HTTP/{request.version.major}.{request.version.minor}"]
    lines += [f"{name}: {value}" for name, value in request.headers.items()]
    return web.Response(status=status, text="Request received:\n" + "\n".join(lines), content_type="text/plain")


class LoopbackServer:
    """`LoopbackApp` served from a background thread; `.base_url` is `http://127.0.0.1:PORT/v1`."""

    def __init__(self, config: LoopbackConfig | None = None, *, port: int = 0) -> None:
        self.handler = LoopbackApp(config)
        self._server = BackgroundServer(self.handler.app, port=port)

    @property
    def config(self) -> LoopbackConfig:
        return self.handler.config

    @property
    def stats(self) -> LoopbackStats:
        return self.handler.stats

    @property
    def base_url(self) -> str:
        return self._server.url + "/v1"

    def attempts_for(self, messages: list[dict[str, Any]]) -> int:
        return self.stats.attempts[messages_key(messages)]

    def start(self) -> LoopbackServer:
        self._server.start()
        return self

    def stop(self) -> None:
        self._server.stop()

    def __enter__(self) -> LoopbackServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


async def _serve_forever(config: LoopbackConfig, host: str, port: int) -> None:
    handler = LoopbackApp(config)
    runner = web.AppRunner(handler.app, access_log=None, shutdown_timeout=0.5)
    await runner.setup()
    site = web.TCPSite(runner, host, port, backlog=4096, reuse_address=True)
    await site.start()
    sockets = getattr(site._server, "sockets", None) or []
    bound = int(sockets[0].getsockname()[1]) if sockets else port
    print(f"http://{host}:{bound}/v1", flush=True)
    try:
        await asyncio.Event().wait()
    finally:
        await runner.cleanup()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Serve a fake OpenAI-compatible chat API on loopback.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port (printed on startup)")
    parser.add_argument("--latency-ms", type=float, default=0.0)
    parser.add_argument("--default-answer", default="好")
    parser.add_argument("--model", default="loopback")
    parser.add_argument("--retry-after-s", type=float, default=1.0)
    parser.add_argument("--timeout-sleep-s", type=float, default=5.0)
    parser.add_argument("--reasoning-field", default="reasoning_content")
    parser.add_argument("--max-inflight", type=int, default=0,
                        help="requests worked on at once (1: a single-slot server); 0: no limit")
    parser.add_argument("--agent", choices=("reference", "weak"), default=None,
                        help="answer as a scripted tool-task agent (its resolution steps in the system prompt)")
    ns = parser.parse_args(argv)
    responder = None
    if ns.agent:
        from uxbench.testing.agents import plan_agent_responder

        responder = plan_agent_responder(ns.agent)
    config = LoopbackConfig(
        latency_ms=ns.latency_ms,
        default_answer=ns.default_answer,
        model=ns.model,
        retry_after_s=ns.retry_after_s,
        timeout_sleep_s=ns.timeout_sleep_s,
        reasoning_field=ns.reasoning_field,
        max_inflight=ns.max_inflight,
        responder=responder,
    )
    try:
        asyncio.run(_serve_forever(config, ns.host, ns.port))
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
