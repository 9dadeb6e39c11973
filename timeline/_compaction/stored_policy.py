"""The compaction policy a store keeps with a conversation, and reading it back.

``persist`` writes the timeline's policy into the window state as a mapping of the fields
that differ from their defaults; ``Timeline.load`` without ``policy=`` (and every CLI
command) continues with it, so a reloaded agent compacts as it did. A window written
before policies were kept has only the budget and trigger of its last render: the policy
is rebuilt from those.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

import attrs
import msgspec

from timeline._compaction.policy import CompactionPolicy
from timeline._model import PolicyError, TimelineState

__all__ = ["budget_policy", "policy_mapping", "stored_policy"]


def policy_mapping(policy: CompactionPolicy) -> dict[str, Any]:
    """``policy`` as plain JSON data: the fields that differ from their defaults (nested
    policies whole), which :meth:`CompactionPolicy.from_mapping` reads back."""
    out: dict[str, Any] = {}
    for field in attrs.fields(CompactionPolicy):
        value = getattr(policy, field.name)
        if value == field.default:
            continue
        if attrs.has(type(value)):
            value = attrs.asdict(value)
        elif isinstance(value, Mapping):
            value = dict(value)
        out[field.name] = value
    return cast(dict[str, Any], msgspec.to_builtins(out))  # tuples become lists


def budget_policy(budget: int | None, trigger_ratio: float | None) -> CompactionPolicy:
    """A policy with ``budget`` and the conversation's own trigger when it has one (the
    keep ratio scaled with it when the default would not sit below it)."""
    if not budget:
        return CompactionPolicy()
    if trigger_ratio is None:
        return CompactionPolicy(max_tokens=budget)
    try:
        return CompactionPolicy(max_tokens=budget, trigger_ratio=trigger_ratio)
    except PolicyError:
        keep = round(trigger_ratio * 7 / 9, 4)
        return CompactionPolicy(max_tokens=budget, trigger_ratio=trigger_ratio, keep_ratio=keep)


def stored_policy(state: TimelineState) -> CompactionPolicy:
    """The policy the window was persisted with; for a window without one (written
    before policies were kept, or by a newer version this one cannot read), the budget
    and trigger of its last render."""
    if state.policy is not None:
        try:
            return CompactionPolicy.from_mapping(state.policy, path="stored policy")
        except PolicyError:
            pass
    last = state.last_render
    return budget_policy(last.budget, last.trigger_ratio)
