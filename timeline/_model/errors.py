"""Every error block-timeline raises, in one tree.

::

    TimelineError
    ├── InvalidBlockError (ValueError)          a block that breaks an append invariant
    │   ├── OrphanToolResultError               tool result without an earlier call
    │   └── DuplicateBlockIdError               id already used in the conversation
    ├── InvalidConversationIdError (ValueError) a conversation id no store can hold
    ├── UnknownPathError (KeyError)             hide/unhide/unpin/read of a path not present
    ├── CodecError (ValueError)                 a record that cannot be decoded
    ├── PolicyError (ValueError)                bad compaction policy or config mapping
    ├── EmptyPromptError (ValueError)           a render with nothing to send to the provider
    ├── BudgetError (ValueError)                the prompt cannot fit, with the numbers
    │   └── PinnedOverBudgetError               pinned blocks alone do not fit
    ├── TokenizerUnavailableError (LookupError) encoding not available offline
    ├── ContextOverflowError                    the provider still said "too long" after a retry
    ├── DriverError                             the ReAct driver cannot go on (step limit, tool)
    ├── ToolNameError (ValueError)              two tool names a provider would see as one
    ├── AsyncSummarizerError (RuntimeError)     sync render of an async summarizer in a loop
    └── StoreError                              anything an index store backend reports
        ├── ConflictError                       stale writer: another persist won
        ├── CorruptRecordError (CodecError)     a stored row that does not decode
        ├── NotFoundError (KeyError)            conversation, block or checkpoint missing
        └── StoreUnavailableError               cannot open or reach the backend (or no driver)

Every class inherits the fitting builtin so ``except ValueError`` style handling keeps
working. Structured attributes (``conversation_id``, ``block_id``, ``path``) are set
where they are known.
"""

from __future__ import annotations

__all__ = [
    "AsyncSummarizerError",
    "BudgetError",
    "CodecError",
    "ConflictError",
    "ContextOverflowError",
    "CorruptRecordError",
    "DriverError",
    "DuplicateBlockIdError",
    "EmptyPromptError",
    "InvalidBlockError",
    "InvalidConversationIdError",
    "NotFoundError",
    "OrphanToolResultError",
    "PinnedOverBudgetError",
    "PolicyError",
    "StoreError",
    "StoreUnavailableError",
    "TimelineError",
    "TokenizerUnavailableError",
    "ToolNameError",
    "UnknownPathError",
]


class TimelineError(Exception):
    """Root of every error raised by block-timeline."""

    def __init__(
        self,
        message: str,
        *,
        conversation_id: str | None = None,
        block_id: str | None = None,
        path: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.conversation_id = conversation_id
        self.block_id = block_id
        self.path = path

    def __str__(self) -> str:
        return self.message


class InvalidBlockError(TimelineError, ValueError):
    """A block breaks an append-time invariant; the timeline is unchanged."""


class InvalidConversationIdError(TimelineError, ValueError):
    """A conversation id is not a non-empty str a store can hold (no lone surrogate, no
    NUL character); nothing was created or read."""


class OrphanToolResultError(InvalidBlockError):
    """A ``react.tool.result`` names a ``call_id`` with no earlier ``react.tool.call``."""


class DuplicateBlockIdError(InvalidBlockError):
    """A block id is already used in the conversation."""


class UnknownPathError(TimelineError, KeyError):
    """No block has the given path."""


class CodecError(TimelineError, ValueError):
    """A record could not be decoded: corrupt, truncated, or of a foreign schema."""


class PolicyError(TimelineError, ValueError):
    """A policy or config mapping is invalid. ``field`` is the path of the offending
    setting (``keep_ratio``, ``clearing.summary_keep_ratio``; None when the error is not
    about one setting) and ``reason`` what is wrong with it; the message is
    ``field: reason``."""

    def __init__(self, reason: str, *, field: str | None = None, **kw: str | None) -> None:
        super().__init__(f"{field}: {reason}" if field else reason, **kw)
        self.field = field
        self.reason = reason


class EmptyPromptError(TimelineError, ValueError):
    """The rendered timeline holds no message to send (a provider rejects an empty list)."""


class BudgetError(TimelineError, ValueError):
    """The prompt cannot be made to fit the budget; carries the numbers. ``parts`` names
    what alone does not fit when it is a part the prompt cannot drop (``"system prompt"``,
    ``"tool definitions"``, ``"pinned blocks"``, in that order); empty when the whole
    prompt is still over after compaction and truncation."""

    def __init__(
        self,
        message: str,
        *,
        budget: int,
        required: int,
        parts: tuple[str, ...] = (),
        **kw: str | None,
    ) -> None:
        super().__init__(message, **kw)
        self.budget = budget
        self.required = required
        self.parts = parts


class PinnedOverBudgetError(BudgetError):
    """Pinned blocks (plus the system prompt) alone exceed the budget."""


class TokenizerUnavailableError(TimelineError, LookupError):
    """The requested encoding is not available without the network."""


class ContextOverflowError(TimelineError):
    """The provider rejected the prompt as too long even after a forced compaction."""

    def __init__(self, message: str, *, cause: object = None, **kw: str | None) -> None:
        super().__init__(message, **kw)
        self.cause = cause


class DriverError(TimelineError):
    """The ReAct driver cannot continue (step limit, unknown tool, bad model reply)."""


class ToolNameError(TimelineError, ValueError):
    """Two tool names become one provider-safe name (``fs.delete`` and ``fs:delete``
    both go out as ``fs_delete``), so a call to it could run the wrong tool."""


class AsyncSummarizerError(TimelineError, RuntimeError):
    """A sync ``render()`` met an async summarizer inside a running event loop: it cannot
    wait for it there, so it refuses instead of changing strategy; use ``arender()``."""


class StoreError(TimelineError):
    """An index store backend failed; the original error is chained as ``__cause__``."""


class ConflictError(StoreError):
    """Another writer persisted this conversation first; reload and retry."""

    def __init__(self, message: str, *, expected: int, actual: int, **kw: str | None) -> None:
        super().__init__(message, **kw)
        self.expected = expected
        self.actual = actual


class CorruptRecordError(StoreError, CodecError):
    """A stored row does not decode; names conversation and row."""


class NotFoundError(StoreError, KeyError):
    """The conversation, block, path or checkpoint does not exist in the store."""


class StoreUnavailableError(StoreError):
    """The backend cannot be opened (bad URL, missing optional driver, unreachable)."""
