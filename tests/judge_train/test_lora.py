"""LoRA judge: a tiny Llama built in the test (its word vocabulary made from the judge prompts it will read)
trains a few steps with falling loss; the saved adapter loads with peft and answers a verdict word; the merged
weights load as `hf:DIR` and answer through the provider."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from extra_skip import require_extra

require_extra("lora")

import judge_data  # noqa: E402
import peft  # noqa: E402
import torch  # noqa: E402
import transformers  # noqa: E402

from uxbench.judge_train.lora import LoraOptions, train_lora  # noqa: E402
from uxbench.judge_train.prompt_parse import PROMPT  # noqa: E402
from uxbench.models.api import GenerateConfig  # noqa: E402
from uxbench.models.registry import create_model_api  # noqa: E402
from uxbench.scoring.prompts import JudgeInput  # noqa: E402
from uxbench.scoring.prompts.render import build_messages  # noqa: E402

TEMPLATE = (
    "{% for m in messages %}<|im_start|> {{ m['role'] }} {{ m['content'] }} <|im_end|> {% endfor %}"
    "{% if add_generation_prompt %}<|im_start|> assistant {% endif %}"
)


def _english_rows() -> list[dict[str, object]]:
    return [r for r in judge_data.rows(120, seed=6) if r["lang"] == "en"]


def _prompt(query: str, response: str) -> list[dict[str, str]]:
    return [{"role": m.role, "content": m.content}
            for m in build_messages(JudgeInput(history=[], query=query, response=response, lang="en"), PROMPT)]


def build_tiny_model(folder: Path, texts: list[str]) -> Path:
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    specials = ["<pad>", "<unk>", "<s>", "</s>", "<|im_start|>", "<|im_end|>"]
    words = sorted({w for t in texts for w in re.findall(r"\w+|[^\w\s]+", t)} | {"good", "bad", "system",
                                                                               "user", "assistant"})
    vocab = {t: i for i, t in enumerate(specials + [w for w in words if w not in specials])}
    core = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    core.pre_tokenizer = pre_tokenizers.Whitespace()
    tok = PreTrainedTokenizerFast(tokenizer_object=core, pad_token="<pad>", unk_token="<unk>", bos_token="<s>",
                                  eos_token="</s>", additional_special_tokens=["<|im_start|>", "<|im_end|>"])
    tok.chat_template = TEMPLATE
    torch.manual_seed(0)
    # initializer_range 0.2: LoRA leaves the output head as it is, and a head of the default scale (0.02) cannot
    # reach logits sharp enough for a confident answer in a hidden size of 32
    config = LlamaConfig(vocab_size=len(vocab), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=2048,
                         initializer_range=0.2, pad_token_id=0, bos_token_id=2, eos_token_id=3)
    LlamaForCausalLM(config).save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


@pytest.mark.slow
def test_lora_judge_trains_with_falling_loss_and_its_adapter_answers(tmp_path: Path) -> None:
    rows = _english_rows()
    data = judge_data.write(tmp_path / "en.jsonl", rows)
    texts = [m["content"] for r in rows for m in _prompt(str(r["source_query"]["message"]),  # type: ignore[index]
                                                           str(r["agent_response_full"]))]
    texts += [str(h["message"]) for r in rows for h in r["selected_history"]]  # type: ignore[attr-defined]
    base = build_tiny_model(tmp_path / "tiny", texts)
    result = train_lora(LoraOptions(data=[str(data)], out=tmp_path / "judge", base_model=str(base), max_steps=16,
                                    batch_size=8, learning_rate=2e-2, device="cpu", merge=True, n_boot=50))
    losses = result.losses
    assert len(losses) == 16
    assert sum(losses[-3:]) / 3 < 0.5 * sum(losses[:3]) / 3, losses

    tok = transformers.AutoTokenizer.from_pretrained(result.adapter_dir)
    model = peft.PeftModel.from_pretrained(transformers.AutoModelForCausalLM.from_pretrained(base),
                                           result.adapter_dir)
    model.eval()
    text = tok.apply_chat_template(_prompt("how to make cold brew?", "Steep coffee in cold water."), tokenize=False,
                                   add_generation_prompt=True)
    ids = tok(text, return_tensors="pt", add_special_tokens=False)
    with torch.inference_mode():
        out = model.generate(**ids, max_new_tokens=2, do_sample=False, pad_token_id=0)
    answer = tok.decode(out[0, ids["input_ids"].shape[1]:], skip_special_tokens=True).strip()
    assert answer.split()[0] in ("good", "bad"), answer

    # the adapter directory also loads through the hf provider (transformers applies a peft adapter itself)
    from uxbench.data.schema import Message

    question = [Message(role=m["role"], content=m["content"])  # type: ignore[arg-type]
                for m in _prompt("how to sort a list in Python?", "Use sorted(x).")]
    config = GenerateConfig(max_tokens=2, choices=("good", "bad"), top_logprobs=2)
    via_adapter = asyncio.run(create_model_api(f"hf:{result.adapter_dir}", {"device": "cpu"}).generate(question,
                                                                                                       config))
    assert via_adapter.choice_logprobs is not None and set(via_adapter.choice_logprobs) == {"good", "bad"}

    assert result.merged_dir is not None
    served = create_model_api(f"hf:{result.merged_dir}", {"device": "cpu"})
    reply = asyncio.run(served.generate(question, config))
    assert reply.text.strip().split()[0] in ("good", "bad")
    assert reply.choice_logprobs is not None and set(reply.choice_logprobs) == {"good", "bad"}
    card = result.card
    assert card["test"] is not None and card["test"]["n"] > 0 and card["test"]["n_errors"] == 0
    assert card["training"]["loss_last"] == losses[-1]
    # merging changes no answer: the adapter and the merged weights give the same probabilities
    for word in ("good", "bad"):
        assert reply.choice_logprobs[word] == pytest.approx(via_adapter.choice_logprobs[word], abs=1e-4)
    assert (result.adapter_dir / "adapter_config.json").is_file()
