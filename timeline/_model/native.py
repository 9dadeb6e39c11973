"""Provider content kept exactly: opaque provider blocks and native forms.

Nothing a provider produced is refused, and nothing is lost. What the library models
(text, tool calls and results, media, thinking) becomes the usual blocks; what it does not
(server tools and their results, MCP, computer use, provider-native compaction, audio
replies, any item type it has never seen) becomes an **opaque provider block**:

* ``data`` holds the provider's item as JSON (:data:`NATIVE_MIME`): its exact value,
  key order and every string as received, never re-sorted (stores keep ``data`` as bytes);
* ``meta["provider"]`` names the payload format it belongs to (``"anthropic"``,
  ``"chat"`` or ``"responses"``) and ``meta["kind"]`` the item's type;
* ``text`` is its text form: a short note saying what it was (``[web search: "query"]``)
  and the text worth finding again (queries, result titles and URLs, code and its output,
  a compaction summary). Other providers and the text/document layouts see this text,
  search indexes it and summaries read it;
* ``call_id`` ties the blocks that belong together (a server tool use and its result, a
  computer call and its output): a compaction never cuts between them.

Four block types hold them: ``provider.item`` (assistant side: what the model or the
provider's server produced), ``provider.input`` (user side: what the client sends back,
such as a computer-call output or an MCP approval), ``provider.compaction`` (the
compaction block or item of provider-native compaction, assistant side) and
``provider.message`` (a whole message of a role the plan does not have: Anthropic's beta
``role: "system"`` message inside ``messages``, sent to Anthropic as a message of its own
in its place, rendered user-side as its text form elsewhere).

A modelled block may also carry a **native form** the same way (``data`` +
:data:`NATIVE_MIME` + ``meta["provider"]``) when the provider's part holds more than the
model keeps: a text with citations, a tool call with a ``caller``, a tool-result part
of a kind the model has no block for. Its own provider gets the native form, every other
format the modelled block.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, Literal, cast, get_args

import msgspec

from timeline._model.block import Block
from timeline._model.errors import InvalidBlockError
from timeline._model.json_text import Error, check_json
from timeline._model.native_text import describe
from timeline._model.reasoning import reasoning_provider

__all__ = [
    "NATIVE_MIME",
    "PROVIDERS",
    "PROVIDER_COMPACTION",
    "PROVIDER_INPUT",
    "PROVIDER_ITEM",
    "PROVIDER_MESSAGE",
    "Provider",
    "anthropic_compaction",
    "anthropic_system_message",
    "as_item",
    "chat_audio_reply",
    "checked_item",
    "encode_item",
    "holds_item",
    "native_item",
    "native_provider",
    "openai_compaction",
    "pair_id",
    "provider_block",
    "tool_output",
    "with_native",
]

PROVIDER_ITEM: Final = "provider.item"
PROVIDER_INPUT: Final = "provider.input"
PROVIDER_COMPACTION: Final = "provider.compaction"
PROVIDER_MESSAGE: Final = "provider.message"
NATIVE_MIME: Final = "application/vnd.block-timeline.native+json"
"""The ``mime`` of a block whose ``data`` is a provider's item as JSON."""

Provider = Literal["anthropic", "chat", "responses"]
PROVIDERS: Final[tuple[Provider, ...]] = get_args(Provider)

_PAIRED_BY_ID: Final = frozenset({"server_tool_use", "mcp_tool_use", "mcp_approval_request"})
"""Item types whose own ``id`` is what their result or answer names."""


def as_item(item: Any, where: str) -> dict[str, Any]:
    """A provider item given as a mapping or an SDK object, as a plain dict (an SDK
    object in its wire form: aliases, no unset fields)."""
    dump = getattr(item, "model_dump", None)
    if callable(dump):
        item = dump(mode="json", exclude_none=True, by_alias=True)
    if not isinstance(item, Mapping):
        raise InvalidBlockError(f"{where}: expected an object, got {type(item).__name__}")
    return dict(item)


def encode_item(item: Mapping[str, Any], where: str) -> bytes:
    """``item`` as JSON bytes, key order kept (refused, naming the path, when it is not
    JSON data: NaN or a set would change on the way)."""
    check_json(dict(item), where)
    try:
        return msgspec.json.encode(item)
    except (TypeError, ValueError, msgspec.EncodeError, RecursionError) as exc:
        raise InvalidBlockError(f"{where}: not JSON data: {exc}") from exc


