"""Edges of ``timeline._render`` and ``timeline._formats`` (the HTML page, usage, payloads,
replies), written against mutants of the sampled mutation campaign
(docs/dev/mutation-testing.md, "Sampled campaign") that the broader tests let through; each was
checked to fail with its mutant applied."""

from __future__ import annotations

import asyncio
import re
from html.parser import HTMLParser
from typing import Any

import attrs
import msgspec
import pytest

from tests.helpers.conversations import coding_turn
from timeline import (
    CompactionPolicy,
    EmptyPromptError,
    HeuristicCounter,
    InvalidBlockError,
    Timeline,
    blocks,
)
from timeline._cache.checkpoints import plan_checkpoints
from timeline._compaction.clearing import key_arguments
from timeline._formats.reply import ModelReply
from timeline._html.breakdown import (
    CALIBRATION_ROW,
    category_of,
    percent_shares,
    token_breakdown,
)
from timeline._html.rows import TEXT_LIMIT, Item, _tiers, compaction_html, digest_text
from timeline._html.top import toolbar
from timeline._model.persistence import CacheState
from timeline._model.reasoning import anthropic_thinking
from timeline._tokens.walk import REFERENCE_TOKENS


def _page() -> tuple[Timeline, str]:
    tl = Timeline("h", policy=CompactionPolicy(max_tokens=50_000))
    tl.begin_turn()
    tl.append(blocks.user_prompt("list the files"))
    call = tl.append(blocks.tool_call("ls", {"path": "."}))
    tl.append(blocks.tool_result(call.call_id or "", "a.py\nb.py"))
    tl.append(blocks.assistant_completion("two files"))
    return tl, tl.render("sys").to_html()


def test_the_block_type_table_has_one_row_per_type() -> None:
    """The "by block type" table is the header row then one row per type (the system
    prompt's included), nothing between them."""
    tl, page = _page()
    found = re.search(
        r'<details class="types"><summary>by block type</summary><table>(.*?)'
        r"</table></details>",
        page,
    )
    assert found is not None
    rows = re.findall(r"<tr>.*?</tr>", found.group(1))
    assert "".join(rows) == found.group(1)
    assert len(rows) == 1 + len({b.type for b in tl.blocks}) + 1


def test_an_empty_document_payload_says_nothing_to_send() -> None:
    view = Timeline("e", policy=CompactionPolicy(max_tokens=1_000)).render("sys")
    with pytest.raises(EmptyPromptError, match=r"^nothing to send: the rendered timeline holds"):
        view.to_document()


def test_usage_categories_hold_only_the_categories_shown() -> None:
    """A category no block falls in has no slice, and the slices plus ``free`` add up
    to the budget."""
    tl, _ = _page()
    usage = token_breakdown(tl.render("sys"))
    shown = {category_of(name) for name in usage["types"]}
    assert set(usage["categories"]) == shown | {"free"}
    assert sum(c["tokens"] for c in usage["categories"].values()) == usage["budget"]


def test_a_digest_lists_each_entry_of_a_section() -> None:
    """The page's digest text: a section with its count, then one line per entry."""
    digest = {"files_read": ["src/a.py", {"path": "src/b.py", "turn": "t2"}], "goal": ""}
    assert digest_text(digest) == "files_read (2):\n  src/a.py\n  path=src/b.py · turn=t2"
    assert digest_text({"goal": "", "searches": []}) == "(empty)"


def test_a_block_of_exactly_the_text_limit_is_shown_whole() -> None:
    tl = Timeline("h", policy=CompactionPolicy(max_tokens=50_000))
    tl.begin_turn()
    tl.append(blocks.user_prompt("x" * TEXT_LIMIT))
    assert "more characters: store.read(" not in tl.render("sys").to_html()
    tl.append(blocks.user_prompt("y" * (TEXT_LIMIT + 1)))
    assert "[... 1 more characters: store.read(" in tl.render("sys").to_html()


@pytest.mark.parametrize("detail", ["low", "high", "original"])
def test_an_image_keeps_the_detail_it_asks_for_in_responses(detail: str) -> None:
    tl = Timeline("i", policy=CompactionPolicy(max_tokens=50_000))
    tl.begin_turn()
    png = b"\x89PNG\r\n\x1a\n0000"
    tl.append(blocks.user_attachment(name="a.png", mime="image/png", data=png, detail=detail))
    payload = tl.render("sys").to_openai_responses()
    parts = [p for m in payload for p in m["content"] if p["type"] == "input_image"]
    assert [p["detail"] for p in parts] == [detail]


