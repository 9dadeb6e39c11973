"""Differential harness (#23): the incremental engine against the reference, step by step.

A hypothesis state machine drives random sequences of every operation that changes a
timeline or reads from it through ``Timeline(incremental=True)`` and
``Timeline(incremental=False)`` (see ``tests/helpers/differential.py``) and compares every output:
blocks, tokens, stats, errors and all five payloads. Any difference is a bug in a fast
path (token memo and upper bounds, the kept visible stream and its summary splice, the
payload cache). ``docs/testing.md`` says how to run it longer.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from tests.helpers import open_samples
from tests.helpers.differential import EnginePair, assert_same_stats, observe, stats_data
from tests.helpers.differential_setup import Setup, Shown
from tests.helpers.samples import PNG_1x1
from timeline import (
    Block,
    ClearingPolicy,
    CompactionPolicy,
    NativeCompaction,
    RecallPolicy,
    TimelineSnapshot,
    blocks,
    tool_specs,
)
from timeline._model.block import CONV_RANGE_SUMMARY, PLAN_LATEST
from timeline._model.block_types import block_type
from timeline._model.call_ids import given_call_id
from timeline._model.names import provider_call_id
from timeline._model.reasoning import anthropic_thinking, openai_reasoning

HUGE = "lorem ipsum dolor sit amet, " * 720  # ~20,000 characters
PDF = b"%PDF-1.4\n1 0 obj << /Type /Page >> endobj\n"
SYSTEMS = ("", "You are a careful assistant.", "Be brief. " * 40, "S " * 3000)


def long_text(*choices: str) -> st.SearchStrategy[str]:
    """One of ``choices``, drawn by index (their text stays out of the strategy's repr,
    which --hypothesis-show-statistics prints)."""
    return st.integers(0, len(choices) - 1).map(choices.__getitem__)


raw_texts = st.one_of(
    st.sampled_from(("Fix the failing test in a.py", "", "  \n", "done. ", "ünïcode ✓ 日本語")),
    st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), max_size=60),
    long_text("x " * 400, HUGE),
)
texts = raw_texts.map(Shown)
systems = long_text(*SYSTEMS).map(Shown)
SCHEMA = {"type": "object", "properties": {"path": {"type": "string", "description": "a path"}}}
TOOL_SETS: tuple[Any, ...] = (
    (),
    [{"name": "read_file", "description": "Read a file.", "input_schema": SCHEMA}],
    [
        {"name": f"tool_{i}", "description": "Does a thing. " * 60, "input_schema": SCHEMA}
        for i in range(4)
    ],
    tool_specs([{"name": "bash", "parameters": SCHEMA}, {"name": "grep"}]),
    [{"name": "not a name"}],
)
"""What a render sends: no tools, one, several large ones (over a small budget's share),
the same checked specs each time, or a definition both engines must refuse alike."""
tool_sets = long_text(*TOOL_SETS)
tool_names = st.sampled_from(
    (
        "read_file",
        "write_file",
        "bash",
        "web-search",
        "functions.fs_read",
        "my tool",
        *open_samples.HOSTILE_TOOL_NAMES,
    )
)


@st.composite
def clearings(draw: st.DrawFn) -> ClearingPolicy:
    """A clearing tier (#26): every setting drawn, small bars so that it runs."""
    return ClearingPolicy(
        keep_tool_results=draw(st.integers(0, 3)),
        clear_at_least_tokens=draw(st.none() | st.sampled_from((0, 200, 2_000))),
        exclude_tools=draw(st.sampled_from(((), ("bash",), ("read_file", "my tool")))),
        clear_tool_inputs=draw(st.booleans()),
        dedupe_reads=draw(st.booleans()),
        clear_thinking=draw(st.booleans()),
        summary_keep_ratio=draw(st.none() | st.sampled_from((0.3, 0.5))),
        offload_over_tokens=draw(st.none() | st.sampled_from((50, 400, 3_000))),
    )


@st.composite
def recalls(draw: st.DrawFn) -> RecallPolicy:
    """Recall of compacted blocks: room from a sliver to a third of the budget, few
    blocks or many, long ones whole or by their lines."""
    return RecallPolicy(
        share=draw(st.sampled_from((0.05, 0.1, 0.3))),
        max_blocks=draw(st.integers(1, 8)),
        block_max_tokens=draw(st.none() | st.sampled_from((40, 400))),
    )


def native_compaction(provider: Any) -> NativeCompaction:
    return NativeCompaction(provider=provider)


@st.composite
def setups(draw: st.DrawFn) -> Setup:
    """Small budgets so compaction, truncation and the forced ladder all happen."""
    ttl = draw(st.none() | st.sampled_from((60.0, 600.0)))
    policy = CompactionPolicy(
        max_tokens=draw(st.integers(1_000, 8_000)),
        max_blocks=draw(st.none() | st.integers(8, 40)),
        keep_recent_turns=draw(st.integers(0, 3)),
        cache_ttl_seconds=ttl,
        enabled=draw(st.booleans()) or draw(st.booleans()),  # mostly enabled
        clearing=draw(st.none() | clearings()),
        recall=draw(st.none() | recalls()),
        native=draw(st.none() | st.sampled_from(("anthropic", "responses")).map(native_compaction)),
        prepare_at=draw(st.none() | st.sampled_from((0.5, 0.8))),
    )
    return Setup(
        policy=policy,
        counter=draw(st.sampled_from(("heuristic", "tiktoken", "count_only"))),
        summarizer=draw(st.sampled_from(("inventory", "truncate", "prose", "cache_warm"))),
        prefixed_ids=draw(st.booleans()),
        estimate_every_step=draw(st.booleans()),
    )


def reasoning_block(kind: int, n: int) -> Block:
    if kind == 0:
        item = {"type": "thinking", "thinking": f"think {n}", "signature": "c2ln"}
        return anthropic_thinking(item)
    if kind == 1:
        return anthropic_thinking({"type": "redacted_thinking", "data": "ZW5j"})
    return openai_reasoning({"type": "reasoning", "id": f"rs_{n}", "encrypted_content": "gAAA"})


@st.composite
def raw_plain_blocks(draw: st.DrawFn) -> Block:
    """A block that needs no earlier block (everything but tool results)."""
    kinds = ("prompt", "answer", "note", "plan", "custom", "file", "think", "item", "ref")
    kind = draw(st.sampled_from((*kinds, "compaction")))
    text = draw(raw_texts)
    if kind == "prompt":
        return blocks.user_prompt(text)
    if kind == "answer":
        return blocks.assistant_completion(text)
    if kind == "note":
        return blocks.note(text)
    if kind == "plan":
        return blocks.plan(text or "1. read 2. edit")
    if kind == "custom":
        return blocks.custom(draw(st.sampled_from(("stage.gate", "x.memo"))), text, author="user")
    if kind == "think":
        return reasoning_block(draw(st.integers(0, 2)), draw(st.integers(0, 99)))
    if kind == "item":  # a provider's own item kept exactly: web search, compaction, audio,
        sample = draw(st.sampled_from((1, 4, 5, 6, 7)))  # an Anthropic system message
        return open_samples.opaque(sample, draw(st.integers(0, 99)))[0]
    if kind == "ref":  # an image or document by URL or file id
        return open_samples.media(draw(st.integers(0, open_samples.MEDIA_KINDS - 1)), len(text))
    if kind == "compaction":  # a provider's compaction (#26 item 5: native mode records it)
        if draw(st.booleans()):
            return blocks.anthropic_compaction({"type": "compaction", "content": text or None})
        return blocks.openai_compaction({"type": "compaction", "encrypted_content": "gAAA"})
    mime, data = draw(
        st.sampled_from((("image/png", PNG_1x1), ("application/pdf", PDF), ("text/csv", None)))
    )
    name = draw(st.sampled_from(("a.png", "report", "data.csv")))
    return blocks.user_attachment(name=name, mime=mime, data=data, text=text or "a,b\n1,2")


plain_blocks = raw_plain_blocks().map(Shown)


def tool_calls(draw: st.DrawFn, n: int, used: Sequence[str] = ()) -> list[Block]:
    """``n`` calls: generated ids, ids of other providers' shapes, ids a model reuses
    (``call_0`` every turn, one an earlier call was given, the safe form of one) and ids
    the library would generate itself (``call_b7``)."""
    patterns = ("toolu_01Ab{}", "functions.fs_read:{}", "call {}", "call_0", "call_b{}")
    reused = (*used, *(provider_call_id(u) for u in used))
    ids = st.none() | st.sampled_from(patterns) | st.sampled_from(reused or ("call_0",))
    out = []
    for i in range(n):
        pattern = draw(ids)
        number = draw(st.integers(0, 60) if pattern == "call_b{}" else st.integers(0, 10**6))
        call_id = None if pattern is None else pattern.format(number + i)
        params = {"i": i, "path": draw(st.sampled_from(("a.py", "b.py", "c.py")))}
        out.append(blocks.tool_call(draw(tool_names), params, call_id=call_id))
    return out


def result_for(draw: st.DrawFn, call: Block) -> Block:
    """A result naming the call by its id, or now and then by the id it was given."""
    roll = draw(st.integers(0, 9))
    name = given_call_id(call) if draw(st.integers(0, 3)) == 0 else call.call_id
    return blocks.tool_result(
        name or "",
        HUGE if roll == 0 else draw(texts).value,
        tool_id=call.tool_id,
        is_error=roll == 1,
        mime="image/png" if roll == 2 else "text/plain",
        data=PNG_1x1 if roll == 2 else None,
    )


class DifferentialMachine(RuleBasedStateMachine):
    """Every rule runs on both engines; after every rule both must look the same."""

    pair: EnginePair

    def __init__(self) -> None:
        super().__init__()
        self.snaps: list[tuple[TimelineSnapshot, TimelineSnapshot]] = []

    @initialize(setup=setups(), prompt=texts)
    def start(self, setup: Setup, prompt: Shown) -> None:
        self.pair = EnginePair(setup)
        self.begin_turn(prompt)

    # -- helpers -------------------------------------------------------------------------

    @property
    def tl(self) -> Any:
        return self.pair.inc

    def calls(self) -> list[Block]:
        return [b for b in self.tl.blocks if block_type(b.type).render == "tool_call"]

    def open_calls(self) -> list[Block]:
        answered = {b.call_id for b in self.tl.blocks if block_type(b.type).render == "tool_result"}
        return [b for b in self.calls() if b.call_id not in answered]

    def path(self, data: st.DataObject) -> str:
        """A path in memory, now and then the plan alias or an unknown path."""
        paths = [b.path for b in self.tl.blocks]
        if not paths or data.draw(st.integers(0, 9)) == 0:
            return data.draw(st.sampled_from((PLAN_LATEST, "ar:nowhere")))
        return data.draw(st.sampled_from(paths))

    def tick(self) -> None:
        self.pair.advance(1)

    # -- appending -----------------------------------------------------------------------

    @rule(prompt=st.none() | texts)
    def begin_turn(self, prompt: Shown | None) -> None:
        """A new turn, usually opened by a user prompt."""
        self.tick()
        self.pair.atomic(lambda tl: tl.begin_turn())
        if prompt is not None:
            block = blocks.user_prompt(prompt.value)
            self.pair.atomic(lambda tl: tl.append(block))

    @rule(
        batch=st.lists(plain_blocks, min_size=1, max_size=4),
        pin=st.sampled_from((False, False, False, True)),
        data=st.data(),
    )
    def append(self, batch: list[Shown], pin: bool, data: st.DataObject) -> None:
        """Blocks one by one (the last one perhaps pinned), then perhaps a render."""
        for i, drawn in enumerate(batch):
            self.tick()
            keep = pin and i == len(batch) - 1
            self.pair.atomic(lambda tl, b=drawn.value, p=keep: tl.append(b, pin=p))
        if data.draw(st.booleans()):
            self.render_now(data)

    @rule(data=st.data(), n=st.integers(1, 3), answered=st.integers(0, 3), think=st.booleans())
    def tool_exchange(self, data: st.DataObject, n: int, answered: int, think: bool) -> None:
        """Parallel calls (perhaps after a reasoning block), then results for some."""
        self.tick()
        if think:
            thought = reasoning_block(data.draw(st.integers(0, 2)), n)
            self.pair.atomic(lambda tl: tl.append(thought))
        used = [given_call_id(c) for c in self.calls()]
        calls = [
            self.pair.atomic(lambda tl, c=c: tl.append(c)).value
            for c in tool_calls(data.draw, n, used)
        ]
        for call in calls[:answered]:
            if call is not None:
                result = result_for(data.draw, call)
                self.pair.atomic(lambda tl, r=result: tl.append(r))
        if data.draw(st.booleans()):
            self.render_now(data)

    @precondition(lambda self: self.calls())
    @rule(data=st.data())
    def tool_result(self, data: st.DataObject) -> None:
        """A result for a waiting call (or a second one for an answered call)."""
        self.tick()
        call = data.draw(st.sampled_from(self.open_calls() or self.calls()))
        result = result_for(data.draw, call)
        self.pair.atomic(lambda tl: tl.append(result))

    @rule(data=st.data(), kind=st.sampled_from(("orphan", "duplicate", "bad_id")))
    def append_invalid(self, data: st.DataObject, kind: str) -> None:
        """A refused append: same error from both, nothing changed."""
        if kind == "orphan":
            block = blocks.tool_result("no-such-call", "x")
        elif kind == "duplicate" and self.tl.blocks:
            taken = data.draw(st.sampled_from([b.id for b in self.tl.blocks]))
            block = msgspec.structs.replace(blocks.note("dup"), id=taken)
        else:
            block = msgspec.structs.replace(blocks.note("bad"), text=5)
        self.pair.atomic(lambda tl: tl.append(block))

    @rule(data=st.data(), fail=st.sampled_from((False, False, False, True)))
    def extend(self, data: st.DataObject, fail: bool) -> None:
        """Several blocks at once (a call and its result among them); a failing extend
        (its last block an orphan result) must change nothing."""
        self.tick()
        batch = [d.value for d in data.draw(st.lists(plain_blocks, max_size=3))]
        if data.draw(st.booleans()):
            (call,) = tool_calls(data.draw, 1)
            call = msgspec.structs.replace(call, call_id=call.call_id or f"x{len(batch)}")
            batch += [call, result_for(data.draw, call)]
        if data.draw(st.booleans()):  # a server tool use and its result, a computer call...
            kind = data.draw(st.sampled_from((0, 2, 3)))
            batch += open_samples.opaque(kind, data.draw(st.integers(0, 99)))
        if data.draw(st.integers(0, 3)) == 0:  # such a pair larger than the budget
            number = data.draw(st.integers(0, 99))
            batch += open_samples.big_pair(data.draw(st.integers(0, 1)), number, 20_000)
        if fail:
            batch.append(blocks.tool_result("no-such-call", "x"))
        self.pair.atomic(lambda tl: tl.extend(batch))

    # -- hiding, pinning -----------------------------------------------------------------

    @rule(data=st.data(), replacement=st.none() | long_text("", "[hidden]", HUGE).map(Shown))
    def hide(self, data: st.DataObject, replacement: Shown | None) -> None:
        path = self.path(data)
        text = None if replacement is None else replacement.value
        self.pair.atomic(lambda tl: tl.hide([path], text))

    @rule(data=st.data())
    def unhide(self, data: st.DataObject) -> None:
        path = self.path(data)
        self.pair.atomic(lambda tl: tl.unhide([path]))

    @rule(data=st.data())
    def pin(self, data: st.DataObject) -> None:
        path = self.path(data)
        self.pair.atomic(lambda tl: tl.pin([path]), known="partial_pin")

    @rule(data=st.data())
    def unpin(self, data: st.DataObject) -> None:
        path = self.path(data)
        self.pair.atomic(lambda tl: tl.unpin([path]))

    # -- snapshots -----------------------------------------------------------------------

    @rule()
    def take_snapshot(self) -> None:
        self.snaps.append(self.pair.snapshots())

    @precondition(lambda self: self.snaps)
    @rule(data=st.data(), edit=st.none() | st.sampled_from(("huge", "short")))
    def restore(self, data: st.DataObject, edit: str | None) -> None:
        """Restore an earlier snapshot, perhaps with one block's text edited (same id)."""
        snaps = self.snaps[data.draw(st.integers(0, len(self.snaps) - 1))]
        editable = [i for i, b in enumerate(snaps[0].blocks) if b.type != CONV_RANGE_SUMMARY]
        if edit is not None and editable:
            i = data.draw(st.sampled_from(editable))
            text = HUGE if edit == "huge" else "short"
            snaps = tuple(
                msgspec.structs.replace(
                    s, blocks=[*s.blocks[:i], edited(s.blocks[i], text), *s.blocks[i + 1 :]]
                )
                for s in snaps
            )
        self.pair.atomic(lambda tl: tl.restore(snaps[0] if tl is self.pair.inc else snaps[1]))

    @rule(then=st.none() | texts, really=st.integers(0, 3))
    def clear(self, then: Shown | None, really: int) -> None:
        """Drop everything (now and then: each step is a chance to grow the timeline),
        usually starting over with a new turn."""
        if really == 0:
            self.pair.atomic(lambda tl: tl.clear())
            if then is not None:
                self.begin_turn(then)

    # -- rendering and compaction --------------------------------------------------------

    @rule(
        system=systems,
        force=st.booleans(),
        tail=st.lists(plain_blocks, max_size=2),
        tools=tool_sets,
        data=st.data(),
    )
    def render(
        self, system: Shown, force: bool, tail: list[Shown], tools: Any, data: st.DataObject
    ) -> None:
        """Render both; read some payloads now (in a drawn order), perhaps the counts."""
        self.render_now(data, system.value, force, [d.value for d in tail], tools)

    def render_now(
        self,
        data: st.DataObject,
        system: str = SYSTEMS[1],
        force: bool = False,
        tail: Any = (),
        tools: Any = (),
    ) -> None:
        pair = self.pair.render(system, force, tail, tools)
        if pair is not None:
            formats = data.draw(st.permutations(pair.unread))
            now = data.draw(st.integers(0, len(formats)))
            self.pair.read(pair, formats[:now], counts=data.draw(st.booleans()))

    @precondition(lambda self: self.pair.views)
    @rule(data=st.data())
    def read_earlier_render(self, data: st.DataObject) -> None:
        """Read what is still unread of an earlier render, after the timeline moved on."""
        pair = data.draw(st.sampled_from(self.pair.views))
        formats = data.draw(st.lists(st.sampled_from(pair.unread or ["text"]), unique=True))
        self.pair.read(pair, formats, counts=data.draw(st.booleans()))

    @rule(system=systems, tail=st.lists(plain_blocks, max_size=2), tools=tool_sets)
    def estimate(self, system: Shown, tail: list[Shown], tools: Any) -> None:
        blocks_ = [d.value for d in tail]
        self.pair.same(lambda tl: tl.estimate(system.value, blocks_, tools=tools))

    @precondition(lambda self: self.tl.blocks)
    @rule(data=st.data())
    def block_tokens(self, data: st.DataObject) -> None:
        i = data.draw(st.integers(0, len(self.tl.blocks) - 1))
        self.pair.same(lambda tl: tl.block_tokens(tl.blocks[i]))

    @rule(
        system=systems,
        keep=st.none() | st.integers(50, 2_000),
        force=st.booleans(),
        tools=tool_sets,
    )
    def compact(self, system: Shown, keep: int | None, force: bool, tools: Any) -> None:
        """Manual compaction (``force``) or the same check a render runs first."""
        a, b = self.pair.both(
            lambda tl: stats_data(
                tl.compact(system.value, tools=tools, force=force, keep_recent_tokens=keep)
            )
        )
        assert_same_stats(a.value, b.value)

    @rule(system=systems, keep=st.none() | st.integers(50, 2_000), force=st.booleans())
    def dry_run(self, system: Shown, keep: int | None, force: bool) -> None:
        """A dry run: the same preview from both engines, and nothing they show changed
        (the engine without prepare_at may preview another cut: not compared)."""
        before = observe(self.pair.inc), observe(self.pair.ref)
        a, b = self.pair.both(
            lambda tl: tl.compact(
                system.value, force=force, keep_recent_tokens=keep, dry_run=True
            ).as_dict()
        )
        assert a.value == b.value
        assert (observe(self.pair.inc), observe(self.pair.ref)) == before

    @rule(prompt_tokens=st.integers(0, 12_000))
    def record_usage(self, prompt_tokens: int) -> None:
        self.pair.atomic(lambda tl: tl.record_usage(prompt_tokens=prompt_tokens))

    @rule(seconds=st.sampled_from((1, 59, 61, 599, 601, 3_600)))
    def wait(self, seconds: int) -> None:
        """Time passes (cache-TTL pruning hides tool results older than the TTL)."""
        self.pair.advance(seconds)

    # -- persistence ---------------------------------------------------------------------

    @rule()
    def persist(self) -> None:
        """Persist (which evicts the blocks before the latest summary) to each own store."""
        self.pair.persist()

    @precondition(lambda self: self.pair.persisted)
    @rule(persist_first=st.integers(0, 3))
    def load(self, persist_first: int) -> None:
        """Load back what was persisted: usually just now, now and then an older window
        (the timeline goes back to it)."""
        if persist_first:
            self.pair.persist()
        self.pair.load()

    # -- after every rule ----------------------------------------------------------------

    @invariant()
    def engines_agree(self) -> None:
        if hasattr(self, "pair"):
            self.pair.check()

    def teardown(self) -> None:
        if hasattr(self, "pair"):
            self.pair.read_all()


def edited(block: Block, text: str) -> Block:
    """``block`` with another text (a tool call keeps valid JSON params)."""
    if block_type(block.type).render == "tool_call":
        text = blocks.canonical_json({"edited": text})
    return msgspec.structs.replace(block, text=text)


TestDifferential = pytest.mark.slow(DifferentialMachine.TestCase)
TestDifferential.settings = settings(
    max_examples=200,
    stateful_step_count=50,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


class QuickDifferentialMachine(DifferentialMachine):
    """The same machine, for the edit loop (``pytest -m "not slow"``): a tenth of the
    cases, so every fast path is still compared with its reference on every run."""


TestDifferentialQuick = QuickDifferentialMachine.TestCase
TestDifferentialQuick.settings = settings(TestDifferential.settings, max_examples=20)


@st.composite
def prepared_setups(draw: st.DrawFn) -> Setup:
    """A summary prepared ahead of the trigger (``prepare_at``) with a summarizer that
    calls "a model", budgets that a few small turns fill."""
    policy = CompactionPolicy(
        max_tokens=draw(st.integers(1_000, 3_000)),
        keep_recent_turns=draw(st.integers(0, 2)),
        clearing=draw(st.none() | clearings()),
        prepare_at=draw(st.sampled_from((0.5, 0.7, 0.8, 0.95))),
    )
    return Setup(
        policy=policy,
        counter=draw(st.sampled_from(("heuristic", "tiktoken", "count_only"))),
        summarizer=draw(st.sampled_from(("truncate", "prose", "cache_warm"))),
        estimate_every_step=draw(st.booleans()),
    )


class PreparedMachine(DifferentialMachine):
    """The differential machine with ``prepare_at`` always on and a rule that grows the
    conversation in small steps, so that summaries are prepared, applied, outgrown and
    made again (``plain``, the engine without ``prepare_at``, agrees until one is)."""

    @initialize(setup=prepared_setups(), prompt=texts)
    def start(self, setup: Setup, prompt: Shown) -> None:
        super().start(setup, prompt)

    @rule(turns=st.integers(1, 10), data=st.data())
    def small_turns(self, turns: int, data: st.DataObject) -> None:
        """Short turns (a prompt and an answer), each followed by a render: the prompt
        creeps up to the trigger."""
        for _ in range(turns):
            self.begin_turn(Shown("what next? " * data.draw(st.integers(5, 60))))
            answer = blocks.assistant_completion("done: " * data.draw(st.integers(5, 60)))
            self.tick()
            self.pair.atomic(lambda tl, a=answer: tl.append(a))
            self.render_now(data)


TestPrepared = pytest.mark.slow(PreparedMachine.TestCase)
TestPrepared.settings = settings(
    max_examples=40,
    stateful_step_count=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


class QuickPreparedMachine(PreparedMachine):
    """The prepared machine for the edit loop (``pytest -m "not slow"``): a few cases."""


TestPreparedQuick = QuickPreparedMachine.TestCase
TestPreparedQuick.settings = settings(TestPrepared.settings, max_examples=6)
