"""Responses input items <-> blocks for :mod:`timeline.integrations.openai_agents`.

Every item is kept **as stored**: the first block made from it carries the item itself
in ``meta["oa_item"]`` (later blocks of the same item, such as a user message's images,
are marked ``meta["oa_part"]``), so the session gives back exactly what it was given.
The blocks are what the timeline counts, compacts, summarizes and searches. Hosted-tool,
MCP, computer-use and other items the library does not model become opaque provider
blocks (``provider.item``, or ``provider.input`` for what the client sends back, see
:mod:`timeline._model.native`): their text form searchable and summarized, a call never
cut from its output; a ``compaction`` item (provider-native compaction) a
``provider.compaction`` block. Items that fit no block (an output whose call is not in
the live history, a call id used twice) become ``openai.item`` blocks holding the item as
JSON data: counted in the budget, never summarized as text, sent back unchanged.
"""

from __future__ import annotations

import base64
import binascii
import copy
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import msgspec

from timeline._formats import CONVERSATION_START_TEXT, MISSING_RESULT_TEXT, to_openai_responses
from timeline._model import (
    REACT_TOOL_CALL,
    REASONING_MIME,
    TURN_HEADER,
    Block,
    EmptyPromptError,
    InvalidBlockError,
    check_json,
    given_call_id,
    openai_compaction,
    openai_reasoning,
    provider_block,
    register_block_type,
)
from timeline._model import constructors as B
from timeline._render import RenderedContext
from timeline.integrations import InvalidItemError

__all__ = [
    "ITEM",
    "OPAQUE",
    "PART",
    "Item",
    "as_item",
    "as_items",
    "item_blocks",
    "item_key",
    "model_input",
    "rendered_items",
    "stored_items",
    "unsaved_tail",
]

Item = dict[str, Any]
ITEM = "oa_item"
PART = "oa_part"
OPAQUE = "openai.item"
register_block_type(OPAQUE, role="assistant", label="[OPENAI ITEM]")


def as_item(item: Any, where: str = "item") -> Item:
    """A JSON-plain copy of an item (a dict or an SDK object); :class:`InvalidItemError`
    when it is not one the timeline can hold (see :func:`as_items`)."""
    return as_items([item], where)[0]


def as_items(items: Sequence[Any], where: str = "items") -> list[Item]:
    """JSON-plain copies of ``items`` (dicts or SDK objects), checked before anything is
    written: :class:`InvalidItemError`, naming the item and the path inside it, for an
    item that is not a mapping, holds a value JSON has no form for (bytes, NaN), a lone
    surrogate, or is nested deeper than a block's ``meta`` takes."""
    out: list[Item] = []
    for i, item in enumerate(items):
        dump = getattr(item, "model_dump", None)
        if callable(dump):
            item = dump(mode="json", exclude_none=True, by_alias=True)
        if not isinstance(item, Mapping):
            raise InvalidItemError(
                f"{where}[{i}]: a session item must be a mapping, not {type(item).__name__}"
            )
        try:
            out.append(json.loads(json.dumps(item)))
        except (TypeError, ValueError, RecursionError) as exc:
            raise InvalidItemError(f"{where}[{i}] is not JSON: {exc}") from exc
    check_json(out, where, InvalidItemError)  # the depth an item has in a block's meta
    return out


def content_text(content: Any) -> str:
    """The text of a message's ``content`` (a string or a list of parts)."""
    if isinstance(content, str):
        return content
    texts = []
    for part in content if isinstance(content, list) else ():
        if isinstance(part, dict) and part.get("type") in ("input_text", "output_text", "text"):
            texts.append(str(part.get("text", "")))
        elif isinstance(part, dict) and part.get("type") == "refusal":
            texts.append(str(part.get("refusal", "")))
    return "\n".join(texts)


def _images(content: Any) -> list[tuple[str, bytes]]:
    out = []
    for part in content if isinstance(content, list) else ():
        url = part.get("image_url") if isinstance(part, dict) else None
        if isinstance(url, str) and url.startswith("data:") and ";base64," in url:
            head, data = url[5:].split(";base64,", 1)
            try:
                out.append((head, base64.b64decode(data)))
            except (binascii.Error, ValueError):
                continue
    return out


_MODELLED = frozenset({"message", "function_call", "function_call_output"})


def _kind(item: Mapping[str, Any]) -> str:
    return str(item.get("type") or "message")


