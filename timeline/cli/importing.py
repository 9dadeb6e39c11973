"""``timeline import``: a provider's messages file into a new stored conversation, its
format detected when ``--format`` is left out, its system prompt kept with it.

Detection reads the start of the file as a stream (never the whole of it) and looks for
what only one format has: Anthropic's ``tool_use`` / ``tool_result`` / ``thinking`` parts
and top-level ``system``; Chat Completions' ``tool_calls``, ``tool`` messages and
``image_url`` parts; Responses' typed items (``function_call``, ``message``...),
``input_text`` parts and top-level ``input``. A file of plain text messages reads the same
in every format and imports as Chat Completions.
"""

from __future__ import annotations

import argparse
import os
from typing import IO, Any, Final

import ijson

from timeline.cli.output import printable, progress
from timeline.cli.stored import InputError, open_store
from timeline.model.block import TURN_HEADER
from timeline.model.errors import InvalidBlockError, StoreUnavailableError, TimelineError
from timeline.render.usage import plural

__all__ = ["FORMATS", "cmd_import", "detect_format"]

FORMATS: Final = ("openai", "anthropic", "responses")

_ITEMS: Final = ("item", "messages.item", "input.item")
_TOP_KEYS: Final = {"system": "anthropic", "input": "responses", "instructions": "responses"}
_ITEM_KEYS: Final = {"tool_calls": "openai", "tool_call_id": "openai", "function_call": "openai"}
_ITEM_TYPES: Final = frozenset(
    {"message", "function_call", "function_call_output", "reasoning", "item_reference"}
    | {"custom_tool_call", "custom_tool_call_output", "computer_call", "compaction"}
)
_PART_TYPES: Final = {
    **dict.fromkeys(("tool_use", "tool_result", "thinking", "redacted_thinking"), "anthropic"),
    **dict.fromkeys(("image", "document", "server_tool_use", "search_result"), "anthropic"),
    **dict.fromkeys(("input_text", "output_text", "input_image", "input_file"), "responses"),
    **dict.fromkeys(("image_url", "input_audio"), "openai"),
}
_LOOK_AT: Final = 200_000
"""Parser events read at most before giving up (the first few hundred messages)."""


def _evidence(prefix: str, event: str, value: Any) -> str | None:
    """The format one parser event proves, if any."""
    if event == "map_key" and prefix == "":
        return _TOP_KEYS.get(value)
    if event == "map_key" and prefix in _ITEMS:
        return _ITEM_KEYS.get(value)
    if event != "string":
        return None
    head, _, leaf = prefix.rpartition(".")
    if head in _ITEMS and leaf == "type":
        return "responses" if value in _ITEM_TYPES else None
    if head in _ITEMS and leaf == "role" and value == "tool":
        return "openai"
    if leaf == "type" and head.endswith(".content.item"):
        return _PART_TYPES.get(value)
    return None


def detect_format(fh: IO[bytes]) -> str | None:
    """The format the file's first messages prove (None: plain messages that any format
    reads alike, or not JSON at all). Reads from the current position; rewinds to it."""
    from timeline.io.stream import json_events

    start = fh.tell()
    found: str | None = None
    try:
        for n, (prefix, event, value) in enumerate(json_events(fh)):
            found = _evidence(prefix, event, value)
            if found is not None or n >= _LOOK_AT:
                break
    except (ijson.JSONError, ijson.IncompleteJSONError, UnicodeDecodeError, ValueError):
        found = None
    except InvalidBlockError:  # nested too deeply: the import names it
        found = None
    fh.seek(start)
    return found


def _size(fh: Any) -> int | None:
    try:
        return os.fstat(fh.fileno()).st_size or None
    except OSError:
        return None


def _exists(store: Any, conversation: str, db: str) -> None:
    if store is not None and store.load_window(conversation) is not None:
        raise TimelineError(
            f"conversation {conversation!r} already exists in {db}; "
            "import into a new --conversation id"
        )


def _read(fh: IO[bytes], fmt: str, args: argparse.Namespace) -> Any:
    """The imported conversation; a format error says which format the file looks like
    when that is another one."""
    from timeline.io.stream import import_stream

    with progress(f"importing {os.path.basename(args.file)}", _size(fh)) as advance:
        try:
            return import_stream(fh, fmt, args.conversation, advance)  # type: ignore[arg-type]
        except UnicodeDecodeError as exc:
            raise InputError(f"{args.file}: not valid JSON: not UTF-8 ({exc})") from exc
        except TimelineError as exc:
            if str(exc).startswith("not valid JSON"):
                raise InputError(f"{args.file}: {exc}") from exc
            fh.seek(0)
            guess = detect_format(fh) if args.format else None
            if isinstance(exc, InvalidBlockError) and guess not in (None, fmt):
                raise InvalidBlockError(f"{exc} (the file looks like --format {guess})") from exc
            raise


def cmd_import(args: argparse.Namespace) -> int:
    """Import ``FILE`` into the new conversation ``--conversation`` of ``--db``."""
    try:
        fh = open(args.file, "rb")  # noqa: SIM115 (closed below, after the store work)
    except OSError as exc:
        raise InputError(f"FILE {args.file}: cannot read it: {exc.strerror}") from exc
    with fh:
        fmt = args.format or detect_format(fh) or "openai"
        try:
            store = open_store(args.db)
        except StoreUnavailableError:
            store = None  # a new store: created once the file has been read and checked
        try:
            _exists(store, args.conversation, args.db)
            imported = _read(fh, fmt, args)
            tl = imported.timeline
            if all(b.type == TURN_HEADER for b in tl.blocks):
                raise InputError(f"FILE {args.file}: no messages in it; nothing imported")
            tl.render(imported.system)  # keeps the system prompt with the conversation
            store = store or open_store(args.db, create=True)
            _exists(store, args.conversation, args.db)
            version = tl.persist(store)
        finally:
            if store is not None:
                store.close()
    notes = [] if args.format else [f"format {fmt} (detected)"]
    if imported.system:
        notes.append(
            f"its system prompt ({plural(imported.system_messages, 'system message')}, "
            f"{plural(len(imported.system), 'char')}) is kept with it"
        )
    print(
        f"imported {plural(len(tl.blocks), 'block')} into {printable(repr(args.conversation))} "
        f"(version {version})" + "".join(f"; {n}" for n in notes)
    )
    return 0
