"""The `uxbench mine` pipeline: raw chat logs -> de-identified sessions -> signals -> (LLM agents) ->
test cases, as checkpointed stages that run in-process or on Ray. The stages are listed, in order, in
`registry.STAGES`."""

from uxbench.mining.pipeline.config import MineConfig
from uxbench.mining.pipeline.run import STAGES, MineResult, run_pipeline

__all__ = ["STAGES", "MineConfig", "MineResult", "run_pipeline"]
