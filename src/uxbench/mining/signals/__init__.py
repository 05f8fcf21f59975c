"""Behavioural signals per assistant turn (skim, repeat, rephrase, complaint, dismiss, topic change,
conversation end, thumbs, regenerations, praise, building on the reply, copy/share) with their evidence,
the `dissatisfied` / `satisfied` verdicts, and recovery chains. See `detect` for the rules.

The names below load on first use (PEP 562): a module that needs one light submodule (`literals`, read by the
simulator's leak checks) does not pay for the detectors' imports (pyarrow among them, about 0.6 s)."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from uxbench.mining.signals.config import DEFAULT_CONFIG, SIGNAL_NAMES, SignalConfig
    from uxbench.mining.signals.detect import compute_signals, signals_batch, signals_table
    from uxbench.mining.signals.followup import FOLLOWUP_LABELS, Followup, analyse_followup, rule_label
    from uxbench.mining.signals.recovery import recovery_chains
    from uxbench.mining.signals.results import RecoveryChain, SignalValue, TurnSignals

_WHERE = {
    "DEFAULT_CONFIG": "config", "SIGNAL_NAMES": "config", "SignalConfig": "config",
    "compute_signals": "detect", "signals_batch": "detect", "signals_table": "detect",
    "FOLLOWUP_LABELS": "followup", "Followup": "followup", "analyse_followup": "followup", "rule_label": "followup",
    "recovery_chains": "recovery",
    "RecoveryChain": "results", "SignalValue": "results", "TurnSignals": "results",
}

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


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
