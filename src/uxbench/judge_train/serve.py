"""`uxbench judge serve SPEC`: any model the project loads (lite:DIR, hf:DIR, a LoRA merged into hf:DIR ...)
behind an OpenAI-compatible HTTP API, so the GRM protocol, the official `openai` SDK and other tools can call a
local judge.

- `POST /v1/chat/completions`: `model` (required, as OpenAI requires it), `messages`, `max_tokens` /
  `max_completion_tokens`, `temperature`, `top_p`, `stop`, `seed`, `logprobs` + `top_logprobs` (0-20, as
  OpenAI allows; the first token's alternatives, as many as asked: a judge with fewer candidates fills the
  list with tokens at logprob -9999.0, OpenAI's value for "effectively never"). `stream: true` and `n` > 1 are
  refused with a 400 that says so; a field of the wrong JSON type (`"stream": "false"`, `"top_logprobs":
  "5"`) is refused with its name and the type it takes, never guessed.
- `GET /v1/models`, `GET /health` (with the batch sizes served so far when the model batches).
- Every request's `Host` header must name the server (`uxbench.hostcheck`, as `uxbench view` checks it: DNS
  rebinding); other names are refused with 421 unless given with `--allow-host`.
- Every error, including unknown paths (404), wrong methods (405) and bodies over 64 MiB (413), is OpenAI's
  JSON envelope: `{"error": {"message", "type", "code"}}`.

Batching: requests are handed to the model as they arrive, concurrently; the in-process providers gather
concurrent calls into batches (lite: one encoder pass per batch; hf: one padded forward pass), so a burst of
requests is scored in batches of up to `max_batch`.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import orjson
from aiohttp import web

from uxbench.data.schema import Message
from uxbench.errors import ConfigError, FatalModelError, ModelError, UxbenchError
from uxbench.hostcheck import HostCheck
from uxbench.models.api import GenerateConfig, ModelAPI, ModelOutput, TopLogprob

_JSON = "application/json"
MAX_TOP_LOGPROBS = 20
MAX_BODY = 64 * 1024 * 1024


def check_max_batch(value: int) -> int:
    """At least one request in the model at once (0 would start a server whose every request waits forever)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"--max-batch {value!r}: must be a whole number of at least 1 (requests handed to the "
                          "judge at once)")
    return value


def _error(status: int, message: str, kind: str = "invalid_request_error") -> web.Response:
    body = {"error": {"message": message, "type": kind, "code": status}}
    return web.Response(status=status, body=orjson.dumps(body), content_type=_JSON)


def _content(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):  # [{"type": "text", "text": ...}, ...]
        return "".join(str(p.get("text", "")) for p in value if isinstance(p, dict) and p.get("type") == "text")
    return "" if value is None else str(value)


_TYPES: dict[type, str] = {bool: "a boolean (true or false)", int: "an integer", float: "a number",
                           str: "a string", list: "an array"}


def _field(body: dict[str, Any], name: str, kinds: tuple[type, ...]) -> Any:
    """`body[name]` when it is absent, null or of one of `kinds` (a bool is no number); else ConfigError."""
    value = body.get(name)
    if value is None:
        return None
    numeric = int in kinds or float in kinds
    ok = isinstance(value, kinds) and not (isinstance(value, bool) and bool not in kinds and numeric)
    if not ok:
        wanted = " or ".join(_TYPES[k] for k in kinds)
        shown = orjson.dumps(value).decode()[:40]
        raise ConfigError(f"'{name}' must be {wanted}, got {shown}")
    return value


def parse_request(body: Any) -> tuple[list[Message], GenerateConfig]:
    """Messages and generation settings of a chat completion request; ConfigError for a bad one."""
    if not isinstance(body, dict):
        raise ConfigError("the request body must be a JSON object")
    model = _field(body, "model", (str,))
    if not model:
        raise ConfigError("'model' is required: the name GET /v1/models lists")
    if _field(body, "stream", (bool,)):
        raise ConfigError("stream is not supported by this server: send stream=false")
    n = _field(body, "n", (int,))
    if n is not None and n != 1:
        raise ConfigError("n > 1 is not supported by this server" if n > 1 else f"'n' must be at least 1, got {n}")
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
    want = bool(_field(body, "logprobs", (bool,)))
    top = _field(body, "top_logprobs", (int,))
    if top is not None:
        if not 0 <= top <= MAX_TOP_LOGPROBS:
            raise ConfigError(f"'top_logprobs' must be between 0 and {MAX_TOP_LOGPROBS}, got {top}")
        if not want:
            raise ConfigError("'top_logprobs' needs 'logprobs': true")
    stop = _field(body, "stop", (str, list))
    if isinstance(stop, list) and not all(isinstance(s, str) for s in stop):
        raise ConfigError("'stop' must be a string or an array of strings")
    max_tokens = _field(body, "max_completion_tokens", (int,)) or _field(body, "max_tokens", (int,))
    if max_tokens is not None and max_tokens < 1:
        raise ConfigError(f"'max_tokens' must be at least 1, got {max_tokens}")
    config = GenerateConfig(
        temperature=_field(body, "temperature", (int, float)), top_p=_field(body, "top_p", (int, float)),
        seed=_field(body, "seed", (int,)), max_tokens=max_tokens,
        stop=(stop,) if isinstance(stop, str) else tuple(stop) if isinstance(stop, list) else None,
        top_logprobs=max(1, top or 0) if want else None, logprob_tokens=1,
    )
    return messages, config


