"""Provider arguments: each provider declares them as a pydantic model; unknown names and bad values are
clear errors; `uxbench providers` lists them; cache identities hold what changes the answer, no secret."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from uxbench.cli.main import app
from uxbench.errors import ConfigError
from uxbench.models.api import ProviderArgs
from uxbench.models.providers.openai import OpenAIArgs
from uxbench.models.registry import create_model_api, provider_args_model, provider_names, validate_provider_args
from uxbench.redact import is_secret_key

BUILT_IN = ("openai", "anthropic", "google", "hf", "replay", "scripted")


@pytest.mark.parametrize("provider", BUILT_IN)
def test_every_provider_declares_its_arguments_and_none_is_a_credential(provider: str) -> None:
    model = provider_args_model(provider)
    assert issubclass(model, ProviderArgs) and model.model_config.get("extra") == "forbid"
    assert model.model_fields, provider
    # A declared argument is never redacted from a run identity: none may look like a credential.
    assert not [name for name in model.model_fields if is_secret_key(name)]
    with pytest.raises(ConfigError, match=rf"Unknown --model-arg 'no_such_arg' for the {provider} provider"):
        validate_provider_args(provider, {"no_such_arg": "1"})


def test_typo_gets_did_you_mean_and_the_key_goes_nowhere() -> None:
    # Regression: `-M base-url=...` was ignored and the requests went, with the key, to the public default.
    with pytest.raises(ConfigError, match=r"Did you mean 'base_url'\?"):
        create_model_api("openai:m", {"base-url": "http://localhost:1/v1"})
    with pytest.raises(ConfigError, match=r"Did you mean 'max_new_tokens'\?"):
        validate_provider_args("hf:embedded", {"max_new_token": "16"})
    with pytest.raises(ConfigError, match=r"--judge-arg.*Did you mean 'timeout'"):
        validate_provider_args("openai", {"timeot": "3"}, option="--judge-arg")


def test_max_concurrency_points_to_the_one_concurrency_option() -> None:
    for provider in ("openai", "hf", "scripted"):
        with pytest.raises(ConfigError, match="--concurrency"):
            validate_provider_args(provider, {"max_concurrency": "4"})


@pytest.mark.parametrize(("spec", "args", "names"), [
    ("openai:m", {"timeout": "soon"}, ["timeout='soon'", "number"]),
    ("openai:m", {"timeout": "-1"}, ["timeout='-1'", "greater than 0"]),
    ("openai:m", {"base_url": "ftp://user:hunter22@host"}, ["base_url='ftp://host'", "http://"]),
    ("openai:m", {"extra_body": "{not json"}, ["extra_body=<JSON>", "JSON object"]),
    ("openai:m", {"extra_headers": "[1, 2]"}, ["extra_headers=<JSON>", "JSON object"]),
    ("openai:m", {"max_tokens_field": "tokens"}, ["max_tokens_field='tokens'", "max_completion_tokens"]),
    ("hf:embedded", {"max_new_tokens": "many"}, ["max_new_tokens='many'", "integer"]),
    ("hf:embedded", {"dtype": "int3"}, ["dtype='int3'", "bfloat16"]),
    ("hf:embedded", {"allow_download": "perhaps"}, ["allow_download='perhaps'", "boolean"]),
    ("anthropic:m", {"thinking_budget": "lots"}, ["thinking_budget='lots'"]),
    ("google:m", {"thinking_budget": "-2"}, ["thinking_budget='-2'"]),
    ("scripted:echo", {"fail_first_n": "-1"}, ["fail_first_n='-1'"]),
])
def test_bad_values_name_the_argument(spec: str, args: dict[str, str], names: list[str]) -> None:
    with pytest.raises(ConfigError) as info:
        validate_provider_args(spec, args)
    message = str(info.value)
    assert "--model-arg" in message and all(n in message for n in names), message
    assert "hunter22" not in message


def test_values_are_converted_and_blank_means_default() -> None:
    args = validate_provider_args("openai", {"timeout": "30", "extra_body": '{"top_k": 5}', "reasoning_effort": ""})
    assert isinstance(args, OpenAIArgs)
    assert args.timeout == 30.0 and args.extra_body == {"top_k": 5} and args.reasoning_effort is None
    hf = validate_provider_args("hf", {"allow_download": "yes", "max_new_tokens": "16"})
    assert hf.model_dump()["allow_download"] is True and hf.model_dump()["max_new_tokens"] == 16


@pytest.mark.extra("anthropic")
def test_cache_identities_hold_answer_changing_arguments_and_no_secret(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("UXBENCH_TEST_KEY", "sk-identity-secret-1")
    openai = create_model_api("openai:m", {
        "base_url": "http://127.0.0.1:9/v1", "api_key_env": "UXBENCH_TEST_KEY", "reasoning_effort": "low",
        "extra_body": '{"top_k": 7, "api_key": "sk-body-secret-2"}', "extra_headers": '{"X-Key": "hdr-3-value"}',
    })
    ident = json.dumps(openai.cache_identity())
    assert '"top_k": 7' in ident and "low" in ident
    assert not any(s in ident for s in ("sk-identity-secret-1", "sk-body-secret-2", "hdr-3-value"))
    anthropic = create_model_api("anthropic:m", {"max_tokens": "77", "thinking_budget": "2048"}).cache_identity()
    assert anthropic["max_tokens"] == 77 and anthropic["thinking"]["budget_tokens"] == 2048
    google = create_model_api("google:m", {"thinking_budget": "-1", "reasoning_effort": "high"}).cache_identity()
    assert google["thinking_budget"] == -1 and google["reasoning_effort"] == "high"
    model_dir = tmp_path / "tiny"
    model_dir.mkdir()
    (model_dir / "config.json").write_text("{}")
    hf16 = create_model_api(f"hf:{model_dir}", {"max_new_tokens": "16", "device": "cpu"}).cache_identity()
    hf512 = create_model_api(f"hf:{model_dir}", {"max_new_tokens": "512", "device": "cpu"}).cache_identity()
    assert hf16 != hf512


def test_providers_command_lists_every_argument_from_the_models() -> None:
    result = CliRunner().invoke(app, ["providers"])
    assert result.exit_code == 0, result.output
    for provider in provider_names():
        assert f"{provider}:MODEL" in result.output
        for name in provider_args_model(provider).model_fields:
            assert f"-M {name}=" in result.output
    assert "max_concurrency" not in result.output


def test_the_scripted_rules_file_is_described_as_it_is_read(tmp_path: Path) -> None:
    """`uxbench providers` and the README give the same form of the rules file, the one the provider reads."""
    import asyncio

    from uxbench.data.schema import Message
    from uxbench.models.api import GenerateConfig

    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps([{"pattern": "周末|weekend", "response": "好"}]), encoding="utf-8")
    api = create_model_api(f"scripted:file:{rules}")
    out = asyncio.run(api.generate([Message(role="user", content="plans for the weekend?")], GenerateConfig()))
    assert out.text == "好"
    listed = CliRunner().invoke(app, ["providers"]).output
    assert "scripted:file:/path/rules.json" in listed and 'JSON list of {"pattern": REGEX, "response": TEXT}' \
        in " ".join(listed.split()), listed
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    assert '`file:RULES.json` (`[{"pattern": REGEX, "response": TEXT}]`' in readme
    assert "script.jsonl" not in listed + readme


@pytest.mark.extra("anthropic", "google")
def test_sdk_providers_keep_url_passwords_out_of_identity(monkeypatch: pytest.MonkeyPatch) -> None:
    for spec in ("anthropic:m", "google:m"):
        api = create_model_api(spec, {"base_url": "https://bob:sdk-url-secret-1@gw.example/v1"})
        assert "sdk-url-secret-1" not in json.dumps(api.cache_identity())
        assert api.cache_identity()["base_url"] == "https://gw.example/v1"
