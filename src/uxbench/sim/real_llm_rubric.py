"""Read the real rated conversations of microsoft/LLM-Rubric (MIT) as a real log for `uxbench sim validate`.

The repository (https://github.com/microsoft/LLM-Rubric) holds 223 real conversations of people with three
versions of a retrieval-augmented assistant, each rated by one person on nine questions, Q0 the overall
satisfaction on 1-4. Its layout, which this reader expects:

- `data/real_data/real_data.json`: a JSON list of conversations, each with `_id`, `dialogue_version` (the
  system: 0, 1, 2), `messages` (`role` user / assistant, `content`; the assistant greets first), and retrieval
  fields this reader ignores (`ref`, `ref_url`, `topic`, `openai_model`);
- `data/real_data/human_judges_real_convs_FIXED_ANON.tsv`: one row per judgement: `dialogue_system`,
  `text_id` (a conversation's `_id`), `Q1`..`Q8`, `Q0`, `annotator_id`.

`--real llm-rubric:PATH` (or a PATH that holds this layout: the checkout, its `data/real_data`, or the JSON
file) is converted into the canonical log format: one row per message, `conversation_id` `llmrubric-<_id>`,
metadata `model` (`llm-rubric-system-<version>`, so each system is an assistant of its own) and `rating` (Q0,
averaged over judges) with `rating_scale` [1, 4]. The synthetic conversations of `data/synth_data` are not real
users and are never read. The data are not bundled: clone the repository (docs/SIM_VALIDATION.md).
"""

from __future__ import annotations

import csv
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from uxbench.errors import ConfigError

PREFIX = "llm-rubric:"
CONVERSATIONS = "real_data.json"
JUDGEMENTS = "human_judges_real_convs_FIXED_ANON.tsv"
RATING_SCALE = (1, 4)
SUBDIR = Path("data") / "real_data"


def locate(path: Path) -> tuple[Path, Path] | None:
    """(conversations file, judgements file) of an LLM-Rubric checkout, its data/real_data or the JSON file;
    None when `path` holds no such layout."""
    for base in (path / SUBDIR, path, path.parent):
        conversations, judgements = base / CONVERSATIONS, base / JUDGEMENTS
        if conversations.is_file() and (path.is_dir() or path == conversations):
            return conversations, judgements
    return None


def parse_real(spec: str) -> tuple[Path, bool]:
    """(path, is LLM-Rubric) of a `--real` value: `llm-rubric:PATH` must hold the layout (else ConfigError with
    what is missing); a plain PATH is LLM-Rubric when it holds the layout."""
    if spec.startswith(PREFIX):
        path = Path(spec[len(PREFIX):]).expanduser()
        if locate(path) is None:
            raise ConfigError(f"--real {spec}: no {SUBDIR / CONVERSATIONS} under {path} (pass a checkout of "
                              "https://github.com/microsoft/LLM-Rubric, its data/real_data directory or the "
                              f"{CONVERSATIONS} file)")
        return path, True
    path = Path(spec).expanduser()
    return path, locate(path) is not None


def _ratings(judgements: Path) -> dict[str, float]:
    """text_id -> Q0 averaged over its judges; a judgement without a usable Q0 in 1-4 is an error."""
    if not judgements.is_file():
        raise ConfigError(f"{judgements}: missing; LLM-Rubric's ratings (Q0, overall satisfaction) are read from "
                          "it, next to the conversations file")
    sums: dict[str, list[float]] = {}
    with judgements.open(encoding="utf-8", newline="") as f:
        reader = csv.DictReader(f, delimiter="\t")
        missing = {"text_id", "Q0"} - set(reader.fieldnames or ())
        if missing:
            raise ConfigError(f"{judgements}: no column {', '.join(sorted(missing))} (is it LLM-Rubric's judgements "
                              "file?)")
        for line, row in enumerate(reader, start=2):
            try:
                q0 = float(row["Q0"])
            except (TypeError, ValueError):
                raise ConfigError(f"{judgements}, line {line}: Q0 {row['Q0']!r} is not a number") from None
            if not RATING_SCALE[0] <= q0 <= RATING_SCALE[1]:
                raise ConfigError(f"{judgements}, line {line}: Q0 {q0:g} is outside {RATING_SCALE[0]}-"
                                  f"{RATING_SCALE[1]}")
            sums.setdefault(str(row["text_id"]), []).append(q0)
    return {k: sum(v) / len(v) for k, v in sums.items()}


def rows(path: Path) -> Iterator[dict[str, Any]]:
    """The canonical log rows of the real rated conversations under `path`."""
    found = locate(path)
    if found is None:
        raise ConfigError(f"{path}: no LLM-Rubric data ({SUBDIR / CONVERSATIONS})")
    conversations, judgements = found
    ratings = _ratings(judgements)
    try:
        data = orjson.loads(conversations.read_bytes())
    except orjson.JSONDecodeError as err:
        raise ConfigError(f"{conversations}: not valid JSON ({err})") from None
    if not isinstance(data, list):
        raise ConfigError(f"{conversations}: expected a JSON list of conversations")
    for index, conv in enumerate(data):
        where = f"{conversations}, conversation {index}"
        if not isinstance(conv, dict) or not isinstance(conv.get("messages"), list) or not conv.get("_id"):
            raise ConfigError(f"{where}: needs `_id` and a `messages` list")
        cid = str(conv["_id"])
        meta: dict[str, Any] = {"model": f"llm-rubric-system-{conv.get('dialogue_version', '?')}",
                                "source": "microsoft/LLM-Rubric real_data"}
        if cid in ratings:
            meta.update(rating=ratings[cid], rating_scale=list(RATING_SCALE))
        for turn, message in enumerate(conv["messages"]):
            role = message.get("role") if isinstance(message, dict) else None
            if role not in ("user", "assistant") or not isinstance(message.get("content"), str):
                raise ConfigError(f"{where}, message {turn}: needs `role` user or assistant and a text `content`")
            yield {"conversation_id": f"llmrubric-{cid}", "turn_index": turn, "role": role,
                   "content": message["content"], "metadata": meta}


def write_log(path: Path, out: Path) -> Path:
    """Write the canonical log of `path` to `out` (JSON Lines) and return it; nothing read is an error."""
    out.parent.mkdir(parents=True, exist_ok=True)
    n = 0
    with out.open("wb") as f:
        for row in rows(path):
            f.write(orjson.dumps(row) + b"\n")
            n += 1
    if n == 0:
        raise ConfigError(f"{path}: LLM-Rubric's conversations file holds no message")
    return out
