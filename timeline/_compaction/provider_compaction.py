"""Provider compaction as a policy mode: the provider summarizes, the library keeps the
rest (``native`` in the public names: ``NativeCompaction``, ``CompactionPolicy(native=...)``).

With ``CompactionPolicy(native=NativeCompaction("anthropic"))`` the request asks the
provider to compact (Anthropic's ``context_management`` edit ``compact_20260112``, the
Responses API's ``context_management`` compaction entry: :meth:`NativeCompaction.params`,
also :attr:`RenderedContext.native_params`). When a reply carries the provider's
compaction block or item, the caller appends it as it appends any reply content (a
``provider.compaction`` block, :func:`timeline._model.native.anthropic_compaction` /
:func:`~timeline._model.native.openai_compaction`, or the importers and the driver's
``ModelReply``). The next render records it as the conversation's summary: everything
visible before it is compacted there, as by a summary of our own, so the library keeps
what the provider does not give back:

* the compacted blocks stay in the timeline, the turn log, the archive and search, and
  ``read(path)`` brings them back (the summary's reminder names their paths);
* a deterministic summary block (the inventory summarizer: no model call) carries the
  digest (files, decisions, the user's requests verbatim) before the provider's block;
  the provider's own format drops what comes before its compaction block, every other
  format and the text layout show both;
* the provider's block is sent back exactly, in its place, to its own provider;
* cache checkpoints are planned on the stream as always, and the budget ladder stays:
  the library compacts on its own only when the prompt would exceed the budget (the
  provider's trigger, ``trigger_ratio`` of it by default, comes first).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final, Literal

import attrs

from timeline._compaction.validators import bool_type, opt_str, positive_or_none
from timeline._model import PROVIDER_COMPACTION, Block, PolicyError, native_provider

__all__ = [
    "ANTHROPIC_COMPACTION_BETA",
    "ANTHROPIC_MIN_TRIGGER",
    "NativeCompaction",
    "CompactingProvider",
    "provider_compaction_cut",
]

CompactingProvider = Literal["anthropic", "responses"]
"""Who compacts: Anthropic Messages, or the OpenAI Responses API."""

ANTHROPIC_COMPACTION_BETA: Final = "compact-2026-01-12"
"""The ``anthropic-beta`` value the compaction edit needs (``betas=[...]`` in the SDK)."""

ANTHROPIC_MIN_TRIGGER: Final = 50_000
"""The smallest trigger Anthropic's compaction edit takes (its default is 150,000)."""

_PROVIDERS: Final = ("anthropic", "responses")


def _provider(_: Any, attribute: attrs.Attribute[str], value: Any) -> None:
    if value not in _PROVIDERS:
        raise PolicyError(f"must be one of {list(_PROVIDERS)}, got {value!r}", field=attribute.name)


@attrs.frozen(kw_only=True)
class NativeCompaction:
    """Let the provider compact (``CompactionPolicy(native=NativeCompaction(...))``).

    ``trigger_tokens`` is the prompt size at which the provider compacts (None: the
    policy's ``trigger_ratio`` of its budget; Anthropic takes no trigger below
    :data:`ANTHROPIC_MIN_TRIGGER`, so under a smaller budget its request asks for that
    and the library's own compaction at the budget comes first); ``instructions`` and
    ``pause_after_compaction`` are passed to Anthropic's compaction edit as they are.
    """

    provider: CompactingProvider = attrs.field(validator=_provider)
    trigger_tokens: int | None = attrs.field(default=None, validator=positive_or_none)
    instructions: str | None = attrs.field(default=None, validator=opt_str)
    pause_after_compaction: bool = attrs.field(default=False, validator=bool_type)

    def trigger(self, budget: int | None, trigger_ratio: float) -> int | None:
        """The provider's trigger under ``budget`` (None: the provider's own default)."""
        if self.trigger_tokens is not None:
            return self.trigger_tokens
        return None if budget is None else int(trigger_ratio * budget)

    def params(self, budget: int | None = None, trigger_ratio: float = 0.9) -> dict[str, Any]:
        """The request's keyword arguments that ask the provider to compact: Anthropic
        ``{"betas": [...], "context_management": {"edits": [...]}}`` (for
        ``client.beta.messages.create``), Responses ``{"context_management": [...]}``."""
        trigger = self.trigger(budget, trigger_ratio)
        if self.provider == "responses":
            entry: dict[str, Any] = {"type": "compaction"}
            if trigger is not None:
                entry["compact_threshold"] = trigger
            return {"context_management": [entry]}
        edit: dict[str, Any] = {"type": "compact_20260112"}
        if trigger is not None:  # under a smaller budget the library's own ladder compacts
            value = max(trigger, ANTHROPIC_MIN_TRIGGER)
            edit["trigger"] = {"type": "input_tokens", "value": value}
        if self.instructions is not None:
            edit["instructions"] = self.instructions
        if self.pause_after_compaction:
            edit["pause_after_compaction"] = True
        return {"betas": [ANTHROPIC_COMPACTION_BETA], "context_management": {"edits": [edit]}}


def provider_compaction_cut(
    blocks: Sequence[Block], start: int, provider: CompactingProvider
) -> int | None:
    """Index of the newest ``provider.compaction`` block of ``provider`` in
    ``blocks[start:]`` that is not hidden and has visible blocks before it to compact
    (None: no provider compaction to record)."""
    for i in range(len(blocks) - 1, start, -1):
        b = blocks[i]
        if b.type == PROVIDER_COMPACTION and not b.hidden and native_provider(b) == provider:
            return i
    return None
