"""Task 1, UX Judge: predict whether the real user liked an assistant reply."""

from uxbench.tasks.judge.options import JudgeOptions
from uxbench.tasks.judge.task import JudgeTask, case_strata

__all__ = ["JudgeOptions", "JudgeTask", "case_strata"]
