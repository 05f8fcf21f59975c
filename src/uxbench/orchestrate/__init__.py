"""Orchestration: runs a task over a data source with its models (generation, then scoring), resumably.

This layer sits above `tasks/` and `scoring/`: it is the only place that knows both a task and a run store.
"""
