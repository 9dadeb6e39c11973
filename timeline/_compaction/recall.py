"""Recall: what was compacted away comes back into the prompt when the conversation needs
it (``CompactionPolicy(recall=RecallPolicy())``).

At each render the archive (the blocks compacted out of the visible stream, in memory and
in the store the timeline was loaded from or persisted to) is searched with the newest
user prompt and the tool call the agent made after it while that call waits for its
result. The best blocks that fit a share of the budget are rendered in one labelled block
after the stable stream (after the last cache checkpoint, so the cached prefix stays
warm), each with its path, turn and date; a long block comes back as the lines that
match. ``view.recalled`` lists them.
"""

from __future__ import annotations

from typing import Any

import attrs

from timeline._compaction.validators import float_type, int_type, positive_or_none, ratio
from timeline._model import PolicyError

__all__ = ["RecallPolicy"]


def _positive(_: Any, attribute: attrs.Attribute[int], value: Any) -> None:
    int_type(attribute.name, value)
    if value <= 0:
        raise PolicyError(f"must be a positive integer, got {value!r}", field=attribute.name)


def _share(_: Any, attribute: attrs.Attribute[float], value: Any) -> None:
    float_type(attribute.name, value)
    if not 0.0 <= value <= 1.0:
        raise PolicyError(f"must be in [0, 1], got {value!r}", field=attribute.name)


@attrs.frozen(kw_only=True)
class RecallPolicy:
    """How much of the archive comes back into the prompt, and in what form.

    The recalled block never pushes the prompt over the budget (it takes what room the
    budget leaves, at most ``share`` of it), never counts towards the compaction trigger,
    and is left out of a forced render.
    """

    share: float = attrs.field(default=0.1, validator=ratio)
    """The most of the budget the recalled block may take."""
    max_blocks: int = attrs.field(default=8, validator=_positive)
    """The most blocks recalled at one render."""
    min_match: float = attrs.field(default=0.0, validator=_share)
    """How much of the query a block must match to come back: its BM25 score over that of
    a text holding every word of the query once (rare words weigh more, so a block that
    shares only the query's common words scores low). 0: any match."""
    block_max_tokens: int | None = attrs.field(default=None, validator=positive_or_none)
    """A longer block comes back as its lines that match the query (None: half of the
    recalled block's room)."""