def test_a_summary_row_names_the_turns_it_covers() -> None:
    tl = Timeline("s", policy=CompactionPolicy(max_tokens=2_000, keep_recent_turns=1))
    for i in range(10):
        coding_turn(tl, i)
    view = tl.render("sys")
    covered = view.blocks[0].meta["covered_turn_ids"]
    assert covered
    assert f"turns {covered[0]} to {covered[-1]}: " in view.to_html()


def test_usage_free_is_what_the_prompt_leaves_of_the_budget() -> None:
    tl, _ = _page()
    view = tl.render("sys")
    usage = token_breakdown(view)
    assert usage["budget"] == 50_000
    assert usage["free"] == 50_000 - view.tokens


def test_one_token_the_rows_do_not_explain_is_provider_overhead() -> None:
    """A prompt one token over the rows' sum shows a "provider overhead" row (an excess
    of any size, however small), and no row is negative."""
    tl, _ = _page()
    view = tl.render("sys")
    rows = sum(row["tokens"] for row in token_breakdown(view)["types"].values())
    over = attrs.evolve(view, count_tokens=lambda: rows + 1)
    types = token_breakdown(over)["types"]
    assert types[CALIBRATION_ROW]["tokens"] == 1
    assert all(row["tokens"] >= 0 for row in types.values())


def test_a_row_without_a_tool_names_nothing() -> None:
    """A prompt's row has no name before its preview (the default is empty, not text)."""
    _, page = _page()
    row = re.search(r'data-type="user.prompt".*?<span class="what">(.*?)</span></span>', page)
    assert row is not None
    assert row.group(1) == '<span class="line">list the files'


def test_an_anthropic_reply_that_is_no_message_says_so() -> None:
    with pytest.raises(InvalidBlockError, match=r"^expected an SDK Message or its dict form"):
        ModelReply.from_anthropic(42)


