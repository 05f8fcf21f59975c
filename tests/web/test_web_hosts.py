"""The Host header check against DNS rebinding: `uxbench view` and `uxbench human serve` answer only to the
address they listen on, localhost, 127.0.0.1, ::1 and the names given with --allow-host, for every method; a
refused request reads nothing (no page, no CSRF token) and writes nothing. `human serve` serves the annotator
pages and nothing else."""

from __future__ import annotations

import re
from pathlib import Path

from extra_skip import require_extra

require_extra("web")

from fastapi.testclient import TestClient  # noqa: E402
from web_support import LOOPBACK  # noqa: E402

from uxbench.human.study import Study  # noqa: E402
from uxbench.runs.curation import CURATION_DB  # noqa: E402
from uxbench.web.app import create_app  # noqa: E402
from uxbench.web.catalog import Catalog, build_catalog  # noqa: E402
from uxbench.web.security import HostCheck, host_name  # noqa: E402

FOREIGN = "rebind.attacker.example"


def test_host_names_are_read_without_port_or_brackets() -> None:
    assert host_name("LocalHost:8321") == "localhost"
    assert host_name("[::1]:8321") == "::1" and host_name("[::1]") == "::1"
    assert host_name("127.0.0.1") == "127.0.0.1" and host_name("view.example.") == "view.example"


def test_the_check_accepts_the_bound_address_loopback_and_given_names_only() -> None:
    loopback = HostCheck("127.0.0.1")
    for ok in ("127.0.0.1:8321", "localhost:8321", "[::1]:8321", "LOCALHOST"):
        assert loopback.allows(ok), ok
    for bad in (f"{FOREIGN}:8321", "127.0.0.1.nip.io", "192.168.1.5:8321", "", None):
        assert not loopback.allows(bad), bad
    lan = HostCheck("192.168.1.5", ["view.lab.example", "*.corp.example"])
    assert lan.allows("192.168.1.5:8321") and lan.allows("view.lab.example") and lan.allows("a.b.corp.example")
    assert not lan.allows("corp.example") and not lan.allows("10.0.0.1") and not lan.allows("evilcorp.example")
    anywhere = HostCheck("0.0.0.0")  # every interface: any IP address (a rebinding needs a name), no other name
    assert anywhere.allows("10.1.2.3:8321") and anywhere.allows("[fe80::1]:8321") and anywhere.allows("localhost")
    assert not anywhere.allows(f"{FOREIGN}:8321") and not anywhere.allows("my-laptop")
    assert "--allow-host" not in anywhere.describe() and "any IP address" in anywhere.describe()


def _csrf(html: str) -> str:
    found = re.search(r'name="csrf" value="([0-9a-f]+)"', html)
    assert found
    return found.group(1)


def test_a_foreign_host_is_refused_for_every_method(served: dict[str, Path], tmp_path: Path) -> None:
    import shutil

    run = shutil.copytree(served["judge2"], tmp_path / "runs" / "t1-copy")
    client = TestClient(create_app(build_catalog([str(run)]), index_dir=tmp_path / "idx"), base_url=LOOPBACK)
    page = client.get("/runs/t1-beta/samples/3")
    assert page.status_code == 200
    token = _csrf(page.text)
    foreign = {"host": f"{FOREIGN}:8321"}
    for path in ("/", "/runs/t1-beta", "/runs/t1-beta/samples/3", "/static/app.js", "/compare", "/nope"):
        response = client.get(path, headers=foreign)
        assert response.status_code == 421, path
        assert "csrf" not in response.text and "t1-beta" not in response.text, path
        assert response.headers["content-security-policy"].startswith("default-src 'self'")
    form = {"csrf": token, "target": "run", "target_id": "t1-beta", "case_id": "c02", "action": "exclude",
            "reason": "rebinding", "who": "attacker", "back": "/"}
    assert client.post("/curate", data=form, headers=foreign).status_code == 421
    assert client.head("/", headers=foreign).status_code == 421
    assert client.options("/curate", headers=foreign).status_code == 421
    assert not (run / CURATION_DB).exists()  # nothing written
    assert "--allow-host" in client.get("/", headers=foreign).text
    for name in ("localhost:8321", "[::1]:8321", "127.0.0.1"):
        assert client.get("/", headers={"host": name}).status_code == 200, name
    named = TestClient(create_app(build_catalog([str(run)]), index_dir=tmp_path / "idx",
                                  hosts=HostCheck("127.0.0.1", ["view.lab.example"])), base_url=LOOPBACK)
    assert named.get("/", headers={"host": "view.lab.example:8321"}).status_code == 200
    assert named.get("/", headers=foreign).status_code == 421


def test_human_serve_serves_annotator_pages_only(served: dict[str, Path], tmp_path: Path) -> None:
    study = Study.create(tmp_path / "study", str(served["judge"]), n=4, annotators=1)
    (annotator,) = study.annotators()
    client = TestClient(create_app(Catalog(), index_dir=tmp_path / "idx", study=study, annotator_only=True),
                        base_url=LOOPBACK)
    page = client.get(f"/h/{annotator.token}")
    assert page.status_code == 200 and "Would the user be satisfied" in page.text
    assert page.headers["cache-control"] == "no-store"
    for path in ("/", "/compare", "/runs/t1-alpha", "/curation/run/t1-alpha", "/plots/scaling/judge.svg"):
        response = client.get(path)
        assert response.status_code == 404, path
        assert 'href="/compare"' not in response.text  # no navigation to the researcher's pages
    assert client.post("/curate", data={"target": "run"}).status_code in (404, 405)
    assert client.get(f"/h/{annotator.token}", headers={"host": FOREIGN}).status_code == 421


def test_a_malformed_host_is_refused_not_cut_down(served: dict[str, Path], tmp_path: Path) -> None:
    """`Host: 127.0.0.1:18721@evil.example.com` once passed as 127.0.0.1 (issue 28): a Host header that is not a
    name or address with a port is refused whole."""
    client = TestClient(create_app(build_catalog([str(served["judge2"])]), index_dir=tmp_path / "idx"),
                        base_url=LOOPBACK)
    for host in ("127.0.0.1:18721@evil.example.com", "127.0.0.1:8321/x", "127.0.0.1:x", "localhost evil"):
        response = client.get("/", headers={"host": host})
        assert response.status_code == 421, host
        assert "t1-" not in response.text
    assert client.get("/", headers={"host": "127.0.0.1:18721"}).status_code == 200
