"""The LLM agents of the mining pipeline: a miner proposes cases from the signals, a judge scores them on
five axes (the code applies the keep rule), and a QA pass audits the survivors, failing closed.

Prompts are files under `prompts/{en,zh}/`, written for this project.
"""

from uxbench.mining.agents.jsonout import extract_json, strip_reasoning
from uxbench.mining.agents.models import (
    AXES,
    BAD_SIGNALS,
    RECOVERY_SIGNALS,
    AgentConfig,
    AgentReport,
    Candidate,
    CandidateStatus,
    CaseKind,
    SampleTask,
)
from uxbench.mining.agents.reviews import keep_decision
from uxbench.mining.agents.run import agents_for_session, run_agents

__all__ = [
    "AXES",
    "BAD_SIGNALS",
    "RECOVERY_SIGNALS",
    "AgentConfig",
    "AgentReport",
    "Candidate",
    "CandidateStatus",
    "CaseKind",
    "SampleTask",
    "agents_for_session",
    "extract_json",
    "keep_decision",
    "run_agents",
    "strip_reasoning",
]
