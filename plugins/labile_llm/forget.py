"""The ``llm.forget_replies`` handler: forgetting reaches the on-disk reply cache.

Replies are cached by a hash of the prompt, never the prompt itself, but a
reply may quote what it was shown. When observations are forgotten, every
cached reply holding a word that only the forgotten observations contain is
deleted, and the SQLite file rewritten so no free page keeps it.
"""

from __future__ import annotations

from labile.plugin import ForgetPlan, get_logger
from labile_llm.cache import ResponseCache

__all__ = ["forget_cached_replies"]

log = get_logger(__name__)


def forget_cached_replies(plan: ForgetPlan) -> None:
    """Delete the pipeline LLM's cached replies that quote forgotten observations."""
    cache = getattr(plan.deps.llm, "response_cache", None)
    if isinstance(cache, ResponseCache) and plan.forgotten:
        gone = cache.forget_replies(plan.leaks)
        log.info("llm_cache_replies_forgotten", namespace=plan.namespace, replies=gone)
