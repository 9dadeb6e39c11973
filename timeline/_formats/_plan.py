"""The message plan every provider format is built from.

Turns the rendered block stream into alternating user/assistant messages of typed
parts, with the provider rules made structural:

* every tool result sits in the user message right after the assistant message holding
  its call, results first (pulled forward if other blocks came between);
* a call with no visible result gets a synthetic "no result recorded" result;
* a result whose call is not visible becomes plain user-side text;
* consecutive same-role blocks merge into one message; the first message is user;
* no text part is blank, the final assistant text has no trailing whitespace, and a
  stream with nothing to send raises :class:`~timeline._model.errors.EmptyPromptError`;
* media a provider does not take in that place becomes a text note (``_parts``);
* thinking/reasoning blocks go only to the provider they came from, unchanged, and so
  do opaque provider items (elsewhere they are text): both keep the place they were
  recorded in, also between a call and its result.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from timeline._formats._parts import (
    EMPTY_RESULT_TEXT,
    MISSING_RESULT_TEXT,
    Message,
    Part,
    b64,
    content_parts,
    part_text,
    result_items,
)
from timeline._model import (
    DOCUMENT_TYPES,
    IMAGE_TYPES,
    PROVIDER_MESSAGE,
    Block,
    EmptyPromptError,
    block_type,
    media_kind,
    native_provider,
    reasoning_item,
    reasoning_provider,
)

__all__ = [
    "DOCUMENT_TYPES",
    "EMPTY_RESULT_TEXT",
    "IMAGE_TYPES",
    "MISSING_RESULT_TEXT",
    "Message",
    "Part",
    "b64",
    "media_kind",
    "part_text",
    "plan_messages",
    "result_items",
]

CONVERSATION_START_TEXT = "[conversation start]"


def _own(block: Block, kind: str, provider: str | None) -> bool:
    """A thinking/reasoning block or an assistant-side opaque item that goes to
    ``provider`` as its own item: planned in place, where it was recorded."""
    if kind == "reasoning":
        return reasoning_provider(block) == provider and reasoning_item(block) is not None
    return (
        kind == "provider"
        and provider is not None
        and block_type(block.type).role == "assistant"
        and native_provider(block) == provider
    )


def _final_stripped(parts: list[Part]) -> list[Part]:
    last = parts[-1]
    if last.kind == "text" and last.text != last.text.rstrip():
        return [*parts[:-1], attrs.evolve(last, text=last.text.rstrip())]
    return parts


def _settle(out: list[tuple[str, list[Part]]]) -> list[tuple[str, list[Part]]]:
    """Thinking/reasoning only travels with the assistant content it preceded: drop it
    from assistant messages holding nothing else and from the end of the final one
    (nothing follows it), then merge the same-role neighbours this leaves."""
    for k, (role, parts) in enumerate(out):
        if role == "assistant" and all(p.kind == "reasoning" for p in parts):
            out[k] = (role, [])
    while out and not out[-1][1]:
        out.pop()
    if out and out[-1][0] == "assistant":
        parts = out[-1][1]
        while parts and parts[-1].kind == "reasoning":
            parts.pop()
    merged: list[tuple[str, list[Part]]] = []
    for role, parts in out:
        if not parts:
            continue
        if merged and merged[-1][0] == role:
            merged[-1][1].extend(parts)
        else:
            merged.append((role, parts))
    return merged


def _results(blocks: Sequence[Block]) -> tuple[set[str], dict[str, list[tuple[int, Block]]]]:
    """The call ids of ``blocks`` and, for each, its results with their indices."""
    call_ids = {b.call_id for b in blocks if block_type(b.type).render == "tool_call" and b.call_id}
    results: dict[str, list[tuple[int, Block]]] = {}
    for i, b in enumerate(blocks):
        if block_type(b.type).render == "tool_result" and b.call_id in call_ids:
            results.setdefault(b.call_id or "", []).append((i, b))
    return call_ids, results


def _raw_plan(blocks: Sequence[Block], provider: str | None) -> list[tuple[str, list[Part]]]:
    """The messages before settling."""
    call_ids, results = _results(blocks)
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
                indices, shown = zip(*found, strict=True)
                push("user", Part("tool_result", shown[0], indices[0], shown, indices))
            else:
                push("user", Part("tool_result", call, -1, ()))
        pending.clear()

    for i, b in enumerate(blocks):
        spec = block_type(b.type)
        if spec.render == "header":
            continue
        kind = spec.render
        if kind == "reasoning" or _own(b, kind, provider):
            # the provider's own assistant items keep their place: right after a call they
            # join its message (a later call is then parallel to it, its result after both)
            if _own(b, kind, provider):
                if pending and previous_kind != "tool_call":
                    flush()
                push("assistant", Part("reasoning" if kind == "reasoning" else "provider", b, i))
            continue
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
        for part in content_parts(b, i, provider):
            push(spec.role, part)
    flush()
    return out


def _finish(out: list[tuple[str, list[Part]]]) -> list[Message]:
    return [Message("user" if r == "user" else "assistant", tuple(p)) for r, p in out]


def _lead(out: list[tuple[str, list[Part]]]) -> None:
    """The conversation starts with a user message: a marker goes before an assistant
    message first, and before a provider's own whole message (an Anthropic system
    message) opening the first user message, which its provider sends as a message of
    its own."""
    marker = Block(type="user.prompt", text=CONVERSATION_START_TEXT, author="user")
    part = Part("text", marker, -1, text=CONVERSATION_START_TEXT)
    if out and out[0][0] == "assistant":
        out.insert(0, ("user", [part]))
    elif out and out[0][1][0].kind == "provider" and out[0][1][0].block.type == PROVIDER_MESSAGE:
        out[0][1].insert(0, part)


def plan_messages(blocks: Sequence[Block], provider: str | None = None) -> list[Message]:
    """Alternating messages for ``blocks`` (the rendered stream, tail included).

    Thinking/reasoning blocks are planned only for the ``provider`` they came from
    (``"anthropic"`` or ``"responses"``) and only ahead of other assistant content."""
    out = _settle(_raw_plan(blocks, provider))
    _lead(out)
    if not out:
        raise EmptyPromptError("nothing to send: the rendered timeline holds no message")
    if out[-1][0] == "assistant":
        out[-1] = ("assistant", _final_stripped(out[-1][1]))
    return _finish(out)
