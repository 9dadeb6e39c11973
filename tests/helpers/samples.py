"""The sample blocks behind tests/data/*: every known type and a custom one."""

from __future__ import annotations

from timeline import Block

PNG_1x1 = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
)

SAMPLE_BLOCKS = [
    Block(
        type="turn.header",
        id="b1",
        author="system",
        turn_id="t1",
        ts="2026-01-01T00:00:01.000Z",
        path="ar:t1.turn.header",
    ),
    Block(
        type="user.prompt",
        text="Fix the failing test ✓",
        id="b2",
        author="user",
        turn_id="t1",
        ts="2026-01-01T00:00:02.000Z",
        path="ar:t1.user.prompt",
    ),
    Block(
        type="user.attachment",
        id="b3",
        author="user",
        turn_id="t1",
        ts="2026-01-01T00:00:03.000Z",
        mime="image/png",
        data=PNG_1x1,
        path="ar:t1.user.attachment.dot.png",
        meta={"name": "dot.png"},
    ),
    Block(
        type="react.tool.call",
        text='{"path":"a.py"}',
        id="b4",
        author="assistant",
        turn_id="t1",
        ts="2026-01-01T00:00:04.000Z",
        mime="application/json",
        call_id="call_1",
        tool_id="read_file",
        path="tc:t1.tool_calls.call_1.in.json",
    ),
    Block(
        type="react.tool.result",
        text="def f():\n    return 1\n",
        id="b5",
        author="tool",
        turn_id="t1",
        ts="2026-01-01T00:00:05.000Z",
        mime="text/plain",
        call_id="call_1",
        tool_id="read_file",
        path="tc:t1.tool_calls.call_1.out.json",
        hidden=True,
        replacement_text="(file hidden)",
    ),
    Block(
        type="assistant.completion",
        text="Done.",
        id="b6",
        author="assistant",
        turn_id="t1",
        ts="2026-01-01T00:00:06.000Z",
        path="ar:t1.assistant.completion",
    ),
    Block(
        type="react.note",
        text="tests pass",
        id="b7",
        author="system",
        turn_id="t1",
        ts="2026-01-01T00:00:07.000Z",
        path="ar:t1.react.note",
    ),
    Block(
        type="conv.range.summary",
        text="## Goal\\nfix",
        id="b8",
        author="system",
        turn_id="t1",
        ts="2026-01-01T00:00:08.000Z",
        path="su:t1.conv.range.summary",
        meta={
            "covered_turn_ids": ["t0"],
            "split_turn_id": None,
            "compaction_digest": {"read_files": ["a.py"]},
        },
    ),
    Block(
        type="react.plan",
        text="1. read\\n2. fix",
        id="b9",
        author="assistant",
        turn_id="t1",
        ts="2026-01-01T00:00:09.000Z",
        path="ar:t1.react.plan",
        meta={"step": 1},
    ),
]
