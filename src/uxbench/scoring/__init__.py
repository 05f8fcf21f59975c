"""Scoring: turning model outputs into verdicts (verdict parsing; GRM and LLM-judge scorers build on it)."""

from uxbench.scoring._text import strip_reasoning
from uxbench.scoring.verdict import ParsedScore, ParsedVerdict, parse_binary, parse_likert, parse_three_class

__all__ = [
    "ParsedScore",
    "ParsedVerdict",
    "parse_binary",
    "parse_likert",
    "parse_three_class",
    "strip_reasoning",
]
