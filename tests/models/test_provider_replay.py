"""The replay provider: answers looked up in a JSONL file."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from uxbench.data.schema import Message
from uxbench.errors import ConfigError, DataError, FatalModelError
from uxbench.models.api import GenerateConfig
from uxbench.models.providers.replay import messages_hash
from uxbench.models.registry import create_model_api

FIRST = [Message(role="user", content="What is 2+2?")]
SECOND = [Message(role="system", content="judge"), Message(role="user", content="Rate: the reply was rude")]


def write(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_bytes(b"\n".join(orjson.dumps(r) for r in rows) + b"\n")
    return path


def test_messages_hash_is_stable_and_content_based() -> None:
    as_dicts = [{"role": "user", "content": "What is 2+2?"}]
    assert messages_hash(FIRST) == messages_hash(as_dicts)
    assert messages_hash(FIRST) != messages_hash([Message(role="assistant", content="What is 2+2?")])
    with_time = [Message(role="user", content="What is 2+2?", turn_index=3)]
    assert messages_hash(with_time) == messages_hash(FIRST)
    assert len(messages_hash(FIRST)) == 16


async def test_lookup_order_hash_then_match_then_default(tmp_path: Path) -> None:
    path = write(
        tmp_path / "answers.jsonl",
        [
            {"match": "rude", "text": "差"},
            {"messages": [{"role": "user", "content": "What is 2+2?"}], "text": "4", "reasoning": "add"},
            {"prompt_hash": messages_hash(SECOND), "text": "by hash"},
        ],
    )
    model = create_model_api(f"replay:{path}", {})
    out = await model.generate(FIRST, GenerateConfig())
    assert (out.text, out.reasoning, out.finish_reason) == ("4", "add", "stop")
    assert (await model.generate(SECOND, GenerateConfig())).text == "by hash"  # hash beats match
    third = [Message(role="user", content="so rude!")]
    assert (await model.generate(third, GenerateConfig())).text == "差"
    missing = [Message(role="user", content="unknown")]
    with pytest.raises(FatalModelError) as info:
        await model.generate(missing, GenerateConfig())
    assert messages_hash(missing) in str(info.value) and str(path) in str(info.value)
    fallback = create_model_api(f"replay:{path}", {"default": "好"})
    assert (await fallback.generate(missing, GenerateConfig())).text == "好"


async def test_logprobs_and_usage_replayed(tmp_path: Path) -> None:
    logprobs = [
        {
            "token": "好",
            "logprob": -0.2,
            "top": [{"token": "好", "logprob": -0.2}, {"token": "差", "logprob": -1.7}],
        },
        {"token": "。", "logprob": -0.01, "top": []},
    ]
    usage = {"input_tokens": 9, "output_tokens": 2}
    path = write(tmp_path / "a.jsonl", [{"match": "", "text": "好。", "logprobs": logprobs, "usage": usage}])
    model = create_model_api(f"replay:{path}", {})
    plain = await model.generate(FIRST, GenerateConfig())
    assert plain.logprobs is None and plain.usage.input_tokens == 9
    out = await model.generate(FIRST, GenerateConfig(top_logprobs=1, logprob_tokens=1))
    assert out.logprobs is not None and len(out.logprobs) == 1
    assert out.logprobs[0].logprob == -0.2 and [t.token for t in out.logprobs[0].top] == ["好"]


def test_identity_changes_with_file_content(tmp_path: Path) -> None:
    path = write(tmp_path / "a.jsonl", [{"match": "x", "text": "1"}])
    before = create_model_api(f"replay:{path}", {}).cache_identity()
    write(path, [{"match": "x", "text": "2"}])
    assert create_model_api(f"replay:{path}", {}).cache_identity() != before


@pytest.mark.parametrize(
    ("line", "field"),
    [(b"{oops", None), (b'{"match": "x"}', "text"), (b'{"text": "no key"}', None), (b"[1]", None)],
)
def test_bad_rows_name_the_line(tmp_path: Path, line: bytes, field: str | None) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_bytes(b'{"match": "ok", "text": "fine"}\n\n' + line + b"\n")
    with pytest.raises(DataError) as info:
        create_model_api(f"replay:{path}", {})
    assert info.value.line == 3 and info.value.source == str(path) and info.value.field == field


def test_missing_file() -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        create_model_api("replay:/no/such/file.jsonl", {})
