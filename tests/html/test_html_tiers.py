"""The HTML view shows what the clearing tier did (#26 x #27 item 12): blocks the tier
shows cleared are marked "cleared" (not merely hidden), and a summary that followed a
clearing or pruning pass says what each tier did on its compaction card."""

from __future__ import annotations

import re

from timeline import ClearingPolicy, CompactionPolicy, HeuristicCounter, Timeline, blocks
from timeline._cli.html_view import timeline_html
from timeline._model.block import CONV_RANGE_SUMMARY

SYSTEM = "You are a coding agent."


def _read(tl: Timeline, path: str, chars: int) -> str:
    call = tl.append(blocks.tool_call("read_file", {"path": path}))
    body = f"contents of {path}\n" + "x" * chars
    result = tl.append(blocks.tool_result(call.call_id or "", body, tool_id="read_file"))
    return result.id


def _row_classes(page: str, tl: Timeline, block_id: str) -> set[str]:
    """The classes of the first row of ``block_id`` (by its path) in the page."""
    path = next(b.path for b in tl.blocks if b.id == block_id)
    found = re.search(rf'<details class="([^"]*)"[^>]*data-path="{re.escape(path)}"', page)
    assert found is not None, path
    return set(found.group(1).split())


def test_cleared_blocks_are_marked_cleared() -> None:
    policy = CompactionPolicy(max_tokens=4_000, clearing=ClearingPolicy(dedupe_reads=False))
    tl = Timeline("c", policy=policy, token_counter=HeuristicCounter())
    tl.begin_turn()
    tl.append(blocks.user_prompt("read the code"))
    ids = [_read(tl, f"src/m{i}.py", 2_600) for i in range(6)]
    tl.append(blocks.assistant_completion("done"))
    view = tl.render(SYSTEM)
    assert view.compaction is not None and view.compaction.tier == "clear"
    assert tl.cleared_ids == frozenset(ids[:3])
    page = timeline_html(tl, SYSTEM)
    for block_id in ids[:3]:
        classes = _row_classes(page, tl, block_id)
        assert "cleared" in classes and "hidden" not in classes
    for block_id in ids[3:]:
        assert "cleared" not in _row_classes(page, tl, block_id)


def test_a_summary_after_clearing_records_each_tier() -> None:
    policy = CompactionPolicy(max_tokens=4_000, clearing=ClearingPolicy(dedupe_reads=False))
    tl = Timeline("c", policy=policy, token_counter=HeuristicCounter())
    for t in range(6):
        tl.begin_turn()
        tl.append(blocks.user_prompt(f"turn {t} " + "p " * 600))
        _read(tl, f"src/m{t}.py", 1_200)
        tl.append(blocks.assistant_completion(f"answer {t} " + "a " * 600))
    stats = tl.render(SYSTEM).compaction
    assert stats is not None and stats.tier == "summarize" and stats.cleared_blocks > 0
    summary = next(b for b in tl.blocks if b.type == CONV_RANGE_SUMMARY)
    assert summary.meta["tiers"] == [
        {"tier": "clear", "blocks": stats.cleared_blocks, "tokens freed": stats.cleared_tokens},
        {"tier": "summarize", "blocks": stats.compacted_blocks},
    ]
    page = timeline_html(tl, SYSTEM)
    assert f"tier clear: blocks {stats.cleared_blocks}" in page
    assert "tier summarize" in page


def test_an_ordinary_summary_has_no_tier_record() -> None:
    tl = Timeline("c", policy=CompactionPolicy(max_tokens=4_000), token_counter=HeuristicCounter())
    for t in range(6):
        tl.begin_turn()
        tl.append(blocks.user_prompt(f"turn {t} " + "p " * 600))
        tl.append(blocks.assistant_completion(f"answer {t} " + "a " * 600))
    assert tl.render(SYSTEM).compaction is not None
    summary = next(b for b in tl.blocks if b.type == CONV_RANGE_SUMMARY)
    assert "tiers" not in summary.meta
