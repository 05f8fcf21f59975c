"""The GRM protocol on an in-process model: p(好) equals the softmax of the model's own next-token logits over
the two verdict tokens, computed here directly with torch on the same prompt."""

from __future__ import annotations

from pathlib import Path

import pytest

from extra_skip import require_extra

require_extra("local")

import torch  # noqa: E402
import transformers  # noqa: E402
from test_provider_hf import build_tiny_model  # noqa: E402

from uxbench.data.schema import Message  # noqa: E402
from uxbench.models.model import create_model  # noqa: E402
from uxbench.scoring.grm import GrmScorer  # noqa: E402
from uxbench.scoring.prompts import JudgeInput, PromptOptions, build_messages  # noqa: E402


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_model(tmp_path_factory.mktemp("tiny-grm"), with_template=True)


async def test_grm_score_is_the_softmax_over_the_two_verdict_tokens(tiny: Path) -> None:
    item = JudgeInput(history=[Message(role="user", content="hello")], query="the user asked a question",
                      response="good answer", lang="zh")
    model = create_model(f"hf:{tiny}", {"device": "cpu"})
    try:
        judgement = await GrmScorer(lang="zh").score(item, model)
    finally:
        await model.aclose()

    tok = transformers.AutoTokenizer.from_pretrained(tiny)
    net = transformers.AutoModelForCausalLM.from_pretrained(tiny, dtype=torch.float32).eval()
    messages = build_messages(item, PromptOptions(formulation="binary", strategy="zero_shot", lang="zh",
                                                  max_chars=16000), lang="zh")
    ids = tok.apply_chat_template([{"role": m.role, "content": m.content} for m in messages],
                                  add_generation_prompt=True, return_tensors="pt", return_dict=True)["input_ids"]
    with torch.no_grad():
        logits = net(ids).logits[0, -1]
    pair = torch.stack([logits[tok.convert_tokens_to_ids("好")], logits[tok.convert_tokens_to_ids("差")]])
    expected = float(torch.softmax(pair, dim=0)[0])
    assert judgement.score == pytest.approx(expected, abs=1e-5)
    assert judgement.extra["score_status"] == "full"
    assert judgement.label == ("good" if expected >= 0.5 else "bad")
