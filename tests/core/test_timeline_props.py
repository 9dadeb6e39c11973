"""Property tests of the timeline's append / hide / unhide / snapshot / restore invariants."""

from __future__ import annotations

import contextlib

from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from tests.helpers import open_samples
from tests.helpers.provider_rules import anthropic_errors, chat_errors, responses_errors
from timeline import (
    BudgetError,
    CompactionPolicy,
    EmptyPromptError,
    HeuristicCounter,
    InvalidBlockError,
    Timeline,
    TimelineSnapshot,
    UnknownPathError,
    blocks,
    provider_call_id,
)
from timeline._model.block_types import block_type
from timeline._model.call_ids import given_call_id
from timeline._render.context import RenderedContext


class TimelineMachine(RuleBasedStateMachine):
    """Random operations; the timeline must stay consistent after each."""

    def __init__(self) -> None:
        super().__init__()
        self.tl = Timeline("p", token_counter=HeuristicCounter())
        self.appended: dict[str, str] = {}  # id -> original text
        self.snap: TimelineSnapshot | None = None
        self.open_calls: list[str] = []
        self.items: dict[str, bytes | None] = {}  # opaque block id -> its exact item

    @rule(text=st.text(max_size=40))
    def turn(self, text: str) -> None:
        self.tl.begin_turn()
        b = self.tl.append(blocks.user_prompt(text))
        self.appended[b.id] = text

    @precondition(lambda self: self.tl.current_turn_id)
    @rule(
        name=st.sampled_from(["read_file", "bash", *open_samples.HOSTILE_TOOL_NAMES]),
        n=st.integers(0, 3),
        data=st.data(),
    )
    def call(self, name: str, n: int, data: st.DataObject) -> None:
        """A call with a generated id, an id a model chose (``call_0``, the library's
        next generated one), an id an earlier call was given (reused) or the safe form of
        one (a literal collision after mapping)."""
        given = [given_call_id(b) for b in self.tl.blocks if b.type == "react.tool.call"]
        seq = self.tl.snapshot().state.block_seq
        choices = [None, "call_0", f"call_b{seq + 1}", f"call_b{seq + 2}", "a.b", "a:b"]
        choices += given + [provider_call_id(g) for g in given]
        call_id = data.draw(st.sampled_from(choices))
        b = self.tl.append(blocks.tool_call(name, {"n": n}, call_id=call_id))
        self.open_calls.append(b.call_id or "")
        if call_id is not None and data.draw(st.booleans()):  # answered by the id it was given
            r = self.tl.append(blocks.tool_result(call_id, f"by {call_id}"))
            named = {
                c.call_id
                for c in self.tl.blocks
                if c.type == "react.tool.call" and call_id in (c.call_id, given_call_id(c))
            }
            assert r.call_id in named  # a call that id names (the open one, else the latest)
            self.appended[r.id] = r.text

    @precondition(lambda self: self.open_calls)
    @rule(text=st.text(max_size=40), data=st.data())
    def result(self, text: str, data: st.DataObject) -> None:
        call_id = data.draw(st.sampled_from(self.open_calls))
        b = self.tl.append(blocks.tool_result(call_id, text))
        self.appended[b.id] = text

    @precondition(lambda self: self.tl.current_turn_id)
    @rule(kind=st.integers(0, open_samples.OPAQUE_KINDS - 1), n=st.integers(0, 99))
    def provider_items(self, kind: int, n: int) -> None:
        """A provider's own items (server tool use and result, compaction...), kept exactly."""
        for b in self.tl.extend(open_samples.opaque(kind, n)):
            self.appended[b.id] = b.text
            self.items[b.id] = b.data

    @precondition(lambda self: self.tl.current_turn_id)
    @rule(kind=st.integers(0, open_samples.MEDIA_KINDS - 1), n=st.integers(0, 99))
    def referenced_media(self, kind: int, n: int) -> None:
        b = self.tl.append(open_samples.media(kind, n))
        self.appended[b.id] = b.text

    @invariant()
    def provider_items_unchanged(self) -> None:
        """Whatever is hidden, restored or rendered, an opaque block keeps its exact item,
        and every payload stays valid."""
        for b in self.tl.blocks:
            if b.id in self.items:
                assert b.data == self.items[b.id]
        view = self.tl.render("")
        for fmt, build, errors in (
            ("anthropic", view.to_anthropic, anthropic_errors),
            ("openai", view.to_openai, chat_errors),
            ("responses", view.to_openai_responses, responses_errors),
        ):
            with contextlib.suppress(EmptyPromptError):  # nothing to send: a typed error
                assert not errors(build()), fmt
        with contextlib.suppress(EmptyPromptError):
            _pairs_whole(view)

    @precondition(lambda self: self.tl.current_turn_id)
    @rule(kind=st.integers(0, 1), n=st.integers(0, 99), budget=st.integers(600, 3_000))
    def pair_over_budget(self, kind: int, n: int, budget: int) -> None:
        """An opaque call/result pair larger than a budget, rendered (normal and forced)
        by a copy under that budget: every payload valid, the pair sent whole or as text."""
        for b in self.tl.extend(open_samples.big_pair(kind, n, 20_000)):
            self.appended[b.id] = b.text
            self.items[b.id] = b.data
        small = Timeline("p", token_counter=HeuristicCounter())
        small.restore(self.tl.snapshot())
        small.policy = CompactionPolicy(max_tokens=budget)
        for force in (False, True):
            with contextlib.suppress(BudgetError, EmptyPromptError):
                _pairs_whole(small.render("", force_sanitize=force))

    @rule(call_id=st.text(min_size=1, max_size=8))
    def orphan(self, call_id: str) -> None:
        if call_id in self.open_calls or any(
            call_id in (b.call_id, given_call_id(b))
            for b in self.tl.blocks
            if b.type == "react.tool.call"
        ):
            return
        before = self.tl.snapshot()
        with contextlib.suppress(InvalidBlockError):
            self.tl.append(blocks.tool_result(call_id, "x"))
        assert before == self.tl.snapshot()

    @precondition(lambda self: self.tl.blocks)
    @rule(data=st.data(), replacement=st.none() | st.text(max_size=10))
    def hide(self, data: st.DataObject, replacement: str | None) -> None:
        path = data.draw(st.sampled_from([b.path for b in self.tl.blocks]))
        self.tl.hide([path], replacement)

    @precondition(lambda self: self.tl.blocks)
    @rule(data=st.data())
    def unhide(self, data: st.DataObject) -> None:
        path = data.draw(st.sampled_from([b.path for b in self.tl.blocks]))
        self.tl.unhide([path])

    @rule(path=st.text(max_size=5))
    def hide_unknown(self, path: str) -> None:
        if any(b.path == path for b in self.tl.blocks):
            return
        before = self.tl.snapshot()
        with contextlib.suppress(UnknownPathError):
            self.tl.hide([path], "x")
        assert before == self.tl.snapshot()

    @rule()
    def take_snapshot(self) -> None:
        self.snap = self.tl.snapshot()

    @precondition(lambda self: self.snap is not None)
    @rule()
    def restore(self) -> None:
        assert self.snap is not None
        self.tl.restore(self.snap)
        assert self.snap.blocks == list(self.tl.blocks)
        alive = {b.call_id for b in self.tl.blocks if b.type == "react.tool.call"}
        self.open_calls = [c for c in self.open_calls if c in alive]

    @invariant()
    def ids_unique_and_text_unchanged(self) -> None:
        ids = [b.id for b in self.tl.blocks]
        assert len(ids) == len(set(ids))
        for b in self.tl.blocks:
            if b.id in self.appended:
                assert self.appended[b.id] == b.text  # hide never changes stored text

    @invariant()
    def results_follow_their_calls(self) -> None:
        seen: set[str | None] = set()
        for b in self.tl.blocks:
            kind = block_type(b.type).render
            if kind == "tool_call":
                seen.add(b.call_id)
            elif kind == "tool_result":
                assert b.call_id in seen

    @invariant()
    def render_matches_hidden_state(self) -> None:
        view = self.tl.render("")
        shown_paths = [b.path for b in view.blocks if b.hidden]
        for b in self.tl.blocks:
            if not b.hidden:
                assert any(v.id == b.id and v.text == b.text for v in view.blocks)
        # a hidden non-tool block appears at most once per path
        for path in set(shown_paths):
            kinds = {block_type(b.type).render for b in view.blocks if b.path == path}
            if kinds <= {"text", "attachment"}:
                assert shown_paths.count(path) == 1


