"""Data layer: typed cases, taxonomies, loaders and the bundled demo set. Imports nothing else of uxbench."""

from uxbench.data.loaders import CaseSource, SkipEntry, SkipReport, load_cases
from uxbench.data.normalize import normalize_row
from uxbench.data.schema import AnyCase, EvalCase, JudgeCase, Message, RecoveryCase, TaskName

__all__ = [
    "AnyCase",
    "CaseSource",
    "EvalCase",
    "JudgeCase",
    "Message",
    "RecoveryCase",
    "SkipEntry",
    "SkipReport",
    "TaskName",
    "load_cases",
    "normalize_row",
]
