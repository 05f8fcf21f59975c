"""Both sides of a validation, read the same way: real logs and simulated runs go through the same deterministic
mining stages (`uxbench mine run --no-llm`), and each assistant turn gets its reaction label from the same rules
(`sim.reactions`). What each side contributes: per conversation the reaction labels and the thumbs, its length
in user turns, its user texts (for the discriminator), its cluster (the conversation itself on the real side,
the persona on a simulated one: a persona's trials are not independent), its language and opening request (for
the like-with-like checks), a rating where the log has one, and which assistant replied (for the system-level
check). Conversations are kept in digest order, so identical inputs give identical bootstrap intervals whatever
order the mining workers wrote them in."""

from __future__ import annotations

import hashlib
import tempfile
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

from uxbench.mining.pipeline.mined import is_mined_dir, mined_run
from uxbench.scoring.prompts.render import detect_lang
from uxbench.sim.mined import MinedConversation, iter_mined
from uxbench.sim.reactions import reaction_of, thumbs_of

ASSISTANT_KEYS = ("model", "assistant", "model_name")
"""Turn metadata naming the assistant that replied (the real logs' side of the system-level check)."""
MINED_DIR = "mined"
"""Where a simulated run's sessions are mined, inside the run directory (kept: a rerun reuses it)."""


@dataclass
class Side:
    """One side of the comparison."""

    name: str
    sessions: list[list[str]] = field(default_factory=list)
    """Per conversation, the reaction label of each assistant turn."""
    thumbs: list[list[str]] = field(default_factory=list)
    """Per conversation, like / dislike / none per assistant turn."""
    lengths: list[int] = field(default_factory=list)
    """User turns per conversation."""
    user_texts: list[tuple[str, str]] = field(default_factory=list)
    """(conversation digest, text) of every user turn."""
    by_assistant: dict[str, list[list[str]]] = field(default_factory=dict)
    """assistant -> its conversations' reaction labels."""
    digests: list[str] = field(default_factory=list)
    clusters: list[str] = field(default_factory=list)
    """Per conversation, its bootstrap cluster: the conversation (real), the persona (simulated)."""
    langs: list[str] = field(default_factory=list)
    """Per conversation, the language of its user turns (zh / en)."""
    openers: list[str] = field(default_factory=list)
    """Per conversation, its first user message."""
    ratings: list[float | None] = field(default_factory=list)
    """Per conversation, the rating the log gives it (turn metadata `rating`), if any."""
    rating_scale: tuple[float, float] | None = None

    def add(self, conv: MinedConversation, assistant: str | None, cluster: str | None = None) -> None:
        rows = [conv.signals[t.turn_index] for t in conv.turns if t.role == "assistant" and t.turn_index in
                conv.signals]
        users = [t for t in conv.turns if t.role == "user"]
        if not rows or not users:
            return
        labels: list[str] = [reaction_of(r) for r in rows]
        group = cluster or conv.digest
        self.sessions.append(labels)
        self.thumbs.append([thumbs_of(r) or "none" for r in rows])
        self.lengths.append(len(users))
        self.user_texts.extend((group, t.text) for t in users)
        self.digests.append(conv.digest)
        self.clusters.append(group)
        self.langs.append(detect_lang([t.text for t in users]))
        self.openers.append(users[0].text)
        rating, scale = _rating_of(conv)
        self.ratings.append(rating)
        self.rating_scale = self.rating_scale or scale
        if assistant is not None:
            self.by_assistant.setdefault(assistant, []).append(labels)

    def subset(self, keep: list[int], name: str) -> Side:
        """The conversations at positions `keep` (in that order)."""
        out = Side(name, rating_scale=self.rating_scale)
        for attr in ("sessions", "thumbs", "lengths", "digests", "clusters", "langs", "openers", "ratings"):
            setattr(out, attr, [getattr(self, attr)[i] for i in keep])
        kept = set(out.clusters)
        out.user_texts = [(c, t) for c, t in self.user_texts if c in kept]
        return out

    def sorted(self) -> Side:
        """The same conversations in digest order (and their texts in cluster order): independent of the order
        the inputs were read in."""
        out = self.subset(sorted(range(len(self.digests)), key=lambda i: self.digests[i]), self.name)
        out.user_texts = sorted(self.user_texts)
        out.by_assistant = {k: sorted(v) for k, v in sorted(self.by_assistant.items())}
        return out

    def half(self, which: int) -> Side:
        """The conversations whose digest falls in one half (0 or 1): the split-half control."""
        keep = [i for i, d in enumerate(self.digests) if int(hashlib.sha256(d.encode()).hexdigest(), 16) % 2 == which]
        return self.subset(keep, f"{self.name} (half {which + 1})")

    def cluster_sessions(self) -> list[list[str]]:
        """The reaction labels merged per cluster (sorted): the unit a bootstrap resamples."""
        merged: dict[str, list[str]] = {}
        for cluster, labels in zip(self.clusters, self.sessions, strict=True):
            merged.setdefault(cluster, []).extend(labels)
        return [merged[k] for k in sorted(merged)]

    def cluster_thumbs(self) -> list[list[str]]:
        merged: dict[str, list[str]] = {}
        for cluster, labels in zip(self.clusters, self.thumbs, strict=True):
            merged.setdefault(cluster, []).extend(labels)
        return [merged[k] for k in sorted(merged)]


