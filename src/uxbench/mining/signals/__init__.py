"""Behavioural signals per assistant turn (skim, repeat, rephrase, complaint, dismiss, topic change,
conversation end, thumbs, regenerations, praise, building on the reply, copy/share) with their evidence,
the `dissatisfied` / `satisfied` verdicts, and recovery chains. See `detect` for the rules."""

from uxbench.mining.signals.config import DEFAULT_CONFIG, SIGNAL_NAMES, SignalConfig
from uxbench.mining.signals.detect import compute_signals, signals_batch, signals_table
from uxbench.mining.signals.followup import FOLLOWUP_LABELS, Followup, analyse_followup, rule_label
from uxbench.mining.signals.recovery import recovery_chains
from uxbench.mining.signals.results import RecoveryChain, SignalValue, TurnSignals

__all__ = [
    "DEFAULT_CONFIG",
    "FOLLOWUP_LABELS",
    "SIGNAL_NAMES",
    "Followup",
    "RecoveryChain",
    "SignalConfig",
    "SignalValue",
    "TurnSignals",
    "analyse_followup",
    "compute_signals",
    "recovery_chains",
    "rule_label",
    "signals_batch",
    "signals_table",
]