def holds_item(block: Block) -> bool:
    """Whether ``block``'s ``data`` holds a provider's item as JSON (a provider block, a
    native form, a thinking or reasoning block): what :func:`checked_item` checks."""
    return block.data is not None and (
        block.mime == NATIVE_MIME or reasoning_provider(block) is not None
    )


def checked_item(block: Block, error: Error = InvalidBlockError) -> dict[str, Any]:
    """The item a block's ``data`` holds, checked as every reader needs it: UTF-8, one
    JSON object, JSON values a store keeps as they are (no lone surrogate, 64-bit
    integers), nested at most :data:`~timeline._model.json_text.MAX_DEPTH` deep. Bytes
    that are not are refused with ``error`` (a render, a search or a summary could
    never read them)."""
    data = block.data or b""
    try:
        data.decode("utf-8")
        item = msgspec.json.decode(data)
    except UnicodeDecodeError as exc:
        raise error(f"Block.data is not UTF-8 text: {exc}") from exc
    except (msgspec.DecodeError, RecursionError) as exc:
        raise error(f"Block.data is not a JSON provider item: {exc}") from exc
    if not isinstance(item, dict):
        raise error("Block.data must hold a JSON object (the provider item)")
    check_json(item, "Block.data", error)
    return item


def pair_id(item: Mapping[str, Any]) -> str | None:
    """The id tying ``item`` to the items it belongs with (a call and its result), if any:
    ``call_id``, ``tool_use_id``, ``approval_request_id``, or the ``id`` of an item that
    others answer (``server_tool_use``, ``mcp_tool_use``, ``mcp_approval_request``)."""
    for key in ("call_id", "tool_use_id", "approval_request_id"):
        value = item.get(key)
        if isinstance(value, str) and value:
            return value
    if item.get("type") in _PAIRED_BY_ID and isinstance(item.get("id"), str) and item["id"]:
        return cast("str", item["id"])
    return None


_NOT_TOOL_OUTPUT: Final = frozenset(
    {
        # a model asking for a tool: its call, not what the tool produced
        "server_tool_use",
        "mcp_tool_use",
        "computer_call",
        "local_shell_call",
        "shell_call",
        "apply_patch_call",
        "custom_tool_call",
        "mcp_approval_request",
        # a user's answer, the provider's bookkeeping, a whole message, an audio reply
        "mcp_approval_response",
        "item_reference",
        "compaction",
        "system",
        "audio",
    }
)


def tool_output(block: Block) -> bool:
    """Whether an opaque provider block holds what a tool produced: a server tool's
    result, a hosted tool's item with its results (web or file search, code
    interpreter, an MCP call), what the client sends back for a tool call (a shell's or
    a computer's output), or an item of a kind the library does not know. Not a model's
    request for a tool, a user's approval, a compaction or a whole message: those have
    an author of their own."""
    if block.type not in (PROVIDER_ITEM, PROVIDER_INPUT):
        return False
    return block.meta.get("kind") not in _NOT_TOOL_OUTPUT


def _check_provider(provider: Any) -> Provider:
    if provider not in PROVIDERS:
        raise InvalidBlockError(f"provider must be one of {list(PROVIDERS)}, not {provider!r}")
    return cast("Provider", provider)


def provider_block(
    provider: Provider,
    item: Any,
    *,
    side: Literal["assistant", "user"] = "assistant",
    text: str | None = None,
    kind: str | None = None,
    type: str | None = None,
) -> Block:
    """An opaque provider block for ``item`` (a mapping or an SDK object), kept exactly.

    ``side`` picks ``provider.item`` (assistant) or ``provider.input`` (user); ``type``
    overrides it (``provider.compaction``). ``text`` defaults to the item's text form,
    ``kind`` to its ``type`` field."""
    provider = _check_provider(provider)
    raw = as_item(item, f"{provider} item")
    name = kind or raw.get("type")
    if not isinstance(name, str) or not name:
        raise InvalidBlockError(f"{provider} item: needs a 'type' (or pass kind=...)")
    if type is None:
        type = PROVIDER_ITEM if side == "assistant" else PROVIDER_INPUT
    return Block(
        type=type,
        text=describe(provider, name, raw) if text is None else text,
        author="assistant" if side == "assistant" and type != PROVIDER_INPUT else "user",
        mime=NATIVE_MIME,
        data=encode_item(raw, f"{provider} {name}"),
        call_id=pair_id(raw),
        meta={"provider": provider, "kind": name},
    )


