"""`uxbench judge serve SPEC`: any model the project loads (lite:DIR, hf:DIR, a LoRA merged into hf:DIR ...)
behind an OpenAI-compatible HTTP API, so the GRM protocol, the official `openai` SDK and other tools can call a
local judge.

- `POST /v1/chat/completions`: `messages`, `max_tokens` / `max_completion_tokens`, `temperature`, `top_p`,
  `stop`, `seed`, `logprobs` + `top_logprobs` (the first token's alternatives, as OpenAI returns them).
  `stream` and `n` > 1 are refused with a 400 that says so.
- `GET /v1/models`, `GET /health` (with the batch sizes served so far when the model batches).

Batching: requests are handed to the model as they arrive, concurrently; the in-process providers gather
concurrent calls into batches (lite: one encoder pass per batch; hf: one padded forward pass), so a burst of
requests is scored in batches of up to `max_batch`.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Callable
from typing import Any

import orjson
from aiohttp import web

from uxbench.data.schema import Message
from uxbench.errors import ConfigError, FatalModelError, ModelError, UxbenchError
from uxbench.models.api import GenerateConfig, ModelAPI, ModelOutput

_JSON = "application/json"


def _error(status: int, message: str, kind: str = "invalid_request_error") -> web.Response:
    body = {"error": {"message": message, "type": kind, "code": status}}
    return web.Response(status=status, body=orjson.dumps(body), content_type=_JSON)


def _content(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):  # [{"type": "text", "text": ...}, ...]
        return "".join(str(p.get("text", "")) for p in value if isinstance(p, dict) and p.get("type") == "text")
    return "" if value is None else str(value)


def parse_request(body: Any) -> tuple[list[Message], GenerateConfig]:
    """Messages and generation settings of a chat completion request; ConfigError for a bad one."""
    if not isinstance(body, dict):
        raise ConfigError("the request body must be a JSON object")
    if body.get("stream"):
        raise ConfigError("stream is not supported by this server: send stream=false")
    if int(body.get("n") or 1) != 1:
        raise ConfigError("n > 1 is not supported by this server")
    raw = body.get("messages")
    if not isinstance(raw, list) or not raw:
        raise ConfigError("messages must be a non-empty list")
    messages = []
    for i, m in enumerate(raw):
        role = m.get("role") if isinstance(m, dict) else None
        if role == "developer":
            role = "system"
        if role not in ("system", "user", "assistant"):
            raise ConfigError(f"messages[{i}].role must be system, user or assistant")
        messages.append(Message(role=role, content=_content(m.get("content"))))
    top = body.get("top_logprobs")
    want = bool(body.get("logprobs"))
    stop = body.get("stop")
    config = GenerateConfig(
        temperature=body.get("temperature"), top_p=body.get("top_p"), seed=body.get("seed"),
        max_tokens=body.get("max_completion_tokens") or body.get("max_tokens"),
        stop=(stop,) if isinstance(stop, str) else tuple(stop) if isinstance(stop, list) else None,
        top_logprobs=(int(top) if top is not None else 1) if want else None, logprob_tokens=1,
    )
    return messages, config


def completion_body(output: ModelOutput, name: str, ident: str, want_logprobs: bool) -> dict[str, Any]:
    choice: dict[str, Any] = {"index": 0, "message": {"role": "assistant", "content": output.text},
                              "finish_reason": output.finish_reason or "stop", "logprobs": None}
    if want_logprobs and output.logprobs:
        choice["logprobs"] = {"content": [
            {"token": step.token, "logprob": step.logprob, "bytes": list(step.token.encode()),
             "top_logprobs": [{"token": t.token, "logprob": t.logprob, "bytes": list(t.token.encode())}
                              for t in step.top]}
            for step in output.logprobs
        ]}
    usage = output.usage
    return {"id": ident, "object": "chat.completion", "created": int(time.time()), "model": name,
            "choices": [choice], "usage": {"prompt_tokens": usage.input_tokens,
                                           "completion_tokens": usage.output_tokens,
                                           "total_tokens": usage.total_tokens}}


class JudgeServer:
    """The aiohttp application in front of one model."""

    def __init__(self, model: ModelAPI, *, name: str | None = None, max_batch: int = 64) -> None:
        self.model = model
        self.name = name or model.spec
        self._slots = asyncio.Semaphore(max_batch)  # requests in the model at once; the rest wait here
        self._ids = itertools.count(1)
        self.app = web.Application(client_max_size=64 * 1024 * 1024)
        self.app.router.add_post("/v1/chat/completions", self._chat)
        self.app.router.add_get("/v1/models", self._models)
        self.app.router.add_get("/health", self._health)
        self.app.on_cleanup.append(self._close)
        self.served = 0

    async def _close(self, _: web.Application) -> None:
        await self.model.aclose()

    async def _models(self, _: web.Request) -> web.Response:
        data = {"object": "list", "data": [{"id": self.name, "object": "model", "created": 0, "owned_by": "uxbench"}]}
        return web.Response(body=orjson.dumps(data), content_type=_JSON)

    async def _health(self, _: web.Request) -> web.Response:
        sizes = list(getattr(self.model, "batch_sizes", []) or [])
        data = {"status": "ok", "model": self.name, "served": self.served, "batches": len(sizes),
                "max_batch_seen": max(sizes, default=0)}
        return web.Response(body=orjson.dumps(data), content_type=_JSON)

    async def _chat(self, request: web.Request) -> web.Response:
        try:
            body = orjson.loads(await request.read())
            messages, config = parse_request(body)
        except orjson.JSONDecodeError:
            return _error(400, "the request body is not JSON")
        except (ConfigError, ValueError, TypeError) as err:
            return _error(400, str(err))
        asked = str(body.get("model") or self.name)
        if asked != self.name:
            return _error(404, f"model {asked!r} is not served here; this server serves {self.name!r}",
                          "model_not_found")
        try:
            async with self._slots:
                output = await self.model.generate(messages, config)
        except FatalModelError as err:
            return _error(400, str(err))
        except (ModelError, UxbenchError) as err:
            return _error(500, str(err), "server_error")
        self.served += 1
        ident = f"chatcmpl-{next(self._ids)}"
        return web.Response(body=orjson.dumps(completion_body(output, self.name, ident, bool(body.get("logprobs")))),
                            content_type=_JSON)


async def serve_forever(spec: str, args: dict[str, str], *, host: str, port: int, name: str | None,
                        max_batch: int, say: Callable[[str], None]) -> None:
    from uxbench.models.registry import create_model_api

    server = JudgeServer(create_model_api(spec, args), name=name, max_batch=max_batch)
    runner = web.AppRunner(server.app, access_log=None, shutdown_timeout=1.0)
    await runner.setup()
    site = web.TCPSite(runner, host, port, backlog=4096, reuse_address=True)
    await site.start()
    sockets = getattr(site._server, "sockets", None) or []
    bound = int(sockets[0].getsockname()[1]) if sockets else port
    say(f"serving {spec} as model {server.name!r} at http://{host}:{bound}/v1 (Ctrl-C stops)")
    try:
        await asyncio.Event().wait()
    finally:
        await runner.cleanup()