class _Inputs(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.inputs: list[dict[str, str | None]] = []
        self.stray = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "input":
            self.inputs.append(dict(attrs))

    def handle_data(self, data: str) -> None:
        self.stray += data


def test_the_turn_field_is_labelled_and_nothing_leaks_as_text() -> None:
    """The toolbar's turn field carries its accessible label; no markup spills into the
    page as text (the browser tests check the same, but mutation runs leave them out)."""
    parser = _Inputs()
    parser.feed(toolbar())
    turn = next(i for i in parser.inputs if i.get("id") == "turn")
    assert turn["aria-label"] == "jump to turn" and turn["autocomplete"] == "off"
    assert "=" not in parser.stray and "autocomplete" not in parser.stray


def test_a_summary_recording_one_tier_names_it_on_its_card() -> None:
    """The compaction card reads a summary's ``tiers`` list, or its single ``tier``."""
    assert _tiers({"tier": "clear"}) == ["tier: clear"]
    assert _tiers({"tiers": [{"tier": "prune", "blocks": 2}, {"tier": "summarize"}]}) == [
        "tier prune: blocks 2",
        "tier summarize",
    ]
    assert _tiers({}) == []


def test_a_result_row_counts_lines_only_past_one() -> None:
    tl = Timeline("r", policy=CompactionPolicy(max_tokens=50_000))
    tl.begin_turn()
    one = tl.append(blocks.tool_call("pwd", {}))
    tl.append(blocks.tool_result(one.call_id or "", "/home/dev"))
    two = tl.append(blocks.tool_call("ls", {"path": "."}))
    tl.append(blocks.tool_result(two.call_id or "", "a.py\nb.py"))
    page = tl.render("sys").to_html()
    assert '<span class="line">/home/dev</span>' in page
    assert '<span class="line">a.py (2 lines)</span>' in page


def test_the_largest_block_fills_its_token_meter() -> None:
    """Token meters are scaled to the largest row of the page: it fills its meter."""
    _, page = _page()
    widths = [float(w) for w in re.findall(r'<i style="width:([0-9.]+)%"></i>', page)]
    assert widths and max(widths) == 100.0 and min(widths) > 0.0


def test_a_plan_row_is_labelled_by_the_last_part_of_its_type() -> None:
    tl = Timeline("k", policy=CompactionPolicy(max_tokens=50_000))
    tl.begin_turn()
    tl.append(blocks.plan("1. read the code"))
    tl.append(blocks.custom("stage.gate", "open"))
    page = tl.render("sys").to_html()
    assert '<span class="kind">plan</span>' in page
    assert '<span class="kind">stage.gate</span>' in page


def test_a_render_records_the_system_prompt_tokens_in_the_state() -> None:
    """The state a snapshot carries holds the last render's system prompt cost (a pin
    checks against it)."""
    tl, _ = _page()
    view = tl.render("You are a careful assistant. " * 20)
    assert view.system_tokens > 0
    assert tl.snapshot().state.last_render.fixed_tokens == view.system_tokens + view.framing_tokens


def test_a_tail_that_is_no_sequence_names_its_type() -> None:
    tl, _ = _page()
    with pytest.raises(
        InvalidBlockError, match=r"^tail must be a list or tuple of blocks, not str$"
    ):
        tl.render("sys", tail="plan")  # type: ignore[arg-type]


def test_shares_of_a_one_token_total() -> None:
    assert percent_shares([1], 1) == [100.0]
    assert percent_shares([0, 0], 0) == [0.0, 0.0]
    assert percent_shares([1, 2, 1], 4) == [25.0, 50.0, 25.0]


def test_a_chat_tool_result_image_by_url_follows_in_a_user_message() -> None:
    """Chat takes an image by URL in a tool's output: it follows the ``tool`` message in
    a user message (Chat's tool messages hold text only)."""
    tl = Timeline("i", policy=CompactionPolicy(max_tokens=50_000))
    tl.begin_turn()
    tl.append(blocks.user_prompt("chart please"))
    call = tl.append(blocks.tool_call("plot", {}))
    url = "https://example.com/chart.png"
    tl.append(blocks.tool_result(call.call_id or "", "done", media="image", url=url))
    messages = tl.render("sys").to_openai()
    assert isinstance(messages, list)
    assert messages[-1]["role"] == "user"
    assert messages[-1]["content"][-1] == {"type": "image_url", "image_url": {"url": url}}


def test_a_long_path_argument_is_cut_in_a_cleared_placeholder() -> None:
    shown = key_arguments({"path": "src/" + "a" * 300 + ".py", "note": "b" * 300})
    assert shown.startswith('path="src/aaa') and shown.endswith('…"')
    assert "note" not in shown


def test_earlier_compactions_in_the_history_are_numbered_in_order() -> None:
    from tests.helpers.html_page import conversation, history, stored_page

    tl, store = conversation(turns=8)
    heads = [e["h"] for e in history(stored_page(tl, store)) if e["k"] == "compaction"]
    assert heads
    assert [h.split(" in turn ")[0] for h in heads] == [
        f"compaction {n}" for n in range(1, len(heads) + 1)
    ]


def test_an_escalated_arender_renders_what_render_does() -> None:
    """The async escalation finishes as the sync one (an unforced finish): the same
    prompt, and the next render compacts nothing more."""
    from tests.helpers.escalation import STEPS, _step, _timeline

    views = []
    for run_async in (False, True):
        tl = _timeline(True)
        tl.begin_turn()
        for step in STEPS[:-1]:
            _step(tl, *step)
            asyncio.run(tl.arender("system")) if run_async else tl.render("system")
        _step(tl, *STEPS[-1])
        view = asyncio.run(tl.arender("system")) if run_async else tl.render("system")
        again = tl.render("system")
        assert again.compaction is None and again.tokens == view.tokens
        views.append((view.tokens, [b.text for b in view.blocks], view.to_anthropic()))
    assert views[0] == views[1]


def test_the_prompt_strip_is_an_image_with_its_label() -> None:
    tl, _ = _page()
    view = tl.render("sys")
    label = (
        "the prompt's blocks in order, "
        f"{len(view.cache_points)} cache checkpoint{'' if len(view.cache_points) == 1 else 's'}"
    )
    assert f'<div class="strip" role="img" aria-label="{label} (dashed)">' in (view.to_html())


def test_a_tool_result_referencing_an_image_costs_the_image() -> None:
    """A result holding an image by URL costs its text plus the image's fixed estimate."""
    costs = []
    refs: list[dict[str, Any]] = [{}, {"media": "image", "url": "https://example.com/c.png"}]
    for meta in refs:
        tl = Timeline("m", policy=CompactionPolicy(max_tokens=50_000))
        tl.begin_turn()
        call = tl.append(blocks.tool_call("plot", {}))
        tl.append(blocks.tool_result(call.call_id or "", "done", **meta))
        view = tl.render("")
        costs.append(view.block_tokens[-1])
    assert costs[1] >= costs[0] + REFERENCE_TOKENS["image"]


def test_a_tail_block_gets_a_default_path_or_keeps_its_own() -> None:
    tl, _ = _page()
    plan = blocks.plan("1. check the files")
    named = msgspec.structs.replace(blocks.plan("2. write"), path="ar:t1.react.plan.v2")
    view = tl.render("sys", tail=[plan, named])
    assert [b.path for b in view.blocks[-2:]] == ["ar:t1.react.plan", "ar:t1.react.plan.v2"]


def test_a_compaction_card_of_a_summary_without_covered_turns() -> None:
    """A summary whose meta names no covered turns (one written by hand, or by an older
    version) still gets its card: it summarized "nothing" there."""
    summary = msgspec.structs.replace(blocks.summary("earlier work"), id="s1", path="su:t1.s")
    card = compaction_html(Item(summary, 10, ()), 1, None, None)
    assert "nothing" in card


def test_usage_category_shares_are_of_the_budget() -> None:
    tl, _ = _page()
    usage = token_breakdown(tl.render("sys"))
    for row in usage["categories"].values():
        assert row["share"] == round(100 * row["tokens"] / 50_000, 1)


def test_the_history_holds_one_entry_per_earlier_turn() -> None:
    from tests.helpers.html_page import conversation, history, stored_page

    tl, store = conversation(turns=8)
    entries = [e for e in history(stored_page(tl, store)) if e["k"] == "turn"]
    turns = [e["id"] for e in entries]
    assert turns and len(turns) == len(set(turns))
    assert all(e["h"].startswith(f"turn {e['id']} · ") for e in entries)


def test_a_render_truncating_to_fit_never_cuts_a_pinned_block() -> None:
    """Over the budget with nothing left to compact, the render truncates the largest
    block it may: a pinned block, even a larger one, stays whole."""
    policy = CompactionPolicy(max_tokens=1_000)
    tl = Timeline("t", policy=policy, token_counter=HeuristicCounter())
    tl.begin_turn()
    rule = tl.append(blocks.user_prompt("rule " * 550))
    tl.pin([rule.path])
    call = tl.append(blocks.tool_call("read_log", {"path": "app.log"}))
    tl.append(blocks.tool_result(call.call_id or "", "log line\n" * 220))
    view = tl.render("sys")
    assert view.truncated_paths and rule.path not in view.truncated_paths
    assert next(b for b in view.blocks if b.id == rule.id).text == rule.text


def test_a_stream_of_one_content_block_gets_its_checkpoint() -> None:
    """The first block can be the last content block (a restored or compacted stream
    starting on a summary): it takes the checkpoint."""
    only = msgspec.structs.replace(blocks.summary("earlier work"), id="s1")
    points, state = plan_checkpoints(
        (only,), has_system=True, version=3, state=CacheState(), anchor=None
    )
    assert points == (0,)
    assert (state.tail_id, state.tail_index, state.version) == ("s1", 0, 3)


def test_the_document_payload_skips_thinking_and_keeps_what_follows() -> None:
    tl = Timeline("d", policy=CompactionPolicy(max_tokens=50_000))
    tl.begin_turn()
    tl.append(blocks.user_prompt("why?"))
    tl.append(anthropic_thinking({"type": "thinking", "thinking": "hmm", "signature": "s"}))
    tl.append(blocks.assistant_completion("Because the cache was cold."))
    payload = tl.render("sys").to_document()
    texts = [part.get("text", "") for part in payload["messages"][0]["content"]]
    assert any("Because the cache was cold." in t for t in texts)
    assert not any("hmm" in t for t in texts)


def test_the_live_window_opens_and_closes_every_section() -> None:
    """The live window starting on a summary: its card's section is the first one
    opened, and every section opened is closed once."""
    tl = Timeline("s", policy=CompactionPolicy(max_tokens=2_000, keep_recent_turns=1))
    for i in range(10):
        coding_turn(tl, i)
    view = tl.render("sys")
    assert view.blocks[0].type == "conv.range.summary"
    page = view.to_html()
    assert page.count("<section") == page.count("</section>")


def test_only_a_turn_header_row_has_the_header_class() -> None:
    _, page = _page()
    rows = re.findall(r'<details class="([^"]*)"[^>]*data-type="([^"]+)"', page)
    assert {t for c, t in rows if "header" in c.split()} == {"turn.header"}
