"""Both sides of a validation, read the same way: real logs and simulated runs go through the same deterministic
mining stages (`uxbench mine run --no-llm`), and each assistant turn gets its reaction label from the same rules
(`sim.reactions`). What each side contributes: per conversation the reaction labels and the thumbs, its length
in user turns, its user texts (for the discriminator), and which assistant replied (for the system-level check)."""

from __future__ import annotations

import hashlib
import tempfile
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

from uxbench.mining.pipeline.mined import is_mined_dir, mined_run
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

    def add(self, conv: MinedConversation, assistant: str | None) -> None:
        rows = [conv.signals[t.turn_index] for t in conv.turns if t.role == "assistant" and t.turn_index in
                conv.signals]
        users = [t for t in conv.turns if t.role == "user"]
        if not rows or not users:
            return
        labels: list[str] = [reaction_of(r) for r in rows]
        self.sessions.append(labels)
        self.thumbs.append([thumbs_of(r) or "none" for r in rows])
        self.lengths.append(len(users))
        self.user_texts.extend((conv.digest, t.text) for t in users)
        self.digests.append(conv.digest)
        if assistant is not None:
            self.by_assistant.setdefault(assistant, []).append(labels)

    def half(self, which: int) -> Side:
        """The conversations whose digest falls in one half (0 or 1): the split-half control."""
        out = Side(f"{self.name} (half {which + 1})")
        for i, digest in enumerate(self.digests):
            if int(hashlib.sha256(digest.encode()).hexdigest(), 16) % 2 == which:
                out.sessions.append(self.sessions[i])
                out.thumbs.append(self.thumbs[i])
                out.lengths.append(self.lengths[i])
                out.digests.append(digest)
        out.user_texts = [(c, t) for c, t in self.user_texts if c in set(out.digests)]
        return out


def _assistant_of(conv: MinedConversation) -> str | None:
    for turn in conv.turns:
        if turn.role == "assistant":
            for key in ASSISTANT_KEYS:
                value = turn.meta.get(key)
                if isinstance(value, str) and value.strip():
                    return value.strip()
    return None


def read_side(name: str, mined: Path, *, assistant: str | None = None) -> Side:
    """A side from a mining output; `assistant` names every conversation's assistant (a simulated run's model),
    else each conversation's turn metadata does."""
    side = Side(name)
    for conv in iter_mined(mined):  # near-duplicates count: they are sessions like any other (as in mining's rates)
        side.add(conv, assistant or _assistant_of(conv))
    return side


def mined_logs(path: Path, stack: ExitStack, *, workdir: Path | None = None, workers: int | None = None,
               say: Callable[[str], None] | None = None) -> Path:
    """`path` itself when it is a mining output, else the deterministic stages run on it (in `workdir`, else a
    temporary directory removed when `stack` closes)."""
    if is_mined_dir(path):
        return path
    if workdir is None:
        workdir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="uxbench-validate-")))
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