def anthropic_compaction(item: Any) -> Block:
    """A ``provider.compaction`` block for an Anthropic ``compaction`` content block (a
    dict or the SDK object; ``content`` is the summary, null when compaction failed).
    Sent back unchanged, in its place in the assistant message; its text is the summary."""
    raw = as_item(item, "anthropic compaction")
    if raw.get("type") != "compaction":
        raise InvalidBlockError(f"expected a compaction block, got {raw.get('type')!r}")
    if raw.get("content") is not None and not isinstance(raw["content"], str):
        raise InvalidBlockError("a compaction block's content must be a string or null")
    return provider_block("anthropic", raw, type=PROVIDER_COMPACTION)


def anthropic_system_message(message: Any) -> Block:
    """A ``provider.message`` block for an Anthropic beta ``role: "system"`` message
    inside ``messages`` (a dict: ``content`` a string or a list of text, ``tool_addition``
    and ``tool_removal`` blocks, with ``clear_at`` and ``output_config`` when set).

    Anthropic gets it back exactly, as a message of its own in its place (the content
    blocks' ``cache_control`` is dropped: the timeline places its own checkpoints); other
    providers and the text layouts get its text form, ``[system message]`` and its text
    or the tools it adds or removes, user-side."""
    raw = as_item(message, "anthropic system message")
    if raw.get("role") != "system":
        raise InvalidBlockError(f"role: expected 'system', got {raw.get('role')!r}")
    content = raw.get("content")
    if isinstance(content, list):
        for k, part in enumerate(content):
            if not isinstance(part, Mapping) or not isinstance(part.get("type"), str):
                raise InvalidBlockError(f"content[{k}]: expected an object with a 'type'")
        raw["content"] = [{k: v for k, v in p.items() if k != "cache_control"} for p in content]
    elif not isinstance(content, str) and (content is not None or "output_config" not in raw):
        raise InvalidBlockError("content: expected a string or a list of blocks")
    block = provider_block("anthropic", raw, type=PROVIDER_MESSAGE, kind="system")
    return msgspec.structs.replace(block, author="system")


def openai_compaction(item: Any) -> Block:
    """A ``provider.compaction`` block for an OpenAI Responses ``compaction`` item (a dict
    or the SDK object, with its ``encrypted_content``). Output-only fields (``created_by``)
    are dropped so the item is valid as input; sent back unchanged otherwise."""
    raw = as_item(item, "openai compaction")
    if raw.get("type") != "compaction" or not isinstance(raw.get("encrypted_content"), str):
        raise InvalidBlockError("a compaction item needs type 'compaction' and encrypted_content")
    raw.pop("created_by", None)
    return provider_block("responses", raw, type=PROVIDER_COMPACTION)


def chat_audio_reply(audio: Mapping[str, Any]) -> Block:
    """The ``provider.item`` for a Chat assistant message's ``audio``: it keeps what a
    later request sends back (``{"id": ...}``) and, as its text, a note with the
    transcript (what other providers, search and summaries see)."""
    audio_id = audio.get("id")
    if not isinstance(audio_id, str) or not audio_id:
        raise InvalidBlockError("audio.id: expected a non-empty string")
    transcript = audio.get("transcript")
    note = f"[audio reply {audio_id}]"
    if isinstance(transcript, str) and transcript.strip():
        note += f"\n{transcript}"
    return provider_block("chat", {"id": audio_id}, kind="audio", text=note)


def with_native(block: Block, provider: Provider, item: Any) -> Block:
    """``block`` (a modelled text, tool call, tool result or attachment) also keeping the
    provider's exact ``item``: its own provider gets the item, other formats the block."""
    provider = _check_provider(provider)
    raw = as_item(item, f"{provider} item")
    kind = raw.get("type") if isinstance(raw.get("type"), str) else block.type
    meta = {**block.meta, "provider": provider, "kind": kind}
    return msgspec.structs.replace(
        block, mime=NATIVE_MIME, data=encode_item(raw, f"{provider} {kind}"), meta=meta
    )


def native_provider(block: Block) -> Provider | None:
    """The format whose item ``block`` keeps (None: it keeps none, or it is hidden)."""
    if block.data is None or block.mime != NATIVE_MIME:
        return None
    provider = block.meta.get("provider")
    return cast("Provider", provider) if provider in PROVIDERS else None


def native_item(block: Block) -> dict[str, Any] | None:
    """The provider item ``block`` keeps, decoded (a new dict at every call), or None."""
    if block.data is None or block.mime != NATIVE_MIME:
        return None
    item = msgspec.json.decode(block.data)
    return item if isinstance(item, dict) else None
