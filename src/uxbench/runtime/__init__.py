"""The runtime around model calls: adaptive concurrency, retries, the response cache, usage and cost.

Nothing here knows about HTTP or providers; `uxbench.models.model.Model` puts the pieces together.
"""

from uxbench.runtime.cache import CacheError, ResponseCache, default_cache_path, request_key
from uxbench.runtime.cost import LOCAL_PROVIDERS, ModelUsage, Price, PriceTable, UsageTracker, format_cost
from uxbench.runtime.limiter import AdaptiveLimiter, reset_shared_limiters, shared_limiter
from uxbench.runtime.retry import RetryPolicy, call_with_retry

__all__ = [
    "LOCAL_PROVIDERS",
    "AdaptiveLimiter",
    "CacheError",
    "ModelUsage",
    "Price",
    "PriceTable",
    "ResponseCache",
    "RetryPolicy",
    "UsageTracker",
    "call_with_retry",
    "default_cache_path",
    "format_cost",
    "request_key",
    "reset_shared_limiters",
    "shared_limiter",
]
