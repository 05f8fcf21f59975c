"""Thresholds and rules of the behavioural signals.

Frozen and picklable: one object travels to every worker.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from uxbench.errors import ConfigError
from uxbench.mining.signals.similarity import SimilarityMethod

SignalName = Literal[
    "thumbs_down", "thumbs_up", "regenerate", "skim", "complaint", "dismiss", "repeat", "rephrase",
    "continuation", "topic_change", "conversation_end", "praise", "builds_on", "copied",
]
SIGNAL_NAMES: tuple[SignalName, ...] = (
    "thumbs_down", "thumbs_up", "regenerate", "skim", "complaint", "dismiss", "repeat", "rephrase",
    "continuation", "topic_change", "conversation_end", "praise", "builds_on", "copied",
)


class SignalConfig(BaseModel):
    """Every threshold of the signal rules. Defaults: the method notes where sound, else measured on
    the project's labelled sets (`signal_sets/`, see `signals.evaluate`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    # skim (timing)
    skim_seconds_per_unit: float = Field(default=0.15, gt=0)
    """Skim when the gap per reading unit (CJK character or other word) is below this..."""
    skim_max_gap_s: float = Field(default=30.0, gt=0)
    """...and the gap itself is below this (method notes)."""
    skim_min_reply_chars: int = Field(default=50, ge=0)
    """Replies of this many characters or fewer cannot be skimmed (method notes: > 50)."""

    # repeat / rephrase / topic change
    similarity_method: SimilarityMethod = "content_indel"
    """Measure between the next and the previous user message (see `similarity.similarity`)."""
    repeat_threshold: float = Field(default=0.85, ge=0, le=1)
    """Similarity at or above which the next message repeats the previous one."""
    rephrase_threshold: float = Field(default=0.4, ge=0, le=1)
    """Similarity at or above which (below the repeat threshold) it rephrases it."""
    min_followup_chars: int = Field(default=2, ge=0)
    """Repeat and rephrase need a next message with more normalised characters than this."""
    topic_change_threshold: float = Field(default=0.2, ge=0, le=1)
    """A topic change has similarity to the previous message below this..."""
    topic_change_max_overlap: float = Field(default=0.1, ge=0, le=1)
    """...and at most this share of its content words in the previous message and the reply."""
    topic_min_chars: int = Field(default=5, ge=0)
    """Both messages need at least this many characters for a topic change (method notes)."""
    extension_min_tokens: int = Field(default=3, ge=1)
    """A next message that keeps the previous one and adds this many tokens extends it (not a repeat)."""

    # text patterns
    complaint_max_chars: int = Field(default=300, ge=1)
    """Longer user messages are not tested for complaints (method notes)."""
    dismiss_max_chars: int = Field(default=40, ge=1)
    """Longer messages are not give-ups, whatever they start with."""
    praise_max_chars: int = Field(default=200, ge=1)

    # how signals add up
    fire_score: float = Field(default=0.5, ge=0, le=1)
    """A scored text signal (complaint, repeat, rephrase) fires at or above this score; below it, its score
    and evidence are kept and still count towards `dissatisfied_score`."""
    strong_signals: tuple[SignalName, ...] = (
        "thumbs_down", "regenerate", "complaint", "dismiss", "repeat", "rephrase",
    )
    """Each adds its own score to `dissatisfied_score` (whether or not it fired)."""
    weak_signals: tuple[SignalName, ...] = ("skim", "topic_change", "conversation_end")
    """Ambiguous alone: `weak_needed` of them together add `weak_score_full`, fewer add a share of it."""
    weak_needed: int = Field(default=2, ge=1)
    weak_score_full: float = Field(default=0.6, ge=0, le=1)
    thumbs_down_score: float = Field(default=0.95, ge=0, le=1)
    regenerate_score: float = Field(default=0.8, ge=0, le=1)
    dissatisfied_threshold: float = Field(default=0.5, ge=0, le=1)
    """`dissatisfied` is `dissatisfied_score >= dissatisfied_threshold` (`--dissatisfied-threshold`); the
    default was chosen on the development part of the real labelled follow-ups (docs/MINING.md)."""
    positive_signals: tuple[SignalName, ...] = ("thumbs_up", "praise", "builds_on", "copied")
    """Any one of these, on a turn that is not dissatisfied, makes it `satisfied`."""

    # recovery chains
    recovery_max_turns: int = Field(default=6, ge=1)
    """How many messages after a failure a recovery chain follows (method notes: 6)."""

    @model_validator(mode="after")
    def _check(self) -> SignalConfig:
        if self.rephrase_threshold > self.repeat_threshold:
            raise ConfigError(
                f"rephrase_threshold ({self.rephrase_threshold}) must not exceed repeat_threshold "
                f"({self.repeat_threshold})"
            )
        both = set(self.strong_signals) & set(self.weak_signals)
        if both:
            raise ConfigError(f"signals {sorted(both)} are listed both as strong and as weak")
        return self

    @classmethod
    def load(cls, values: Mapping[str, Any]) -> SignalConfig:
        """Build from user settings, turning validation problems into a `ConfigError`."""
        try:
            return cls.model_validate(dict(values))
        except ValidationError as err:
            problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in err.errors())
            raise ConfigError(f"Invalid signal settings: {problems}") from None


DEFAULT_CONFIG = SignalConfig()
