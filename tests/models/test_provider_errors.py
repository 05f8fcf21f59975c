"""HTTP status and Retry-After handling shared by the HTTP providers."""

from __future__ import annotations

import email.utils

import pytest

from uxbench.errors import FatalModelError, ModelError, RateLimitError, TransientModelError
from uxbench.models.providers._errors import error_for_status, parse_retry_after
from uxbench.redact import REDACTED, forget_secrets, remember_secret


def test_retry_after_forms() -> None:
    assert parse_retry_after({"retry-after": "7"}) == 7.0
    assert parse_retry_after({"Retry-After": "1.5"}) == 1.5
    assert parse_retry_after({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    now = 1_700_000_000.0
    date = email.utils.formatdate(now + 30, usegmt=True)
    assert parse_retry_after({"retry-after": date}, now=now) == pytest.approx(30.0)
    past = email.utils.formatdate(now - 30, usegmt=True)
    assert parse_retry_after({"retry-after": past}, now=now) == 0.0
    assert parse_retry_after({"retry-after": "soon"}) is None
    assert parse_retry_after({}) is None and parse_retry_after(None) is None


@pytest.mark.parametrize(
    ("status", "kind"),
    [
        (429, RateLimitError),
        (503, RateLimitError),
        (529, RateLimitError),
        (500, TransientModelError),
        (502, TransientModelError),
        (408, TransientModelError),
        (400, FatalModelError),
        (401, FatalModelError),
        (403, FatalModelError),
        (404, FatalModelError),
        (422, FatalModelError),
    ],
)
def test_status_mapping(status: int, kind: type[ModelError]) -> None:
    err = error_for_status(status, "detail", where="srv", key_hint="the key in $K", retry_after=2.0)
    assert type(err) is kind
    assert err.status == status
    assert err.retryable == (kind is not FatalModelError)
    if kind is RateLimitError:
        assert err.retry_after == 2.0
    if status in (401, 403):
        assert "$K" in str(err)


def test_remembered_secrets_are_scrubbed_from_details_and_long_details_cut() -> None:
    remember_secret("sk-abcdef-errors")
    try:
        err = error_for_status(401, "echo: Authorization: Bearer sk-abcdef-errors", where="http://u:pw@srv",
                               key_hint="k")
    finally:
        forget_secrets()
    assert "sk-abcdef-errors" not in str(err) and REDACTED in str(err) and "pw@" not in str(err)
    err = error_for_status(400, "x" * 5000, where="srv", key_hint="k")
    assert len(str(err)) < 600