RATING_KEYS = ("rating", "satisfaction", "score")


def _rating_of(conv: MinedConversation) -> tuple[float | None, tuple[float, float] | None]:
    """A conversation-level rating from turn metadata (`rating`, with `rating_scale` [low, high]), if any."""
    for turn in conv.turns:
        for key in RATING_KEYS:
            value = turn.meta.get(key)
            if isinstance(value, int | float) and not isinstance(value, bool):
                scale = turn.meta.get("rating_scale")
                if isinstance(scale, list) and len(scale) == 2:
                    return float(value), (float(scale[0]), float(scale[1]))
                return float(value), None
    return None, None


def _assistant_of(conv: MinedConversation) -> str | None:
    for turn in conv.turns:
        if turn.role == "assistant":
            for key in ASSISTANT_KEYS:
                value = turn.meta.get(key)
                if isinstance(value, str) and value.strip():
                    return value.strip()
    return None


def read_side(name: str, mined: Path, *, assistant: str | None = None,
              cluster_of: dict[str, str] | None = None) -> Side:
    """A side from a mining output; `assistant` names every conversation's assistant (a simulated run's model),
    else each conversation's turn metadata does; `cluster_of` maps a conversation id to its cluster (a simulated
    run's session id to its persona)."""
    side = Side(name)
    for conv in iter_mined(mined):  # near-duplicates count: they are sessions like any other (as in mining's rates)
        cluster = (cluster_of or {}).get(conv.conversation_id)
        side.add(conv, assistant or _assistant_of(conv), f"persona:{cluster}" if cluster else None)
    return side.sorted()


def mined_logs(path: Path, stack: ExitStack, *, workdir: Path | None = None, workers: int | None = None,
               say: Callable[[str], None] | None = None, llm_rubric: bool = False) -> Path:
    """`path` itself when it is a mining output, else the deterministic stages run on it (in `workdir`, else a
    temporary directory removed when `stack` closes); `llm_rubric`: `path` is LLM-Rubric's data, converted to
    the canonical log first (`real_llm_rubric`)."""
    if is_mined_dir(path):
        return path
    if workdir is None:
        workdir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="uxbench-validate-")))
    if llm_rubric:
        from uxbench.sim.real_llm_rubric import write_log

        path = write_log(path, workdir / "llm-rubric" / "log.jsonl")
    return mined_run(path, workdir / "real-mined", workers=workers, say=say)


def mined_sim_run(run_dir: Path, *, workers: int | None = None, say: Callable[[str], None] | None = None) -> Path:
    """The mining output of a simulated run's sessions (`RUN_DIR/mined`, made on first use, reused after, made
    again when the sessions changed: a resumed run that added some)."""
    import json

    from uxbench.mining.pipeline.config import MineConfig
    from uxbench.mining.pipeline.driver_stages import input_fingerprints
    from uxbench.mining.pipeline.run import run_pipeline

    log, out = run_dir / "sessions.jsonl", run_dir / MINED_DIR
    if not log.is_file():
        from uxbench.errors import ConfigError

        raise ConfigError(f"{run_dir} has no sessions.jsonl: rerun the `uxbench sim run` command that made it")
    manifest = out / "manifest.json"
    before = json.loads(manifest.read_text(encoding="utf-8")).get("inputs") if manifest.is_file() else None
    fresh = before is not None and before != input_fingerprints([str(log)])
    config = MineConfig(inputs=(str(log),), out=str(out), llm=False, fresh=fresh)
    if workers:
        config = config.model_copy(update={"workers": workers})
    run_pipeline(config, progress=say)
    return out