def opaque_block(item: Item) -> Block:
    """An ``openai.item`` block: the item as JSON data (counted, sent back unchanged)."""
    data = msgspec.json.encode(item)
    return Block(type=OPAQUE, author="assistant", mime=REASONING_MIME, data=data)


def _message_blocks(item: Item) -> list[Block]:
    role = item.get("role")
    text = content_text(item.get("content"))
    if role == "assistant":
        return [B.assistant_completion(text)]
    if role == "user":
        out = [B.user_prompt(text)]
        for k, (mime, data) in enumerate(_images(item.get("content"))):
            out.append(B.user_attachment(name=f"image-{k + 1}", mime=mime, data=data))
        return out
    return [B.note(text)]  # system / developer items inside the history


def _native_blocks(item: Item, calls: set[str]) -> list[Block]:
    kind = _kind(item)
    if kind == "message":
        return _message_blocks(item)
    if kind == "function_call":
        args = json.loads(item.get("arguments") or "{}")
        if not isinstance(args, dict) or not item.get("name") or not item.get("call_id"):
            raise InvalidBlockError("not a function call the timeline can hold")
        return [B.tool_call(str(item["name"]), args, call_id=str(item["call_id"]))]
    if kind == "function_call_output" and str(item.get("call_id")) in calls:
        output = item.get("output", "")
        text = output if isinstance(output, str) else content_text(output)
        return [B.tool_result(str(item["call_id"]), text)]
    if kind == "reasoning":  # sent back unchanged, counted in the budget
        return [openai_reasoning(item)]
    if kind == "compaction":  # provider-native compaction: sent back unchanged
        return [openai_compaction(item)]
    if kind in _MODELLED:  # a message or call output the timeline cannot hold as one
        raise InvalidBlockError(f"not a {kind} the timeline can hold")
    # hosted tools, MCP, computer use, custom tools...: an opaque provider block (its text
    # form searchable and summarized, a call never cut from its output)
    if kind.endswith(("_output", "_response")):  # what the client sends back
        return [provider_block("responses", item, side="user")]
    return [provider_block("responses", item)]


def item_blocks(item: Item, calls: set[str], *, opaque: bool = False) -> list[Block]:
    """The blocks of one stored item (``calls``: the call ids of the live history; an
    output without its call is kept opaque, and every item when ``opaque``). The first
    carries the item."""
    try:
        blocks = [opaque_block(item)] if opaque else _native_blocks(item, calls)
    except (InvalidBlockError, ValueError, TypeError, KeyError):
        blocks = [opaque_block(item)]
    head, *rest = blocks
    head = msgspec.structs.replace(head, meta={**head.meta, ITEM: item})
    return [head, *(msgspec.structs.replace(b, meta={**b.meta, PART: True}) for b in rest)]


def starts_turn(item: Mapping[str, Any]) -> bool:
    """A user message opens a turn."""
    return _kind(item) == "message" and item.get("role") == "user"


def item_key(item: Mapping[str, Any]) -> str:
    """What identifies an item across the SDK's copies of it (output-only fields such as
    ``status`` or ``logprobs`` may differ between a stored item and the model input)."""
    kind = _kind(item)
    fields = [kind, str(item.get("role", "")), str(item.get("id", "")), str(item.get("call_id"))]
    if kind == "message":
        fields.append(content_text(item.get("content")))
    elif kind in ("function_call", "function_call_output"):
        fields += [str(item.get("name", "")), str(item.get("arguments", ""))]
        output = item.get("output", "")
        fields.append(output if isinstance(output, str) else content_text(output))
    else:
        fields.append(json.dumps(item, sort_keys=True, default=str))
    return "\x00".join(fields)


def rendered_items(blocks: Sequence[Block]) -> list[Item]:
    """Responses input items rendered from ``blocks`` (no system prompt): the blocks'
    own items only, never the ``[conversation start]`` message a whole payload opening
    on the assistant side gets (these items go in the middle of a history)."""
    try:
        items = to_openai_responses("", tuple(blocks))
    except EmptyPromptError:
        return []
    if items and _is_lead(items[0]) and not (blocks and blocks[0].text == CONVERSATION_START_TEXT):
        items = items[1:]
    # an assistant message without a response id is valid input in the easy form only
    return [
        {"type": "message", "role": "assistant", "content": content_text(i["content"])}
        if i.get("role") == "assistant" and "id" not in i
        else i
        for i in items
    ]