NEVER = -9999.0
"""OpenAI's logprob for a token the model effectively never writes."""


def _padded(top: Sequence[TopLogprob], k: int) -> list[TopLogprob]:
    """Exactly `k` alternatives: the judge's own, best first, then distinct filler tokens at `NEVER` (a judge
    with two answer words has no other candidates)."""
    ranked = sorted(top, key=lambda t: -t.logprob)[:k]
    taken = {t.token for t in ranked}
    fill = (f"<unused{i}>" for i in itertools.count())
    while len(ranked) < k:
        token = next(fill)
        if token not in taken:
            ranked.append(TopLogprob(token=token, logprob=NEVER))
    return ranked


def completion_body(output: ModelOutput, name: str, ident: str, want_logprobs: bool,
                    top_logprobs: int = 0) -> dict[str, Any]:
    choice: dict[str, Any] = {"index": 0, "message": {"role": "assistant", "content": output.text},
                              "finish_reason": output.finish_reason or "stop", "logprobs": None}
    if want_logprobs and output.logprobs:
        choice["logprobs"] = {"content": [
            {"token": step.token, "logprob": step.logprob, "bytes": list(step.token.encode()),
             "top_logprobs": [{"token": t.token, "logprob": t.logprob, "bytes": list(t.token.encode())}
                              for t in _padded(step.top, top_logprobs)]}
            for step in output.logprobs
        ], "refusal": None}
    usage = output.usage
    return {"id": ident, "object": "chat.completion", "created": int(time.time()), "model": name,
            "choices": [choice], "usage": {"prompt_tokens": usage.input_tokens,
                                           "completion_tokens": usage.output_tokens,
                                           "total_tokens": usage.total_tokens}}


@web.middleware
async def _json_errors(request: web.Request,
                       handler: Callable[[web.Request], Awaitable[web.StreamResponse]]) -> web.StreamResponse:
    """aiohttp's own errors (unknown path, wrong method, a body over the limit) in OpenAI's JSON envelope."""
    try:
        return await handler(request)
    except web.HTTPException as err:
        if err.status < 400:
            raise
        message = {404: f"unknown path {request.path}: this server answers POST /v1/chat/completions, "
                        "GET /v1/models and GET /health",
                   405: f"{request.method} is not allowed on {request.path}",
                   413: f"the request body is over {MAX_BODY // 2**20} MiB"}.get(err.status, err.reason)
        kind = "not_found_error" if err.status == 404 else "invalid_request_error"
        return _error(err.status, message, kind)


def _host_check(hosts: HostCheck) -> Any:
    """Every request's Host header must name this server (`uxbench.hostcheck`), before anything is read."""

    @web.middleware
    async def check(request: web.Request,
                    handler: Callable[[web.Request], Awaitable[web.StreamResponse]]) -> web.StreamResponse:
        if not hosts.allows(request.headers.get("Host")):
            return _error(421, f"this server answers only to {hosts.describe()}; to reach it under another name, "
                               "start it with --allow-host NAME", "misdirected_request")
        return await handler(request)

    return check


class JudgeServer:
    """The aiohttp application in front of one model."""

    def __init__(self, model: ModelAPI, *, name: str | None = None, max_batch: int = 64,
                 hosts: HostCheck | None = None) -> None:
        self.model = model
        self.name = name or model.spec
        self._slots = asyncio.Semaphore(check_max_batch(max_batch))  # requests in the model at once
        self._ids = itertools.count(1)
        self.app = web.Application(client_max_size=MAX_BODY,
                                   middlewares=[_host_check(hosts or HostCheck()), _json_errors])
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
        except ConfigError as err:
            return _error(400, str(err))
        asked = str(body["model"])
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
        answer = completion_body(output, self.name, ident, bool(body.get("logprobs")),
                                 int(body.get("top_logprobs") or 0))
        return web.Response(body=orjson.dumps(answer), content_type=_JSON)


async def serve_forever(spec: str, args: dict[str, str], *, host: str, port: int, name: str | None,
                        max_batch: int, say: Callable[[str], None], allow_hosts: Sequence[str] = ()) -> None:
    from uxbench.models.registry import create_model_api

    hosts = HostCheck(host, allow_hosts)  # a bad --allow-host fails before the model loads
    server = JudgeServer(create_model_api(spec, args), name=name, max_batch=max_batch, hosts=hosts)
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
