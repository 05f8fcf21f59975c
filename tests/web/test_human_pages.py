"""The annotator pages: the token is checked on every request, nothing of the label, case id or model reaches
the page, judgments are POSTed with a CSRF token bound to the annotator, saved, resumed on reload and kept
apart per annotator."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from extra_skip import require_extra

require_extra("web")

from fastapi.testclient import TestClient  # noqa: E402
from web_support import LOOPBACK  # noqa: E402

from uxbench.human.study import Study  # noqa: E402
from uxbench.web.app import create_app  # noqa: E402
from uxbench.web.catalog import Catalog  # noqa: E402


@pytest.fixture
def study(served: dict[str, Path], tmp_path: Path) -> Study:
    return Study.create(tmp_path / "study", str(served["judge"]), n=6, annotators=2)


def _client(study: Study, tmp_path: Path) -> TestClient:
    return TestClient(create_app(Catalog(), index_dir=tmp_path / "idx", study=study), base_url=LOOPBACK)


def _item(html: str) -> tuple[str, str]:
    csrf = re.search(r'name="csrf" value="([0-9a-f]+)"', html)
    item = re.search(r'name="item_id" value="([^"]+)"', html)
    assert csrf and item
    return csrf.group(1), item.group(1)


def test_tokens_are_checked_on_every_request(study: Study, tmp_path: Path) -> None:
    client = _client(study, tmp_path)
    a, _ = study.annotators()
    for bad in ("x" * 32, a.token[:-1] + ("A" if a.token[-1] != "A" else "B"), "short"):
        assert client.get(f"/h/{bad}").status_code == 404
        assert client.post(f"/h/{bad}", data={"item_id": "i0001", "choice": "good"}).status_code == 404
    assert client.get(f"/h/{a.token}").status_code == 200


def test_annotator_pages_show_no_label_case_id_or_model(study: Study, tmp_path: Path) -> None:
    client = _client(study, tmp_path)
    a, _ = study.annotators()
    for item in study.items():
        html = client.get(f"/h/{a.token}", params={"item": item["item_id"]}).text
        # the random tokens (annotator, CSRF) could contain a case id like "c07" by chance: look past them
        html = re.sub(r'name="csrf" value="[0-9a-f]+"', "", html).replace(a.token, "TOKEN")
        assert "gpt-4o" not in html and "openai" not in html and item["hidden"]["case_id"] not in html
        assert "t1-alpha" not in html and "gold" not in html and "/runs/" not in html
        assert 'value="good"' in html and 'value="bad"' in html  # the two buttons, never marked
        assert "chosen" not in html


def test_judgments_persist_resume_and_stay_apart_per_annotator(study: Study, tmp_path: Path) -> None:
    client = _client(study, tmp_path)
    a, b = study.annotators()
    page = client.get(f"/h/{a.token}").text
    csrf, item = _item(page)
    assert item == study.order(a)[0] and "0 of 6 judged" in page
    assert client.post(f"/h/{a.token}", data={"item_id": item, "choice": "good"}).status_code == 403  # no CSRF
    b_csrf, _ = _item(client.get(f"/h/{b.token}").text)
    assert client.post(f"/h/{a.token}", data={"item_id": item, "choice": "good", "csrf": b_csrf}).status_code == 403
    done = client.post(f"/h/{a.token}", data={"item_id": item, "choice": "bad", "csrf": csrf}, follow_redirects=False)
    assert done.status_code == 303 and done.headers["location"] == f"/h/{a.token}"
    again = client.get(f"/h/{a.token}").text  # a reload resumes at the next item
    assert "1 of 6 judged" in again and _item(again)[1] == study.order(a)[1]
    assert "0 of 6 judged" in client.get(f"/h/{b.token}").text  # b's progress is b's own
    assert study.judgments() == {(a.token, item): "bad"}
    fresh = _client(Study.open(study.dir), tmp_path)  # a new server process over the same study
    revisit = fresh.get(f"/h/{a.token}", params={"item": item}).text
    assert 'id="current" data-choice="bad"' in revisit
    assert fresh.get(f"/h/{a.token}", params={"item": "i9999"}).status_code == 404
    assert fresh.post(f"/h/{a.token}", data={"item_id": item, "choice": "maybe", "csrf": _item(revisit)[0]}
                      ).status_code == 400
    assert client.get(f"/h/{a.token}").headers["cache-control"] == "no-store"


def test_every_item_judged_ends_on_a_thank_you_page(study: Study, tmp_path: Path) -> None:
    client = _client(study, tmp_path)
    a, _ = study.annotators()
    for _ in range(6):
        csrf, item = _item(client.get(f"/h/{a.token}").text)
        client.post(f"/h/{a.token}", data={"item_id": item, "choice": "good", "csrf": csrf})
    assert "6 of 6 judged" in client.get(f"/h/{a.token}").text and "Thank you" in client.get(f"/h/{a.token}").text
