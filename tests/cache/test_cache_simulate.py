"""The simulated Anthropic prompt cache the cache tests and benchmarks measure with: exact
reads, writes and reusable prefixes on hand-built requests, and the positions of a
rendered request."""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from timeline import Block
from timeline._cache.simulate import CacheOutcome, Position, request_positions, simulate


def request(*parts: tuple[str, int, bool]) -> list[Position]:
    """Positions named by what they hold; each prefix is the names so far."""
    out = []
    names: list[str] = []
    for name, tokens, breakpoint in parts:
        names.append(name)
        out.append(Position("|".join(names), tokens, breakpoint))
    return out


def test_a_first_request_reads_nothing_and_writes_up_to_its_last_breakpoint() -> None:
    """Nothing is cached yet: the whole prefix up to the furthest breakpoint is written."""
    first = request(("S", 100, True), ("A", 50, False), ("B", 30, True), ("C", 5, False))
    assert [CacheOutcome(185, 0, 0, 180)] == simulate([first])


def test_the_next_request_reads_the_longest_cached_prefix_and_writes_the_rest() -> None:
    """A breakpoint reads the longest cached prefix at or before it; what lies between
    that and the furthest new breakpoint is written; the leading positions equal to the
    previous request's are the reusable tokens."""
    first = request(("S", 100, True), ("A", 50, False), ("B", 30, True))
    second = request(("S", 100, True), ("A", 50, False), ("B", 30, False), ("C", 20, True))
    assert CacheOutcome(200, 180, 180, 20) == simulate([first, second])[1]


def test_a_cached_prefix_at_the_first_position_is_read() -> None:
    """A breakpoint on the very first position (the system prompt) reads it back."""
    system = request(("S", 100, True))
    assert CacheOutcome(100, 100, 100, 0) == simulate([system, system])[1]


def test_only_breakpoints_write_and_a_write_without_a_read_counts_whole() -> None:
    """Positions without a breakpoint are never cached; only breakpoints read."""
    first = request(("S", 100, False), ("A", 50, False))
    second = request(("S", 100, False), ("A", 50, True))
    third = request(("S", 100, True), ("A", 50, False))
    outcomes = simulate([first, second, third])
    assert [
        CacheOutcome(150, 0, 0, 0),
        CacheOutcome(150, 0, 150, 150),
        CacheOutcome(150, 0, 150, 100),
    ] == outcomes


def test_a_prefix_is_read_only_at_or_before_a_breakpoint() -> None:
    """The whole previous request is cached, but a breakpoint on its first position only
    finds prefixes ending there or earlier, never one that ends after it."""
    first = request(("A", 10, False), ("B", 20, True))
    second = request(("A", 10, True), ("B", 20, False))
    assert CacheOutcome(30, 0, 30, 10) == simulate([first, second])[1]


def test_lookback_covers_the_breakpoint_and_the_19_positions_before_it() -> None:
    """Anthropic checks 20 positions: a cached prefix 19 positions before a breakpoint is
    read, one 20 positions before is not."""
    base = [(f"p{i}", 1, i == 24) for i in range(25)]
    for added, read in ((19, 25), (20, 0)):
        longer = [(name, tokens, False) for name, tokens, _ in base]
        longer += [(f"q{i}", 1, i == added - 1) for i in range(added)]
        outcome = simulate([request(*base), request(*longer)])[1]
        assert (added, read) == (added, outcome.cached)


@attrs.frozen
class View:
    """What :func:`request_positions` reads of a rendered context."""

    system: str
    blocks: tuple[Block, ...]
    cache_points: tuple[int, ...]
    system_cached: bool = True


def stream(*texts: str) -> tuple[Block, ...]:
    """A turn header, a prompt, two parallel calls and their results, an answer; ``texts``
    replace the blocks' texts in that order when given."""
    kinds = [
        ("turn.header", {}),
        ("user.prompt", {}),
        ("react.tool.call", {"tool_id": "ls", "call_id": "c1"}),
        ("react.tool.call", {"tool_id": "ls", "call_id": "c2"}),
        ("react.tool.result", {"call_id": "c1"}),
        ("react.tool.result", {"call_id": "c2"}),
        ("assistant.completion", {}),
    ]
    words = list(texts) + [f"text {i}" for i in range(len(texts), len(kinds))]
    return tuple(
        Block(type=kind, id=f"b{i}", text=words[i], **fields)
        for i, (kind, fields) in enumerate(kinds)
    )


def cost(block: Block) -> int:
    return len(block.text)


def shape(positions: Sequence[Position]) -> list[tuple[int, bool]]:
    return [(p.tokens, p.breakpoint) for p in positions]


def test_positions_of_a_rendered_request() -> None:
    """The system prompt first (its breakpoint when cached); a header shares its prompt's
    position, parallel calls one, their results one, each with the summed tokens and a
    breakpoint if any of its blocks has one."""
    blocks = stream("", "hi", "{}", "{}", "aa", "bbb", "done")
    view = View("sys", blocks, cache_points=(3, 6))
    got = request_positions(view, cost, 40)
    assert shape(got) == [(40, True), (2, False), (4, True), (5, False), (4, True)]
    uncached = request_positions(View("sys", blocks, (), system_cached=False), cost, 40)
    assert shape(uncached)[0] == (40, False)


def test_positions_without_a_system_prompt() -> None:
    """No system position; the first blocks merge as they would after one."""
    blocks = stream("", "hi", "{}", "{}")[:4]
    got = request_positions(View("", blocks, cache_points=(2,)), cost, 40)
    assert shape(got) == [(2, False), (4, True)]
    calls_first = stream("", "hi", "{}", "{}")[2:4]
    assert shape(request_positions(View("", calls_first, ()), cost, 40)) == [(4, False)]


def test_prefixes_identify_what_came_before() -> None:
    """Equal leading blocks under the same system prompt give equal prefixes, and every
    position from a changed block on differs; another system prompt changes them all."""
    texts = [b.text for b in stream()]
    texts[4] = "another result"
    one = request_positions(View("sys", stream(), ()), cost, 40)
    changed = request_positions(View("sys", stream(*texts), ()), cost, 40)
    other = request_positions(View("other", stream(), ()), cost, 40)
    same = [a.prefix == b.prefix for a, b in zip(one, changed, strict=True)]
    assert same == [True, True, True, False, False]
    assert not {p.prefix for p in one} & {p.prefix for p in other}
    assert simulate([one, other])[1].cached == 0
