"""What the importers share: the timeline builder, the result type, and checks of
untrusted input that name where a bad value is (``messages[3].content[1]: ...``)."""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import attrs
import msgspec

from timeline._core import Timeline
from timeline._formats import call_params
from timeline._model import (
    Block,
    CallIds,
    InvalidBlockError,
    Provider,
    block_type,
    provider_block,
    reference_meta,
)
from timeline._model import constructors as B

__all__ = [
    "Builder",
    "ImportedConversation",
    "arguments",
    "check_list",
    "check_text",
    "data_url",
    "dumps_value",
    "fail",
    "hashable_type",
    "image_url",
    "input_object",
    "json_type",
    "located",
    "split_messages",
    "text_parts",
]


def fail(where: str, what: str) -> InvalidBlockError:
    return InvalidBlockError(f"{where}: {what}")


def split_messages(data: Any, where: str = "messages") -> tuple[list[Any], str]:
    system = ""
    if isinstance(data, Mapping):
        sys_value = data.get("system", "")
        if isinstance(sys_value, list):
            system = "\n".join(str(p.get("text", "")) for p in sys_value if isinstance(p, Mapping))
        elif isinstance(sys_value, str):
            system = sys_value
        data = data.get("messages")
    if not isinstance(data, list):
        raise fail(where, "expected a list of messages (or an object with 'messages')")
    return data, system


def data_url(url: str, where: str) -> tuple[str, bytes]:
    if not url.startswith("data:") or ";base64," not in url:
        raise fail(where, "only base64 data: URLs can be imported (remote URLs are not fetched)")
    head, _, payload = url.partition(";base64,")
    try:
        return head[5:], base64.b64decode(payload, validate=True)
    except binascii.Error as exc:
        raise fail(where, f"invalid base64 data: {exc}") from exc


class Builder:
    """The timeline an import builds, with what the import tracks across messages: the
    turn, the attachment count, the system prompt. Call ids go in as recorded: the
    timeline gives a reused one a unique internal id (:mod:`timeline._model.call_ids`)."""

    def __init__(self, conversation_id: str) -> None:
        self.tl = Timeline(conversation_id)
        self.in_turn = False
        self.attachments = 0
        self.system: list[str] = []
        self.calls = CallIds()
        """The calls appended so far, as the timeline knows them: which call a result
        answers, so it can be named after that call's tool."""
        self.names: dict[str, str] = {}
        """An internal call id -> its tool's name: a result gets it as its ``tool_id``
        (provider formats do not repeat the name on a result)."""

    def append(self, block: Block, where: str) -> Block:
        """Append ``block``; an error names ``where``."""
        with located(where):
            stored = self.tl.append(block)
        render = block_type(stored.type).render
        self.calls.track(stored, render)
        if stored.call_id and stored.tool_id and render == "tool_call":
            self.names[stored.call_id] = stored.tool_id
        return stored

    def results(self, blocks: Sequence[Block]) -> None:
        """Append the result blocks of one call together, each named after its call's
        tool when the provider's result did not say it."""
        named = []
        for b in blocks:
            call = self.calls.answered_by(b.call_id)
            if b.tool_id is None and call in self.names:
                b = msgspec.structs.replace(b, tool_id=self.names[call])
            named.append(b)
        for stored in self.tl.extend(named):
            self.calls.track(stored, block_type(stored.type).render)

    def provider_item(
        self,
        provider: Provider,
        item: Any,
        where: str,
        side: str = "assistant",
        kind: str | None = None,
    ) -> None:
        """An opaque provider block for ``item``."""
        self.ensure_turn()
        with located(where):
            block = provider_block(
                provider, item, side="user" if side == "user" else "assistant", kind=kind
            )
        self.append(block, where)

    def refer(
        self, where: str, name: str = "", extra: Mapping[str, Any] | None = None, **ref: Any
    ) -> None:
        """A user attachment referencing media by URL or file id (nothing is fetched);
        ``extra`` is further meta (an image's ``detail``)."""
        self.attachments += 1
        with located(where):
            meta = {**reference_meta(ref.pop("media"), **ref), **(extra or {})}
        block = Block(
            type="user.attachment",
            author="user",
            mime="image/*" if meta["media"] == "image" else "application/octet-stream",
            meta={"name": name or f"attachment-{self.attachments}", **meta},
        )
        self.append(block, where)

    def user_turn(self) -> None:
        self.tl.begin_turn()
        self.in_turn = True

    def ensure_turn(self) -> None:
        if not self.in_turn:
            self.user_turn()

    def attach(self, mime: str, data: bytes, name: str = "", **meta: Any) -> None:
        self.attachments += 1
        self.tl.append(
            B.user_attachment(
                name=name or f"attachment-{self.attachments}", mime=mime, data=data, **meta
            )
        )


