"""pydantic-ai messages <-> blocks for :mod:`timeline.integrations.pydantic_ai`: user
prompts and files, tool calls and returns, retries as error results, text and thinking;
and back from blocks, tool pairs intact.

Each mirrored message keeps itself: its first block carries the message as pydantic-ai
serializes it (``meta["pai_message"]``, later blocks of it are marked ``pai_part``), so
the processor can give back the very message it was given, ``run_id`` and every other
field included. A message with no block of its own (a request holding only a system
prompt) is held by a ``pydantic_ai.message`` block (its JSON as data: counted, never
summarized as text).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

import msgspec

from timeline._formats import MISSING_RESULT_TEXT, Part, part_text, plan_messages
from timeline._model import (
    REACT_TOOL_CALL,
    REACT_TOOL_RESULT,
    REASONING_MIME,
    Block,
    given_call_id,
    register_block_type,
)
from timeline._model import constructors as B
from timeline._render import RenderedContext
from timeline.integrations import IntegrationError, missing_extra

try:
    from pydantic_ai.messages import (
        BinaryContent,
        CompactionPart,
        ModelMessage,
        ModelMessagesTypeAdapter,
        ModelRequest,
        ModelRequestPart,
        ModelResponse,
        ModelResponsePart,
        NativeToolCallPart,
        NativeToolReturnPart,
        RetryPromptPart,
        SystemPromptPart,
        TextPart,
        ThinkingPart,
        ToolCallPart,
        ToolReturnPart,
        UserPromptPart,
    )
except ImportError as exc:  # pragma: no cover - exercised without the extra
    raise missing_extra("pydantic-ai", "pydantic-ai") from exc

__all__ = [
    "FP",
    "MARK",
    "MESSAGE",
    "NATIVE",
    "OPAQUE",
    "PART",
    "fingerprint",
    "from_pydantic_ai",
    "message_blocks",
    "render_messages",
    "stored_message",
    "to_pydantic_ai",
]

MARK = "timeline"
"""The ``metadata`` key on every message this module renders (a summary...)."""
FP = "pai_fp"
MESSAGE = "pai_message"
PART = "pai_part"
OPAQUE = "pydantic_ai.message"
register_block_type(OPAQUE, role="user", label="[PYDANTIC-AI MESSAGE]")
NATIVE = "pydantic_ai.native"
register_block_type(NATIVE, role="assistant", label="[PROVIDER]")
"""A provider's own part of a response (a native tool's call or return, a provider-native
compaction) as text: counted, searchable and summarized. The message itself, which holds
the part exactly, is what goes back to pydantic-ai."""


def native_text(part: Any) -> str | None:
    """The text form of a native tool call or return, or of a compaction part (None for
    any other part)."""
    if isinstance(part, NativeToolCallPart):
        return f"{part.tool_name} call ({part.provider_name}): {json.dumps(part.args_as_dict())}"
    if isinstance(part, NativeToolReturnPart):
        return f"{part.tool_name} result ({part.provider_name}): {_text(part.content)}"
    if isinstance(part, CompactionPart):
        return f"compaction ({part.provider_name}): {part.content or '(encrypted)'}"
    return None


def fingerprint(message: ModelMessage) -> str:
    """What identifies a message across runs (its kind, timestamp and parts)."""
    parts = [
        (type(p).__name__, repr(getattr(p, "content", getattr(p, "args", ""))))
        for p in message.parts
    ]
    raw = f"{message.kind}|{message.timestamp}|{parts}".encode()
    return hashlib.sha1(raw, usedforsecurity=False).hexdigest()[:16]


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    try:
        return json.dumps(content, sort_keys=True, default=str)
    except (TypeError, ValueError):
        return str(content)


def _request_blocks(message: ModelRequest) -> list[Block]:
    out: list[Block] = []
    for part in message.parts:
        if isinstance(part, UserPromptPart):
            if isinstance(part.content, str):
                out.append(B.user_prompt(part.content))
                continue
            texts = [c for c in part.content if isinstance(c, str)]
            out.append(B.user_prompt("\n".join(texts)))
            for k, item in enumerate(c for c in part.content if isinstance(c, BinaryContent)):
                out.append(
                    B.user_attachment(name=f"file-{k + 1}", mime=item.media_type, data=item.data)
                )
        elif isinstance(part, ToolReturnPart):
            error = getattr(part, "outcome", "success") not in ("success",)
            out.append(
                B.tool_result(
                    part.tool_call_id, _text(part.content), tool_id=part.tool_name, is_error=error
                )
            )
        elif isinstance(part, RetryPromptPart):
            if part.tool_name:
                out.append(
                    B.tool_result(
                        part.tool_call_id,
                        part.model_response(),
                        tool_id=part.tool_name,
                        is_error=True,
                    )
                )
            else:
                out.append(B.user_prompt(part.model_response()))
        # SystemPromptPart: the system prompt is rendered as the system, not a block
    return out


def _response_blocks(message: ModelResponse) -> list[Block]:
    out: list[Block] = []
    thinking: list[dict[str, Any]] = []
    texts: list[str] = []
    for part in message.parts:
        if isinstance(part, TextPart):
            texts.append(part.content)
        elif isinstance(part, ThinkingPart):
            thinking.append(
                {
                    "content": part.content,
                    "signature": part.signature,
                    "id": part.id,
                    "provider_name": part.provider_name,
                }
            )
        elif isinstance(part, ToolCallPart):
            if texts:
                out.append(B.assistant_completion("\n".join(texts)))
                texts = []
            out.append(B.tool_call(part.tool_name, part.args_as_dict(), call_id=part.tool_call_id))
        elif (native := native_text(part)) is not None:
            if texts:
                out.append(B.assistant_completion("\n".join(texts)))
                texts = []
            tool = isinstance(part, NativeToolReturnPart)  # what the tool produced
            out.append(Block(type=NATIVE, text=native, author="tool" if tool else "assistant"))
    if texts or not out:
        out.append(B.assistant_completion("\n".join(texts)))
    if thinking:  # kept with the message so signed thinking goes back to the model
        out[0] = msgspec.structs.replace(out[0], meta={**out[0].meta, "pai_thinking": thinking})
    return out


def from_pydantic_ai(messages: Sequence[ModelMessage]) -> list[Block]:
    """Blocks for pydantic-ai messages (user prompts and files, tool calls and returns,
    retries as error results, text, thinking in ``meta["pai_thinking"]``). System prompt
    parts are left out: render them as the system."""
    out: list[Block] = []
    for m in messages:
        out += _request_blocks(m) if isinstance(m, ModelRequest) else _response_blocks(m)
    return out


def _tool_return(part: Part) -> ToolReturnPart:
    b = part.block
    text = MISSING_RESULT_TEXT if part.index < 0 else "\n".join(r.text for r in part.results)
    return ToolReturnPart(tool_name=b.tool_id or "", content=text, tool_call_id=given_call_id(b))


def _planned(
    blocks: Sequence[Block], conversation_id: str, answered: frozenset[str], lead: bool
) -> list[ModelMessage]:
    if not blocks:
        return []
    out: list[ModelMessage] = []
    for message in plan_messages(blocks):
        ids = [p.block.id for p in message.parts if p.index >= 0]
        meta = {MARK: {"conversation": conversation_id, "blocks": ids}}
        if message.role == "assistant":
            rparts: list[ModelResponsePart] = []
            for part in message.parts:
                b = part.block
                for t in b.meta.get("pai_thinking", ()):
                    rparts.append(ThinkingPart(**t))
                if part.kind == "tool_call":
                    args = json.loads(b.text) if b.text else {}
                    rparts.append(
                        ToolCallPart(b.tool_id or "", args, tool_call_id=given_call_id(b))
                    )
                else:
                    rparts.append(TextPart(part_text(b)))
            out.append(ModelResponse(rparts, metadata=meta))
            continue
        qparts: list[ModelRequestPart] = []
        for part in message.parts:
            if part.index < 0 and part.kind == "tool_result" and part.block.call_id in answered:
                continue  # its result is in a message given as it is
            if part.index < 0 and part.kind == "text" and not lead:
                continue  # the "[conversation start]" lead: the history goes on before
            if part.kind == "tool_result":
                qparts.append(_tool_return(part))
            elif part.kind in ("image", "document"):
                qparts.append(
                    UserPromptPart(
                        [BinaryContent(part.block.data or b"", media_type=part.block.mime)]
                    )
                )
            else:
                qparts.append(UserPromptPart(part_text(part.block)))
        if qparts:
            out.append(ModelRequest(qparts, metadata=meta))
    return out


def render_messages(
    blocks: Sequence[Block],
    conversation_id: str = "",
    *,
    calls: frozenset[str] = frozenset(),
    answered: frozenset[str] = frozenset(),
    lead: bool = True,
) -> list[ModelMessage]:
    """pydantic-ai messages rendered from ``blocks``, each carrying
    ``metadata["timeline"]`` naming its blocks (so it is known when it comes back).

    For a part of a history: ``calls`` are the calls made in messages given as they
    are (a result of one is a tool return here too), ``answered`` the calls whose
    results are in such messages (no "no result" return is added for them), and
    ``lead=False`` leaves out the ``[conversation start]`` request."""
    out: list[ModelMessage] = []
    chunk: list[Block] = []
    own = {b.call_id for b in blocks if b.type == REACT_TOOL_CALL}
    for b in blocks:
        if b.type == REACT_TOOL_RESULT and b.call_id in calls and b.call_id not in own:
            out += _planned(chunk, conversation_id, answered, lead)
            chunk = []
            meta = {MARK: {"conversation": conversation_id, "blocks": [b.id]}}
            ret = ToolReturnPart(
                tool_name=b.tool_id or "", content=b.text, tool_call_id=given_call_id(b)
            )
            out.append(ModelRequest([ret], metadata=meta))
        else:
            chunk.append(b)
    out += _planned(chunk, conversation_id, answered, lead)
    merged: list[ModelMessage] = []
    for m in out:  # a request and the next one (both rendered here) are one request
        prev = merged[-1] if merged else None
        if isinstance(m, ModelRequest) and isinstance(prev, ModelRequest):
            ids = [*prev.metadata[MARK]["blocks"], *m.metadata[MARK]["blocks"]]  # type: ignore[index]
            meta = {MARK: {"conversation": conversation_id, "blocks": ids}}
            merged[-1] = ModelRequest([*prev.parts, *m.parts], metadata=meta)
        else:
            merged.append(m)
    return merged


def with_system(messages: list[ModelMessage], system: str, conversation_id: str) -> None:
    """Open ``messages`` with the system prompt when no request holds one yet."""
    if not system or any(
        isinstance(p, SystemPromptPart)
        for m in messages
        if isinstance(m, ModelRequest)
        for p in m.parts
    ):
        return
    part = SystemPromptPart(system)
    first = messages[0] if messages else None
    if isinstance(first, ModelRequest):
        messages[0] = ModelRequest([part, *first.parts], metadata=first.metadata)
    else:
        meta = {MARK: {"conversation": conversation_id, "blocks": []}}
        messages.insert(0, ModelRequest([part], metadata=meta))


def to_pydantic_ai(view: RenderedContext, conversation_id: str = "") -> list[ModelMessage]:
    """pydantic-ai messages for a rendered view, ending with a ``ModelRequest``; each
    carries ``metadata["timeline"]`` naming its blocks. The system prompt opens the first
    request."""
    out = render_messages(view.blocks, conversation_id)
    with_system(out, view.system, conversation_id)
    if not out or not isinstance(out[-1], ModelRequest):
        raise IntegrationError("the rendered history must end with a request (user side)")
    return out


def message_blocks(message: ModelMessage) -> list[Block]:
    """The blocks of one mirrored message; the first carries the message itself (its
    JSON form) and its fingerprint, the others are marked as its parts."""
    blocks = from_pydantic_ai([message])
    dumped = ModelMessagesTypeAdapter.dump_python([message], mode="json")[0]
    if not blocks:
        data = msgspec.json.encode(dumped)
        blocks = [Block(type=OPAQUE, author="user", mime=REASONING_MIME, data=data)]
    head, *rest = blocks
    meta = {**head.meta, FP: fingerprint(message), MESSAGE: dumped}
    head = msgspec.structs.replace(head, meta=meta)
    return [head, *(msgspec.structs.replace(b, meta={**b.meta, PART: True}) for b in rest)]


def stored_message(block: Block) -> ModelMessage | None:
    """The message a head block holds, decoded (None when it holds none)."""
    dumped = block.meta.get(MESSAGE)
    if not isinstance(dumped, dict):
        return None
    return ModelMessagesTypeAdapter.validate_python([dumped])[0]
