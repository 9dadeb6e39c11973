"""``timeline export``: a stored conversation, whole, as provider JSON.

Every block the conversation ever held (the turn log: evicted history included, summaries
left out) is rendered without a budget into the shape ``timeline import`` reads: Anthropic
``{"system", "messages"}``, Chat Completions messages (the system prompt first) or
Responses input items, with the tool definitions of the conversation's last render.
Hidden blocks are exported with their own text, and no cache checkpoint is marked (the
tools carry none either). Importing the file gives the same blocks in the same turns (new
ids and timestamps; ``meta`` has no place in provider JSON), except what belongs to
another provider (Anthropic thinking in an OpenAI export), which a render to that
provider leaves out too.
"""

from __future__ import annotations

import argparse
import warnings
from collections.abc import Sequence
from typing import Any, Literal

import attrs
import msgspec

from timeline._cli.output import emit_json
from timeline._cli.stored import open_store, read_system, require
from timeline._compaction import CompactionPolicy, NoBudgetWarning
from timeline._core import Timeline
from timeline._model import Block, TimelineSnapshot, TimelineState, ToolSpec

__all__ = ["cmd_export", "conversation_payload"]

Format = Literal["anthropic", "openai", "responses"]


def conversation_payload(
    conversation_id: str,
    log: Sequence[Block],
    system: str,
    fmt: Format,
    tools: tuple[ToolSpec, ...] = (),
) -> Any:
    """``log`` (a turn log, in order) as one request body of ``fmt`` with ``tools``,
    nothing compacted, truncated or hidden."""
    shown = [msgspec.structs.replace(b, hidden=False) if b.hidden else b for b in log]
    tl = Timeline(conversation_id, policy=CompactionPolicy(enabled=False))
    tl.restore(TimelineSnapshot(conversation_id, shown, TimelineState()))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoBudgetWarning)
        view = attrs.evolve(
            tl.render(system, tools=tools), cache_points=(), system_cached=False, tools_cached=False
        )
    if fmt == "anthropic":
        return view.to_anthropic()
    if fmt == "openai":
        return view.to_openai()
    return view.to_openai_responses()


def cmd_export(args: argparse.Namespace) -> int:
    """Print the whole of ``args.conversation`` as ``--format`` JSON."""
    store = open_store(args.db)
    try:
        require(store, args.conversation)
        log = store.turn_log(args.conversation)
        found = store.load_window(args.conversation)
    finally:
        store.close()
    state = found[1].state if found is not None else TimelineState()
    last = state.last_render
    system = read_system(args.system) if args.system is not None else last.system or ""
    emit_json(conversation_payload(args.conversation, log, system, args.format, last.tools))
    return 0
