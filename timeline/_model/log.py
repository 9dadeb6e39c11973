"""The library's stdlib logger (``timeline``) and the few events it reports.

Only counts, ids, reasons and versions are logged, never the text of a block, so INFO
and above are safe to ship to a log service. Hooks (``on_before_compaction`` ...) are
unchanged; this is for operators who read logs rather than wire callbacks.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Protocol

__all__ = [
    "compaction_ended",
    "compaction_skipped",
    "compaction_started",
    "embedder_failed",
    "logger",
    "overflow_retry",
    "persist_conflict",
    "persisted",
    "recall_search_failed",
    "silenced",
    "summary_cut",
]


class LoggedCompaction(Protocol):
    """The fields of :class:`timeline._compaction.CompactionStats` that are logged (the
    model layer cannot import it)."""

    @property
    def reason(self) -> str: ...
    @property
    def tokens_before(self) -> int: ...
    @property
    def tokens_after(self) -> int | None: ...
    @property
    def compacted_blocks(self) -> int: ...
    @property
    def summary_block_count(self) -> int: ...
    @property
    def summarizer(self) -> str: ...
    @property
    def summarizer_error(self) -> str | None: ...


logger = logging.getLogger("timeline")
_silenced: ContextVar[bool] = ContextVar("timeline_log_silenced", default=False)


class _Silenced(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not _silenced.get()


logger.addFilter(_Silenced())


@contextlib.contextmanager
def silenced() -> Iterator[None]:
    """Nothing is logged inside (in this thread or task only): a dry run plans a
    compaction without one happening."""
    token = _silenced.set(True)
    try:
        yield
    finally:
        _silenced.reset(token)


def compaction_started(conversation_id: str, stats: LoggedCompaction) -> None:
    logger.info(
        "compaction start conversation=%s reason=%s tokens_before=%d blocks=%d",
        conversation_id,
        stats.reason,
        stats.tokens_before,
        stats.compacted_blocks,
    )


def compaction_ended(conversation_id: str, stats: LoggedCompaction) -> None:
    logger.info(
        "compaction end conversation=%s reason=%s tokens_before=%d tokens_after=%s "
        "summaries=%d summarizer=%s error=%s",
        conversation_id,
        stats.reason,
        stats.tokens_before,
        stats.tokens_after,
        stats.summary_block_count,
        stats.summarizer,
        "yes" if stats.summarizer_error else "no",
    )


def compaction_skipped(conversation_id: str, reason: str, tokens: int) -> None:
    logger.info(
        "compaction skipped conversation=%s reason=%s tokens=%d (nothing to cut)",
        conversation_id,
        reason,
        tokens,
    )


def overflow_retry(conversation_id: str, tokens: int, error: BaseException) -> None:
    # the provider's message may quote the prompt: log its type only
    logger.warning(
        "context overflow conversation=%s tokens=%d error=%s: retrying with a forced compaction",
        conversation_id,
        tokens,
        type(error).__name__,
    )


def summary_cut(chars: int, kept: int, max_tokens: int) -> None:
    logger.warning(
        "summary over its cap chars=%d kept=%d max_tokens=%d: the summarizer ignored its "
        "limit, its first lines kept",
        chars,
        kept,
        max_tokens,
    )


def persisted(conversation_id: str, version: int, logged: int, summaries: int) -> None:
    logger.info(
        "persist conversation=%s version=%d log_blocks=%d summaries=%d",
        conversation_id,
        version,
        logged,
        summaries,
    )


def persist_conflict(conversation_id: str, expected: int) -> None:
    logger.warning(
        "persist conflict conversation=%s expected_version=%d: another writer won; "
        "reload and retry",
        conversation_id,
        expected,
    )


def recall_search_failed(conversation_id: str, error: BaseException) -> None:
    logger.warning(
        "recall conversation=%s: the store search failed (%s); recalling from memory only",
        conversation_id,
        type(error).__name__,
    )


def embedder_failed(conversation_id: str, model: str, doing: str, error: BaseException) -> None:
    logger.warning(
        "embedder failed conversation=%s model=%s while %s: %s; searched by words alone "
        "(store.embed_missing embeds what was left out)",
        conversation_id,
        model,
        doing,
        type(error).__name__,
    )
