"""`uxbench judge serve` answers only to its own names, as `uxbench view` does (issue 28): a request whose Host
header names another host (DNS rebinding) or is malformed gets 421 in OpenAI's error envelope, for every path;
`--allow-host` adds a name."""

from __future__ import annotations

import http.client
import json
from urllib.parse import urlsplit

from uxbench.hostcheck import HostCheck
from uxbench.judge_train.serve import JudgeServer
from uxbench.models.registry import create_model_api
from uxbench.testing.server import BackgroundServer


def _get(url: str, path: str, host: str) -> tuple[int, dict[str, object]]:
    where = urlsplit(url)
    conn = http.client.HTTPConnection(where.hostname or "127.0.0.1", where.port, timeout=10)
    try:
        conn.request("GET", path, headers={"Host": host})
        response = conn.getresponse()
        return response.status, json.loads(response.read() or b"{}")
    finally:
        conn.close()


def test_judge_serve_refuses_other_hosts_and_malformed_ones() -> None:
    server = JudgeServer(create_model_api("scripted:always-good"), name="j")
    with BackgroundServer(server.app) as srv:
        port = urlsplit(srv.url).port
        for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}"):
            status, body = _get(srv.url, "/v1/models", host)
            assert status == 200 and body["data"][0]["id"] == "j", host  # type: ignore[index]
        for host in ("evil.example.com", f"evil.example.com:{port}", f"127.0.0.1:{port}@evil.example.com",
                     f"127.0.0.1:{port}/x", ""):
            for path in ("/v1/models", "/health", "/nope"):
                status, body = _get(srv.url, path, host)
                assert status == 421, (host, path)
                error = body["error"]
                assert isinstance(error, dict) and "--allow-host" in str(error["message"])
                assert "data" not in body and "served" not in body  # nothing served, not even the model's name


def test_allow_host_adds_a_name() -> None:
    server = JudgeServer(create_model_api("scripted:always-good"), name="j",
                         hosts=HostCheck("127.0.0.1", ["judge.lan"]))
    with BackgroundServer(server.app) as srv:
        assert _get(srv.url, "/v1/models", "judge.lan:8000")[0] == 200
        assert _get(srv.url, "/v1/models", "other.lan")[0] == 421
