"""The one redaction module: which keys are credentials, what manifests and identities record of model
arguments, and scrubbing by value."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator

import pytest
from pydantic import BaseModel

from uxbench.mining.pipeline.config import MineConfig
from uxbench.redact import (
    NOT_SET,
    REDACTED,
    forget_secrets,
    has_secret,
    is_secret_key,
    redact_args,
    remember_args,
    remember_secret,
    scrub,
    scrub_exception,
    scrub_model,
    scrubbed_json,
    strip_userinfo,
)
from uxbench.runs import manifest as mf


@pytest.fixture(autouse=True)
def _no_remembered_secrets() -> Iterator[None]:
    forget_secrets()
    yield
    forget_secrets()


@pytest.mark.parametrize("name", [
    "key", "api_key", "api-key", "X-Api-Key", "apikey", "xApiKey", "secret", "client_secret", "password",
    "passwd", "authorization", "Authorization", "auth", "cookie", "Set-Cookie", "token", "access_token",
    "accessToken", "bearer", "credentials", "private_key", "x-amz-security-token",
])
def test_credential_names(name: str) -> None:
    assert is_secret_key(name)


@pytest.mark.parametrize("name", [
    "max_tokens", "max_new_tokens", "max_completion_tokens", "top_k", "top_p", "api_key_env",
    "stop_token_ids", "allowed_token_ids", "thinking_budget", "eos_token", "max_token", "temperature",
    "reasoning_effort", "base_url", "keyword", "OpenAI-Organization", "repetition_penalty",
])
def test_names_that_change_the_answer_are_not_credentials(name: str) -> None:
    assert not is_secret_key(name)


def test_redact_args_nested_headers_urls_and_kept_arguments(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_KEY", "set")
    args = {
        "extra_headers": json.dumps({"api-key": "hdr-secret-1", "X-Trace": "trace-value-1"}),
        "extra_body": json.dumps({"api_key": "body-secret-1", "top_k": 20,
                                  "nested": {"password": "pw-1", "list": [{"token": "t-1"}], "n": 3},
                                  "callback": "https://u:cbpass@cb.example/x"}),
        "base_url": "http://user:urlpass@host:8000/v1",
        "api_key_env": "MY_KEY",
        "max_new_tokens": "16",
        "max_tokens": "64",
    }
    out = redact_args(args)
    text = json.dumps(out)
    for secret in ("hdr-secret-1", "trace-value-1", "body-secret-1", "pw-1", "t-1", "cbpass", "urlpass"):
        assert secret not in text
    assert out["base_url"] == "http://host:8000/v1"
    assert out["api_key_env"] == "MY_KEY" and out["max_new_tokens"] == "16" and out["max_tokens"] == "64"
    body = json.loads(out["extra_body"])
    assert body["top_k"] == 20 and body["nested"]["n"] == 3 and body["api_key"] == REDACTED
    assert body["nested"]["list"] == [{"token": REDACTED}]
    assert json.loads(out["extra_headers"]) == {"api-key": REDACTED, "X-Trace": REDACTED}
    assert redact_args({"api_key": "sk-x"}) == {"api_key": REDACTED}


def test_an_api_key_env_is_written_only_when_it_names_a_variable_that_is_set(monkeypatch: pytest.MonkeyPatch
                                                                            ) -> None:
    """An 18-character value given as api_key_env may be a short key pasted in its place: a manifest or run id
    keeps it only when it names a variable that is set (issue 28)."""
    short_key = "aB3dE5gH7jK9mN1pQr"
    monkeypatch.delenv(short_key, raising=False)
    assert redact_args({"api_key_env": short_key}) == {"api_key_env": NOT_SET}
    assert redact_args({"api_key_env": "not a name"}) == {"api_key_env": NOT_SET}
    monkeypatch.setenv("GATEWAY_KEY", "v")
    assert redact_args({"api_key_env": "GATEWAY_KEY"}) == {"api_key_env": "GATEWAY_KEY"}


def test_max_new_tokens_changes_the_run_id_and_a_key_does_not() -> None:
    # Regression: a name regex redacted every argument containing "token", so -M max_new_tokens=16 and
    # =512 got one run id and the second run silently reused the first run's records.
    def run_id(args: dict[str, str]) -> str:
        identity = mf.run_identity(task="judge", task_config={}, template_hashes={}, model_spec="hf:embedded",
                                   model_args=args, data_fingerprint="f")
        return mf.content_hash(identity)

    assert run_id({"max_new_tokens": "16"}) != run_id({"max_new_tokens": "512"})
    body = '{"top_k": 5, "api_key": "%s"}'
    assert run_id({"extra_body": body % "key-one"}) == run_id({"extra_body": body % "key-two"})
    assert run_id({"extra_body": '{"top_k": 5}'}) != run_id({"extra_body": '{"top_k": 6}'})


def test_mining_checkpoint_identity_keeps_answer_changing_arguments() -> None:
    # Regression: stage 06/07 keys dropped every "secret-looking" argument, max_new_tokens included.
    def identity(args: dict[str, str]) -> object:
        return MineConfig(inputs=("x",), out="o", model="hf:embedded", model_args=args).model_identity()

    assert identity({"max_new_tokens": "16"}) != identity({"max_new_tokens": "512"})
    config = MineConfig(inputs=("x",), out="o", model="openai:m",
                        model_args={"extra_body": '{"api_key": "sk-mine-1", "top_k": 3}'})
    assert "sk-mine-1" not in json.dumps(config.public_dict()) and "sk-mine-1" not in json.dumps(
        config.model_identity())


def test_scrub_by_value_in_every_written_form() -> None:
    remember_secret('sk-live-"quoted"/slash')
    for form in ('sk-live-"quoted"/slash', 'sk-live-\\"quoted\\"/slash', "sk-live-%22quoted%22%2Fslash"):
        assert has_secret(f"echo {form} end")
        assert scrub(f"echo {form} end") == f"echo {REDACTED} end"
    assert scrub("nothing here") == "nothing here"


def test_remember_args_collects_every_secret_in_play() -> None:
    remember_args({
        "extra_headers": '{"X-Custom-Auth": "custom-header-value", "api-key": "abcd"}',
        "extra_body": '{"nested": {"client_secret": "body-secret-value"}}',
        "base_url": "http://alice:url-password@proxy.local/v1",
        "timeout": "30",
    })
    basic = base64.b64encode(b"alice:url-password").decode()
    page = (f"GET / X-Custom-Auth: custom-header-value api-key: abcd secret body-secret-value "
            f"Authorization: Basic {basic} url-password 30 s")
    cleaned = scrub(page)
    for secret in ("custom-header-value", "abcd", "body-secret-value", basic, "url-password"):
        assert secret not in cleaned
    assert cleaned.endswith("30 s")  # an ordinary value is not a secret


def test_short_ordinary_header_values_are_not_scrubbed() -> None:
    remember_args({"extra_headers": '{"X-Flag": "yes"}'})
    assert scrub("yes, this is fine") == "yes, this is fine"


def test_strip_userinfo_every_url() -> None:
    text = "GET http://u:p@ss@host:1/v1 then https://tok@h.example/x, and mail me@example.com"
    assert strip_userinfo(text) == "GET http://host:1/v1 then https://h.example/x, and mail me@example.com"


class _Record(BaseModel):
    sample_id: str
    error: str | None = None
    extra: dict[str, object] = {}


def test_scrub_model_keeps_ids_and_returns_the_same_object_when_clean() -> None:
    remember_secret("abcd")
    clean = _Record(sample_id="00abcd", error="fine")
    assert scrub_model(clean, keep=("sample_id",)) is clean
    dirty = _Record(sample_id="00abcd", error="key abcd", extra={"echo": ["abcd", {"k": "abcd"}]})
    out = scrub_model(dirty, keep=("sample_id",))
    assert out.sample_id == "00abcd"
    assert out.error == f"key {REDACTED}" and out.extra == {"echo": [REDACTED, {"k": REDACTED}]}


def test_scrub_exception_in_place() -> None:
    remember_secret("sk-exception-1")
    err = scrub_exception(RuntimeError("failed with sk-exception-1"))
    assert str(err) == f"failed with {REDACTED}"


def test_scrub_model_only_named_fields_and_scrubbed_json() -> None:
    remember_secret("sk-field-secret-9")
    record = _Record(sample_id="s", error="echo sk-field-secret-9", extra={"x": "sk-field-secret-9"})
    only = scrub_model(record, only=("error",))
    assert only.error == f"echo {REDACTED}" and only.extra == {"x": "sk-field-secret-9"}  # as asked: one field
    same, body = scrubbed_json(_Record(sample_id="s", error="clean"))
    assert same.error == "clean" and body == same.__pydantic_serializer__.to_json(same)
    cleaned, body = scrubbed_json(record, keep=("sample_id",))
    assert b"sk-field-secret-9" not in body and cleaned.extra == {"x": REDACTED}


def test_a_short_header_secret_ending_in_a_field_name_leaves_the_keys_alone() -> None:
    """A remembered header value `hdr-3-value` ends in `value`: a record (a persona's facts) keeps its `value`
    key, while the secret itself and its pieces in the texts are still removed (was: the key became REDACTED and
    the record no longer validated, in whatever ran later in the same process)."""
    class Fact(BaseModel):
        label: str
        value: str

    class Holder(BaseModel):
        facts: list[Fact]

    remember_args({"extra_headers": '{"X-Key": "hdr-3-value"}'})
    held = Holder(facts=[Fact(label="sent hdr-3-value", value="4111 2222 3333 4444"), Fact(label="x", value="y")])
    clean, body = scrubbed_json(held)
    assert clean.facts[0].label == f"sent {REDACTED}" and clean.facts[0].value == "4111 2222 3333 4444"
    assert b"hdr-3-value" not in body and json.loads(body)["facts"][1] == {"label": "x", "value": "y"}


def test_the_shell_working_directory_is_not_a_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    """`PWD` is named like a password (`db_pwd`), but it is the shell's directory: a run started in a deep
    directory must not redact that path from every output (nor scan every output for it)."""
    from uxbench.redact import remember_environment_keys

    monkeypatch.setenv("PWD", "/home/someone/projects/uxbench-runs")
    monkeypatch.setenv("OLDPWD", "/home/someone/projects/older-place")
    monkeypatch.setenv("DB_PWD", "s3cr3t-Passw0rd-Value")
    remember_environment_keys()
    assert scrub("cd /home/someone/projects/uxbench-runs") == "cd /home/someone/projects/uxbench-runs"
    assert scrub("back to /home/someone/projects/older-place") == "back to /home/someone/projects/older-place"
    assert "s3cr3t-Passw0rd-Value" not in scrub("the password is s3cr3t-Passw0rd-Value")