def _pairs_whole(view: RenderedContext) -> None:
    """Every payload is valid, its call ids unique, and an opaque pair's items are sent
    both or neither (a server tool use without its result, or a computer call without
    its output, is what a provider rejects)."""
    anthropic = view.to_anthropic()
    chat, responses = view.to_openai(), view.to_openai_responses()
    assert not anthropic_errors(anthropic)
    assert not chat_errors(chat)
    assert not responses_errors(responses)
    parts = [
        p for m in anthropic["messages"] if isinstance(m["content"], list) for p in m["content"]
    ]
    ids = [p["id"] for p in parts if p["type"] == "tool_use"]
    ids_chat = [c["id"] for m in chat for c in m.get("tool_calls") or []]
    ids_resp = [i["call_id"] for i in responses if i.get("type") == "function_call"]
    for sent in (ids, ids_chat, ids_resp):
        assert len(sent) == len(set(sent)), sent
    kinds = [p["type"] for p in parts]
    assert ("server_tool_use" in kinds) == ("web_search_tool_result" in kinds), kinds
    types = [str(i.get("type")) for i in responses]
    assert ("computer_call" in types) == ("computer_call_output" in types), types


TestTimelineMachine = TimelineMachine.TestCase
TestTimelineMachine.settings = settings(max_examples=60, stateful_step_count=30, deadline=None)


@given(st.lists(st.text(max_size=30), min_size=1, max_size=20))
def test_snapshot_restore_round_trip(texts: list[str]) -> None:
    """restore(snapshot()) gives back the same blocks and the same render."""
    tl = Timeline("r", token_counter=HeuristicCounter())
    tl.begin_turn()
    for t in texts:
        tl.append(blocks.user_prompt(t))
    snap = tl.snapshot()
    before = tl.render("s").to_document()
    tl.clear()
    assert tl.blocks == ()
    tl.restore(snap)
    assert before == tl.render("s").to_document()
