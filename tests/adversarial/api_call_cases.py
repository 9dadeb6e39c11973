"""Bad inputs to the Python API, part two: restore, method arguments, policies.

Each case runs against a timeline holding one committed turn (``cases.base``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import msgspec

from tests.adversarial.cases import VALID, Case
from timeline import (
    Block,
    CompactionPolicy,
    DuplicateBlockIdError,
    InvalidBlockError,
    NotFoundError,
    OrphanToolResultError,
    PolicyError,
    Timeline,
    TimelineSnapshot,
    TimelineState,
    UnknownPathError,
    blocks,
    register_block_type,
)

IBE = InvalidBlockError


def nest(levels: int, leaf: Any = 1) -> Any:
    """``levels`` nested dicts around ``leaf`` (built without recursion)."""
    value = leaf
    for _ in range(levels):
        value = {"a": value}
    return value


def _snap(tl: Timeline, **changes: Any) -> TimelineSnapshot:
    return msgspec.structs.replace(tl.snapshot(), **changes)


def _blocks_with(tl: Timeline, index: int, **changes: Any) -> TimelineSnapshot:
    bs = list(tl.snapshot().blocks)
    bs[index] = msgspec.structs.replace(bs[index], **changes)
    return _snap(tl, blocks=bs)


def _forged(tl: Timeline, **meta: Any) -> TimelineSnapshot:
    summary = msgspec.structs.replace(
        blocks.summary("forged", **meta), id="s1", turn_id="t1", path="su:t1.conv.range.summary"
    )
    return _snap(tl, blocks=[*tl.snapshot().blocks, summary])


def _extra_note(tl: Timeline, text: str) -> TimelineSnapshot:
    note = Block(type="react.note", text=text, id="n50", turn_id="t1", path="ar:t1.note")
    return _snap(tl, blocks=[*tl.snapshot().blocks, note])


RESTORE_CHECKS: dict[str, Callable[[Timeline, Any], bool]] = {
    "surrogate-text-cleaned": lambda tl, _: tl.blocks[-1].text == "a\ufffd",
    "unknown-pinned-id-dropped": lambda tl, _: tl.pinned_ids == (),
}
"""What the valid restore cases must produce."""


def restore_cases() -> list[Case]:
    table: dict[str, tuple[Callable[[Timeline], Any], type[Exception] | None]] = {
        "not-a-snapshot": (lambda tl: {"blocks": []}, IBE),
        "none": (lambda tl: None, IBE),
        "other-conversation": (lambda tl: _snap(tl, conversation_id="other"), IBE),
        "blocks-tuple": (lambda tl: _snap(tl, blocks=tuple(tl.blocks)), IBE),
        "block-not-a-block": (lambda tl: _snap(tl, blocks=[*tl.blocks, {"type": "x"}]), IBE),
        "duplicate-ids": (
            lambda tl: _snap(tl, blocks=[*tl.blocks, tl.blocks[1]]),
            DuplicateBlockIdError,
        ),
        "orphan-result": (
            lambda tl: _snap(tl, blocks=[b for b in tl.blocks if b.type != "react.tool.call"]),
            OrphanToolResultError,
        ),
        "text-none": (lambda tl: _blocks_with(tl, 1, text=None), IBE),
        "text-int": (lambda tl: _blocks_with(tl, 1, text=5), IBE),
        "meta-nan": (lambda tl: _blocks_with(tl, 1, meta={"x": math.nan}), IBE),
        "meta-deep": (lambda tl: _blocks_with(tl, 1, meta=nest(100)), IBE),
        "id-empty": (lambda tl: _blocks_with(tl, 1, id=""), IBE),
        "path-empty": (lambda tl: _blocks_with(tl, 1, path=""), IBE),
        "turn-id-empty": (lambda tl: _blocks_with(tl, 1, turn_id=""), IBE),
        "id-surrogate": (lambda tl: _blocks_with(tl, 1, id="\ud800"), IBE),
        "path-nul": (lambda tl: _blocks_with(tl, 1, path="a\x00b"), IBE),
        "forged-summary": (lambda tl: _forged(tl), IBE),
        "forged-summary-bad-meta": (
            lambda tl: _forged(tl, covered_turn_ids="t1", compacted_block_count=1),
            IBE,
        ),
        "call-without-call-id": (lambda tl: _blocks_with(tl, 2, call_id=None), IBE),
        "call-without-tool-id": (lambda tl: _blocks_with(tl, 2, tool_id=None), IBE),
        "call-params-not-json": (lambda tl: _blocks_with(tl, 2, text="{"), IBE),
        "call-params-list": (lambda tl: _blocks_with(tl, 2, text="[1]"), IBE),
        "duplicate-call-id": (
            lambda tl: _snap(
                tl, blocks=[*tl.blocks, msgspec.structs.replace(tl.blocks[2], id="b99")]
            ),
            IBE,
        ),
        "state-not-a-state": (lambda tl: _snap(tl, state=5), IBE),
        "state-block-seq-str": (lambda tl: _snap(tl, state=TimelineState(block_seq="x")), IBE),
        "state-pinned-ints": (lambda tl: _snap(tl, state=TimelineState(pinned=[1])), IBE),
        "surrogate-text-cleaned": (lambda tl: _extra_note(tl, "a\ud800"), VALID),
        "unknown-pinned-id-dropped": (
            lambda tl: _snap(tl, state=TimelineState(block_seq=4, turn_seq=1, pinned=["zz"])),
            VALID,
        ),
    }
    return [
        Case(
            f"restore-{name}",
            lambda tl, make=make: tl.restore(make(tl)),
            expect,
            RESTORE_CHECKS.get(name),
        )
        for name, (make, expect) in table.items()
    ]


STATE_ARGS: dict[str, tuple[Callable[[Timeline], object], type[Exception]]] = {
    "hide-int": (lambda tl: tl.hide(5), IBE),
    "hide-int-in-list": (lambda tl: tl.hide([5]), IBE),
    "hide-bytes": (lambda tl: tl.hide(b"x"), IBE),
    "hide-none": (lambda tl: tl.hide(None), IBE),
    "hide-unknown-path": (lambda tl: tl.hide(["nope"]), UnknownPathError),
    "hide-replacement-int": (lambda tl: tl.hide([tl.blocks[1].path], 5), IBE),
    "unhide-int-in-list": (lambda tl: tl.unhide([1]), IBE),
    "pin-int": (lambda tl: tl.pin(5), IBE),
    "pin-unknown-path": (lambda tl: tl.pin(["nope"]), UnknownPathError),
    "unpin-none-in-list": (lambda tl: tl.unpin([None]), IBE),
    "render-system-int": (lambda tl: tl.render(5), IBE),
    "render-system-none": (lambda tl: tl.render(None), IBE),
    "render-tail-int": (lambda tl: tl.render("s", tail=5), IBE),
    "render-tail-str": (lambda tl: tl.render("s", tail="x"), IBE),
    "render-tail-none": (lambda tl: tl.render("s", tail=None), IBE),
    "render-tail-int-item": (lambda tl: tl.render("s", tail=[5]), IBE),
    "render-tail-tool-result": (
        lambda tl: tl.render("s", tail=[blocks.tool_result("call-1", "x")]),
        IBE,
    ),
    "render-tail-summary": (lambda tl: tl.render("s", tail=[blocks.summary("x")]), IBE),
    "render-tail-nan-meta": (
        lambda tl: tl.render("s", tail=[blocks.note("x", v=math.nan)]),
        IBE,
    ),
    "render-force-str": (
        lambda tl: tl.render("s", force_sanitize="yes"),
        IBE,
    ),
    "estimate-system-bytes": (lambda tl: tl.estimate(b"x"), IBE),
    "estimate-tail-dict": (lambda tl: tl.estimate("s", {}), IBE),
    "compact-keep-negative": (lambda tl: tl.compact(keep_recent_tokens=-1), IBE),
    "compact-keep-str": (lambda tl: tl.compact(keep_recent_tokens="5"), IBE),
    "compact-keep-bool": (lambda tl: tl.compact(keep_recent_tokens=True), IBE),
    "compact-keep-float": (lambda tl: tl.compact(keep_recent_tokens=1.5), IBE),
    "compact-system-int": (lambda tl: tl.compact(5), IBE),
    "compact-force-str": (lambda tl: tl.compact(force="no"), IBE),
    "usage-bool": (lambda tl: tl.record_usage(prompt_tokens=True), IBE),
    "usage-str": (lambda tl: tl.record_usage(prompt_tokens="5"), IBE),
    "usage-negative": (lambda tl: tl.record_usage(prompt_tokens=-1), IBE),
    "usage-float": (lambda tl: tl.record_usage(prompt_tokens=1.5), IBE),
    "usage-none": (lambda tl: tl.record_usage(prompt_tokens=None), IBE),
}
"""Bad arguments to hide/pin, render/estimate, compact and record_usage."""


APPEND_ARGS: dict[str, tuple[Callable[[Timeline], object], type[Exception]]] = {
    "append-int": (lambda tl: tl.append(5), IBE),
    "append-none": (lambda tl: tl.append(None), IBE),
    "append-str": (lambda tl: tl.append("hello"), IBE),
    "append-dict": (lambda tl: tl.append({"type": "user.prompt"}), IBE),
    "append-class": (lambda tl: tl.append(Block), IBE),
    "append-summary": (lambda tl: tl.append(blocks.summary("x")), IBE),
    "append-orphan-result": (
        lambda tl: tl.append(blocks.tool_result("nope", "x")),
        OrphanToolResultError,
    ),
    "append-duplicate-id": (
        lambda tl: tl.append(Block(type="user.prompt", text="x", id=tl.blocks[1].id)),
        DuplicateBlockIdError,
    ),
    "append-reused-call-id": (  # models reuse ids: stored under a free one, never refused
        lambda tl: tl.append(blocks.tool_call("t", {}, call_id="call-1")),
        VALID,
    ),
    "append-type-padded": (lambda tl: tl.append(Block(type=" x")), IBE),
    "append-type-empty": (lambda tl: tl.append(Block(type="")), IBE),
    "append-call-without-tool": (
        lambda tl: tl.append(Block(type="react.tool.call", text="{}")),
        IBE,
    ),
    "append-result-without-call-id": (
        lambda tl: tl.append(Block(type="react.tool.result", text="x")),
        IBE,
    ),
    "extend-int-item": (
        lambda tl: tl.extend([blocks.user_prompt("ok"), 5]),
        IBE,
    ),
    "extend-int": (lambda tl: tl.extend(5), IBE),
    "extend-none": (lambda tl: tl.extend(None), IBE),
    "extend-summary": (lambda tl: tl.extend([blocks.note("a"), blocks.summary("x")]), IBE),
    "extend-same-id-twice": (
        lambda tl: tl.extend([Block(type="react.note", id="n"), Block(type="react.note", id="n")]),
        DuplicateBlockIdError,
    ),
    "extend-orphan-after-good": (
        lambda tl: tl.extend([blocks.note("a"), blocks.tool_result("zz", "x")]),
        OrphanToolResultError,
    ),
    "get-unknown": (lambda tl: tl.get("nope"), NotFoundError),
    "get-int": (lambda tl: tl.get(5), IBE),
    "get-list": (lambda tl: tl.get([]), IBE),
}
"""Bad blocks and arguments to append, extend and get."""


CONSTRUCTOR_ARGS: dict[str, tuple[Callable[[Timeline], object], type[Exception]]] = {
    "tool-call-no-name": (lambda tl: blocks.tool_call("", {}), IBE),
    "tool-call-params-list": (lambda tl: blocks.tool_call("t", [1]), IBE),
    "tool-call-params-none": (lambda tl: blocks.tool_call("t", None), IBE),
    "tool-result-no-call": (lambda tl: blocks.tool_result("", "x"), IBE),
    "attachment-empty": (lambda tl: blocks.user_attachment(name="a", mime="b"), IBE),
    "custom-no-type": (lambda tl: blocks.custom("", "x"), IBE),
    "register-empty": (lambda tl: register_block_type(""), PolicyError),
    "register-builtin": (lambda tl: register_block_type("user.prompt"), PolicyError),
    "register-padded": (lambda tl: register_block_type(" x "), PolicyError),
    "register-int": (lambda tl: register_block_type(5), PolicyError),
    "register-role": (
        lambda tl: register_block_type("adv.x", role="system"),
        PolicyError,
    ),
    "register-boundary": (
        lambda tl: register_block_type("adv.x", boundary="often"),
        PolicyError,
    ),
}
"""Bad arguments to the block constructors and register_block_type."""


ARGUMENT_CHECKS: dict[str, Callable[[Timeline, Any], bool]] = {
    "append-reused-call-id": lambda tl, call: (
        call.call_id == "call-1#2" and call.meta == {"source_call_id": "call-1"}
    ),
}
"""What the valid argument cases must produce."""


def argument_cases() -> list[Case]:
    table = {**STATE_ARGS, **APPEND_ARGS, **CONSTRUCTOR_ARGS}
    return [
        Case(name, run, expect, ARGUMENT_CHECKS.get(name)) for name, (run, expect) in table.items()
    ]


POLICY_BAD: dict[str, dict[str, Any]] = {
    "max-tokens-str": {"max_tokens": "100"},
    "max-tokens-float": {"max_tokens": 1.5},
    "max-tokens-bool": {"max_tokens": True},
    "max-tokens-zero": {"max_tokens": 0},
    "max-tokens-negative": {"max_tokens": -5},
    "max-tokens-inf": {"max_tokens": math.inf},
    "max-tokens-nan": {"max_tokens": math.nan},
    "context-window-str": {"context_window": "x"},
    "reserve-negative": {"reserve_tokens": -1},
    "reserve-float": {"reserve_tokens": 1.5},
    "reserve-over-window": {"context_window": 1000, "reserve_tokens": 1000},
    "trigger-str": {"trigger_ratio": "0.9"},
    "trigger-nan": {"trigger_ratio": math.nan},
    "trigger-zero": {"trigger_ratio": 0},
    "trigger-over-one": {"trigger_ratio": 1.5},
    "trigger-bool": {"trigger_ratio": True},
    "keep-one": {"keep_ratio": 1.0},
    "keep-str": {"keep_ratio": "x"},
    "keep-over-trigger": {"keep_ratio": 0.95, "trigger_ratio": 0.9},
    "keep-recent-float": {"keep_recent_turns": 1.5},
    "keep-recent-none": {"keep_recent_turns": None},
    "keep-recent-bool": {"keep_recent_turns": True},
    "enabled-str": {"enabled": "yes"},
    "enabled-int": {"enabled": 1},
    "enabled-none": {"enabled": None},
    "model-int": {"model": 5},
    "focus-int": {"focus_instructions": 5},
    "timeout-negative": {"summary_timeout_seconds": -1},
    "timeout-nan": {"summary_timeout_seconds": math.nan},
    "timeout-inf": {"summary_timeout_seconds": math.inf},
    "timeout-str": {"summary_timeout_seconds": "3"},
    "timeout-bool": {"summary_timeout_seconds": True},
    "classification-int-value": {"tool_classification": {"a": 1}},
    "classification-int": {"tool_classification": 5},
    "classification-int-key": {"tool_classification": {1: "read"}},
    "max-blocks-zero": {"max_blocks": 0},
    "emergency-one": {"emergency_keep_ratio": 1},
    "summary-max-str": {"summary_max_tokens": "100"},
    "user-cap-negative": {"user_prompt_cap_chars": -1},
}

MAPPING_BAD: dict[str, Any] = {
    "not-a-mapping": 5,
    "list": [("max_tokens", 5)],
    "max-tokens-str": {"max_tokens": "x"},
    "unknown-key": {"nope": 1},
    "section-int": {"compaction": 5},
    "section-bad-ratio": {"compaction": {"keep_ratio": "a"}},
    "nan": {"max_tokens": math.nan},
    "extra-top-level": {"compaction": {}, "other": 1},
}


def policy_cases() -> list[Case]:
    out = [
        Case(f"policy-{name}", lambda tl, kw=kw: CompactionPolicy(**kw), PolicyError)
        for name, kw in POLICY_BAD.items()
    ]
    out += [
        Case(
            f"policy-mapping-{name}",
            lambda tl, m=mapping: CompactionPolicy.from_mapping(m),
            PolicyError,
        )
        for name, mapping in MAPPING_BAD.items()
    ]
    return out
