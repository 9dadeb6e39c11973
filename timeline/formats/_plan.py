"""The message plan every provider format is built from.

Turns the rendered block stream into alternating user/assistant messages of typed
parts, with the provider rules made structural:

* every tool result sits in the user message right after the assistant message holding
  its call, results first (pulled forward if other blocks came between);
* a call with no visible result gets a synthetic "no result recorded" result;
* a result whose call is not visible becomes plain user-side text;
* consecutive same-role blocks merge into one message; the first message is user.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from typing import Final, Literal

import attrs

from timeline.block import Block
from timeline.block_types import block_type

__all__ = ["MISSING_RESULT_TEXT", "Message", "Part", "part_text", "plan_messages"]

MISSING_RESULT_TEXT: Final = "[no result recorded for this tool call]"
CONVERSATION_START_TEXT: Final = "[conversation start]"

PartKind = Literal["text", "image", "document", "tool_call", "tool_result"]


@attrs.frozen
class Part:
    """One content part; ``index`` is the block's index in the view (-1: synthetic)."""

    kind: PartKind
    block: Block
    index: int
    results: tuple[Block, ...] = ()
    indices: tuple[int, ...] = ()

    def at(self, points: set[int]) -> bool:
        """Whether a cache checkpoint falls on this part (any of its blocks)."""
        return self.index in points or any(i in points for i in self.indices)


@attrs.frozen
class Message:
    role: Literal["user", "assistant"]
    parts: tuple[Part, ...]


def part_text(block: Block) -> str:
    """The text a block contributes as a text part (labels for non-conversational types)."""
    spec = block_type(block.type)
    if spec.render == "summary":
        return f"{spec.label}\n{block.text}"
    if spec.render == "attachment":
        name = block.meta.get("name", block.path)
        if block.data is not None and not block.text:
            return f"[ATTACHMENT {name} ({block.mime}, {len(block.data)} bytes)]"
        return f"[ATTACHMENT {name}]\n{block.text}"
    if spec.render == "tool_result":  # orphaned result shown as text
        return f"[TOOL RESULT {block.tool_id or ''} call_id={block.call_id}]\n{block.text}"
    if block.type in ("user.prompt", "assistant.completion"):
        return block.text
    return f"{spec.label}\n{block.text}" if spec.label else block.text


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _content_part(block: Block, index: int) -> Part:
    if block_type(block.type).render == "attachment" and block.data is not None:
        if block.mime.startswith("image/"):
            return Part("image", block, index)
        if block.mime == "application/pdf":
            return Part("document", block, index)
    return Part("text", block, index)


def plan_messages(blocks: Sequence[Block]) -> list[Message]:
    """Alternating messages for ``blocks`` (the rendered stream, tail included)."""
    call_ids = {b.call_id for b in blocks if block_type(b.type).render == "tool_call" and b.call_id}
    results: dict[str, list[tuple[int, Block]]] = {}
    for i, b in enumerate(blocks):
        if block_type(b.type).render == "tool_result" and b.call_id in call_ids:
            results.setdefault(b.call_id or "", []).append((i, b))

    out: list[tuple[str, list[Part]]] = []
    pending: list[Block] = []
    previous_kind = ""

    def push(role: str, part: Part) -> None:
        if out and out[-1][0] == role:
            out[-1][1].append(part)
        else:
            out.append((role, [part]))

    def flush() -> None:
        for call in pending:
            found = results.get(call.call_id or "", [])
            if found:
                index, first = found[0]
                push(
                    "user",
                    Part(
                        "tool_result",
                        first,
                        index,
                        tuple(b for _, b in found),
                        tuple(i for i, _ in found),
                    ),
                )
            else:
                push("user", Part("tool_result", call, -1, ()))
        pending.clear()

    for i, b in enumerate(blocks):
        spec = block_type(b.type)
        if spec.render == "header":
            continue
        kind = spec.render
        if kind == "tool_call":
            if pending and previous_kind != "tool_call":
                flush()  # parallel calls are consecutive call blocks; these are sequential
            previous_kind = kind
            push("assistant", Part("tool_call", b, i))
            if b.call_id:
                pending.append(b)
            continue
        previous_kind = kind
        if kind == "tool_result" and b.call_id in call_ids:
            continue  # emitted right after its call by flush()
        flush()
        push(spec.role, _content_part(b, i))
    flush()
    if out and out[0][0] == "assistant":
        marker = Block(type="user.prompt", text=CONVERSATION_START_TEXT, author="user")
        out.insert(0, ("user", [Part("text", marker, -1)]))
    return [Message("user" if r == "user" else "assistant", tuple(p)) for r, p in out]