def _is_lead(item: Item) -> bool:
    """The message a payload puts before an assistant message it opens on."""
    return item.get("role") == "user" and content_text(item.get("content")) == (
        CONVERSATION_START_TEXT
    )


def _rendered_one(block: Block) -> list[Item]:
    """``block`` rendered, under the call id the SDK knows (the stored items use it)."""
    items = rendered_items([block])
    if block.type == REACT_TOOL_CALL:  # not the synthetic output the payload adds
        items = [i for i in items if i.get("type") == "function_call"]
    given = given_call_id(block)
    if given != block.call_id:
        items = [{**i, "call_id": given} if "call_id" in i else i for i in items]
    return items


def stored_items(
    view: RenderedContext, held: Mapping[str, Block], *, exact: bool = False
) -> list[Item]:
    """The items of a rendered view, as stored: the summary (in the form the model gets
    it) where compaction replaced items, each other item exactly as it was added, and
    the rendered form of a block that holds no item (another adapter's, a seeded
    summary). ``held``: the timeline's blocks by id. A block the render changed
    (truncated it to fit the budget, or hid it) is rendered too, unless ``exact``: then
    its item is given as it was added (what a session's ``get_items`` gives back)."""
    out: list[Item] = []
    given = False  # the current item was given as stored (its parts go with it)
    for block in view.blocks[: view.stable_count]:
        if block.type == TURN_HEADER:
            continue
        if block.meta.get(PART):
            if not given:
                out += _rendered_one(block)
            continue
        stored = held.get(block.id)
        item = stored.meta.get(ITEM) if stored is not None else None
        given = isinstance(item, dict) and (exact or stored == block)
        if isinstance(item, dict) and given:
            out.append(copy.deepcopy(item))
        else:
            out += _rendered_one(block)
    return out


def unsaved_tail(items: Sequence[Item], stored: Sequence[Item], depth: int = 8) -> list[Item]:
    """The items at the end of ``items`` (a model input) that are not stored yet.

    The input is the session history, then the run's new items, which the SDK stores as
    it goes; so the stored items end somewhere in the input. That place is the one whose
    preceding input agrees longest with the end of ``stored`` (up to ``depth`` items; the
    latest wins a tie). When the end of ``stored`` is not in the input at all (a
    ``session_input_callback`` reshaped the history) the items not stored are those
    left once each stored item has claimed one equal input item."""
    if not stored:
        return list(items)
    keys = [item_key(i) for i in items]
    ends = [item_key(i) for i in stored[-depth:]]
    best, best_at = 0, -1
    for at in range(len(keys) - 1, -1, -1):
        n = 0
        while n < len(ends) and at - n >= 0 and keys[at - n] == ends[-1 - n]:
            n += 1
        if n > best:
            best, best_at = n, at
    if best_at >= 0:
        return list(items[best_at + 1 :])
    pool: dict[str, int] = {}
    for item in stored:
        k = item_key(item)
        pool[k] = pool.get(k, 0) + 1
    tail = []
    for item, k in zip(items, keys, strict=True):
        if pool.get(k, 0) > 0:
            pool[k] -= 1
        else:
            tail.append(item)
    return tail


def model_input(items: Iterable[Item]) -> list[Item]:
    """Items made valid for a model call: an output without its call is left out and a
    call without an output gets the "no result recorded" one (as the payloads do)."""
    listed = list(items)
    calls = {str(i.get("call_id")) for i in listed if _kind(i) == "function_call"}
    answered = {str(i.get("call_id")) for i in listed if _kind(i) == "function_call_output"}
    out: list[Item] = []
    for item in listed:
        kind = _kind(item)
        if kind == "function_call_output" and str(item.get("call_id")) not in calls:
            continue
        out.append(item)
        call_id = str(item.get("call_id"))
        if kind == "function_call" and call_id not in answered:
            out.append(
                {"type": "function_call_output", "call_id": call_id, "output": MISSING_RESULT_TEXT}
            )
    return out


def counting_blocks(items: Iterable[Item]) -> list[Block]:
    """Blocks that cost what ``items`` cost in a prompt (for a render's volatile tail)."""
    out = []
    for item in items:
        kind = _kind(item)
        if kind == "message":
            out.append(B.note(content_text(item.get("content"))))
        else:
            out.append(opaque_block(item))
    return out
