"""A ``/context``-style report: what the next prompt spends its budget on."""

from __future__ import annotations

import warnings

from timeline.policy import NoBudgetWarning, compaction_status
from timeline.timeline import Timeline

__all__ = ["context_report"]

BAR = 30


def context_report(tl: Timeline, system: str = "") -> str:
    """Context usage by block type with a bar each, checkpoints and summaries."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoBudgetWarning)  # the report says it below
        view = tl.render(system)
    rows: dict[str, list[int]] = {}
    if system:
        rows["system prompt"] = [1, tl.token_memo.text(system)]
    for b in view.blocks:
        cost = tl.block_tokens(b)
        row = rows.setdefault(b.type, [0, 0])
        row[0] += 1
        row[1] += cost
    budget = view.budget
    scale = budget or max(1, view.tokens)
    lines = [f"conversation {tl.conversation_id!r} (version {tl.version})"]
    used = f"{view.tokens:,} tokens" + (
        f" of {budget:,} ({view.tokens / budget:.0%})" if budget else ""
    )
    lines.append(f"next prompt: {used}, {len(view.blocks)} blocks")
    lines.append(compaction_status(tl.policy))
    width = max([len(k) for k in rows] + [10])
    for name, (count, tokens) in sorted(rows.items(), key=lambda kv: -kv[1][1]):
        filled = round(BAR * tokens / scale)
        bar = "█" * filled + "░" * (BAR - filled)
        lines.append(
            f"  {name:<{width}} {count:>5} blk {tokens:>8,} tok  {bar} {tokens / scale:6.1%}"
        )
    if budget:
        free = max(0, budget - view.tokens)
        lines.append(f"  {'free':<{width}} {'':>9} {free:>8,} tok")
    points = ", ".join(f"{i}:{view.blocks[i].path}" for i in view.cache_points) or "none"
    lines.append(f"cache checkpoints: system{' + ' if view.cache_points else ''}{points}")
    summaries = [b for b in view.blocks if b.type == "conv.range.summary"]
    for s in summaries:
        covered = s.meta.get("covered_turn_ids", [])
        lines.append(f"summary {s.path}: covers {len(covered)} turns, {len(s.text):,} chars")
    if view.truncated_paths:
        lines.append(f"truncated for this render: {', '.join(view.truncated_paths)}")
    return "\n".join(lines)