def text_parts(content: Any, where: str, kinds: tuple[str, ...] = ("text",)) -> str:
    """Text parts (``{"type": "text", "text": ...}``; refusals too) joined by newlines."""
    texts = []
    for j, part in enumerate(content):
        kind = part.get("type") if isinstance(part, Mapping) else None
        if kind in kinds:
            texts.append(str(part.get("text", "")))
        elif kind == "refusal":
            texts.append(str(part.get("refusal", "")))
        else:
            raise fail(f"{where}[{j}]", f"expected a text part, got {kind!r}")
    return "\n".join(texts)


@attrs.frozen
class ImportedConversation:
    """What an import produced: the timeline, the system prompt it carried (pass it to
    ``render()``; empty when none) and how many system messages it held."""

    timeline: Timeline
    system: str
    system_messages: int


# -- type checks of untrusted input (each names where the bad value is) -----------------


def check_text(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise fail(where, f"expected a string, got {json_type(value)}")
    return value


def check_list(value: Any, where: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise fail(where, f"expected a list, got {json_type(value)}")
    return value


def image_url(value: Any, where: str) -> str:
    if not isinstance(value, Mapping):
        raise fail(f"{where}.image_url", f"expected an object with url, got {json_type(value)}")
    return check_text(value.get("url", ""), f"{where}.image_url.url")


def arguments(raw: Any, where: str) -> Any:
    """OpenAI tool-call arguments: a JSON text, whose object is the call's params. Text
    that is not a JSON object (models write broken JSON, and the API sends it back as
    written) is kept whole as ``{"_raw": text}`` (:func:`~timeline._formats.reply.call_params`);
    the call keeps its provider's own form, so that provider gets the text back exactly.
    Only a non-string is refused: no provider sends one."""
    if raw is not None and not isinstance(raw, str):
        raise fail(where, f"expected a JSON string, got {json_type(raw)}")
    return call_params(raw)[0]


def input_object(value: Any, where: str) -> Any:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise fail(where, f"expected a JSON object, got {json_type(value)}")
    return value


def dumps_value(value: Any, where: str) -> str:
    try:
        return json.dumps(value, allow_nan=False)
    except (ValueError, TypeError, RecursionError) as exc:
        raise fail(where, f"cannot be stored as text: {exc}") from exc


def hashable_type(part: Mapping[str, Any]) -> bool:
    return isinstance(part.get("type"), str | None)


def json_type(value: Any) -> str:
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}
    if value is None:
        return "null"
    for kind, name in names.items():
        if isinstance(value, kind):
            return name
    return "a number" if isinstance(value, int | float) else type(value).__name__


@contextmanager
def located(where: str) -> Iterator[None]:
    """Errors from the timeline (a bad params value) and a parser's recursion limit as
    InvalidBlockError naming the element."""
    try:
        yield
    except InvalidBlockError as exc:
        if str(exc).startswith("messages"):
            raise
        raise fail(where, str(exc)) from exc
    except RecursionError as exc:
        raise fail(where, "nested too deeply") from exc
