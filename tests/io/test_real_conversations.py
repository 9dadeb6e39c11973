"""Real recorded conversations (tests/data/real/, provenance in its README): each imports
by CLI and API alike, renders valid payloads for every provider in all five layouts at
several budgets, persists and reloads identically, and gives its own provider every piece
of its content unchanged (issue #24: nothing a provider produced is refused or lost)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import msgspec
import pytest

import index_store
from tests.helpers.provider_rules import (
    RESPONSES_INPUT,
    anthropic_errors,
    chat_errors,
    responses_errors,
    sdk_errors,
)
from tests.helpers.real_atoms import anthropic_atoms, chat_atoms, missing, responses_atoms, strip
from timeline import BudgetError, CompactionPolicy, Timeline
from timeline._cli import main as cli_main
from timeline._compaction.policy import NoBudgetWarning
from timeline._io.importers import ImportedConversation, import_conversation
from timeline._model.names import provider_call_id
from timeline._model.native import native_item, native_provider
from timeline._model.reasoning import reasoning_item, reasoning_provider
from timeline._render.context import RenderedContext

REAL = Path(__file__).parent.parent / "data" / "real"
MANIFEST: list[dict[str, Any]] = json.loads((REAL / "manifest.json").read_text())
CASES = [pytest.param(m, id=m["file"]) for m in MANIFEST]
BUDGETS = (None, 20_000, 3_000, 800)
_OWN = {"anthropic": "anthropic", "openai": "chat", "responses": "responses"}


def _data(case: dict[str, Any]) -> Any:
    return json.loads((REAL / case["file"]).read_text(encoding="utf-8"))


def _import(case: dict[str, Any]) -> ImportedConversation:
    return import_conversation(_data(case), case["format"], "real")


def _render(tl: Timeline, system: str) -> RenderedContext:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoBudgetWarning)  # the unbounded render has none
        return tl.render(system)


def _original(case: dict[str, Any]) -> list[dict[str, Any]]:
    data = _data(case)
    key = "input" if case["format"] == "responses" else "messages"
    items: list[dict[str, Any]] = data[key] if isinstance(data, dict) else data
    return items


_OUTPUT_ONLY = {"custom_tool_call": {"status"}, "custom_tool_call_output": {"status"}}


def _request_form(item: dict[str, Any]) -> dict[str, Any]:
    """A Responses item as its request schema takes it (docs/providers.md): without
    ``created_by``, a custom tool call's ``status`` or a null ``status``."""
    drop = {"created_by", *_OUTPUT_ONLY.get(str(item.get("type")), ())}
    return {k: v for k, v in item.items() if k not in drop and (k, v) != ("status", None)}


def _sent_as(case: dict[str, Any]) -> list[dict[str, Any]]:
    """The original as its provider must get it: a Chat conversation ending with an
    assistant message (a prefill) loses that text's trailing whitespace, as every format
    does (docs/providers.md: Anthropic refuses it); a Responses item goes without the
    fields its request schema refuses."""
    if case["format"] == "responses":
        return [_request_form(i) for i in _original(case)]
    messages = _original(case)
    last = messages[-1] if messages else {}
    content = last.get("content")
    if case["format"] == "openai" and last.get("role") == "assistant" and isinstance(content, str):
        messages[-1] = {**last, "content": last["content"].rstrip()}
    return messages


def test_the_collection_is_broad() -> None:
    """At least 30 conversations from at least 4 sources, every format, and the content
    kinds the issue names."""
    assert len(MANIFEST) >= 30
    assert len({m["file"].split("/")[0] for m in MANIFEST}) >= 4
    assert {m["format"] for m in MANIFEST} == {"anthropic", "openai", "responses"}
    blocks = [b for m in MANIFEST for b in _import(m).timeline.blocks]
    kinds = {b.type for b in blocks} | {str(b.meta.get("kind")) for b in blocks}
    expected = {"assistant.thinking", "assistant.redacted_thinking", "assistant.reasoning"}
    expected |= {"user.attachment", "server_tool_use"}
    expected |= {"web_search_tool_result", "mcp_tool_use", "compaction", "web_search_call"}
    expected |= {"mcp_call", "code_interpreter_call", "image_generation_call"}
    expected |= {"provider.message"}  # Anthropic's beta role: "system" messages
    expected |= {"custom_tool_call", "custom_tool_call_output"}  # Responses custom tools
    assert expected <= kinds, expected - kinds
    assert any(b.mime.startswith("audio/") for b in blocks)  # Chat input_audio
    assert any("url" in b.meta for b in blocks)  # media by URL
    assert max(len(_original(m)) for m in MANIFEST) >= 40  # long tool-using sessions


@pytest.mark.parametrize("case", CASES)
def test_cli_and_api_import_agree(case: dict[str, Any], tmp_path: Path) -> None:
    """``timeline import`` stores the timeline the API builds, and it reloads as it was."""
    db = tmp_path / "real.db"
    path = str(REAL / case["file"])
    assert (
        cli_main(
            ["import", path, "--format", case["format"], "--db", str(db), "--conversation", "real"]
        )
        == 0
    )
    store = index_store.open(f"sqlite:///{db}")
    try:
        loaded = Timeline.load(store, "real")
    finally:
        store.close()
    assert _untimed(loaded.blocks) == _untimed(_import(case).timeline.blocks)


def _untimed(blocks: Any) -> list[Any]:
    """The blocks without their timestamps (each import stamps its own time)."""
    return [msgspec.structs.replace(b, ts="") for b in blocks]


@pytest.mark.parametrize("case", CASES)
def test_persist_and_reload_identically(case: dict[str, Any], store: Any) -> None:
    """Persisted and loaded back (memory, SQLite, PostgreSQL), the timeline has the same
    blocks and payloads."""
    imported = _import(case)
    imported.timeline.persist(store)
    loaded = Timeline.load(store, "real")
    assert loaded.blocks == imported.timeline.blocks
    before = _render(imported.timeline, imported.system)
    after = _render(loaded, imported.system)
    assert after.to_anthropic() == before.to_anthropic()
    assert after.to_openai() == before.to_openai()
    assert after.to_openai_responses() == before.to_openai_responses()


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("budget", BUDGETS)
def test_every_layout_is_valid_at_every_budget(case: dict[str, Any], budget: int | None) -> None:
    """All five layouts render; the three provider payloads validate strictly against the
    SDK param types, whatever the budget compacted away."""
    imported = _import(case)
    tl = imported.timeline
    if budget is not None:
        tl.policy = CompactionPolicy(max_tokens=budget, keep_recent_turns=1)
    try:
        view = _render(tl, imported.system)
    except BudgetError:  # a typed refusal is a valid outcome when the last turn needs more
        assert budget is not None and budget < 1_000
        return
    assert not anthropic_errors(view.to_anthropic())
    assert not chat_errors(view.to_openai())
    assert not responses_errors(_beyond_recorded(view.to_openai_responses(), case))
    assert view.to_text().strip()
    assert view.to_document()
    assert "<html" in view.to_html().lower()


def _beyond_recorded(items: list[dict[str, Any]], case: dict[str, Any]) -> list[dict[str, Any]]:
    """``items`` but those sent exactly as recorded where the recording itself does not
    fit the SDK's param type: the API accepted them (the cassette holds its reply), the
    SDK types are stricter (an ``image_generation_call`` sent back by id and type alone,
    a ``code_interpreter_call`` without ``outputs``)."""
    if case["format"] != "responses":
        return items
    loose = {_canon(i) for i in _original(case) if sdk_errors(RESPONSES_INPUT, [i])}
    return [i for i in items if _canon(i) not in loose]


def _canon(item: Any) -> str:
    return json.dumps(strip(item), sort_keys=True)


def _roles(messages: list[dict[str, Any]]) -> list[str]:
    """The roles of ``messages``, neighbours of one role as one (the API joins them)."""
    roles: list[str] = []
    for m in messages:
        if not roles or roles[-1] != m["role"] or m["role"] == "system":
            roles.append(m["role"])
    return roles


@pytest.mark.parametrize(
    "case",
    [
        pytest.param(m, id=m["file"])
        for m in MANIFEST
        if m["format"] == "anthropic" and any(x.get("role") == "system" for x in _original(m))
    ],
)
def test_anthropic_system_messages_keep_their_place(case: dict[str, Any]) -> None:
    """A ``role: "system"`` message inside ``messages`` goes back to Anthropic exactly (its
    ``cache_control`` aside) and in its place: between the same messages, in order."""
    imported = _import(case)
    sent = _render(imported.timeline, imported.system).to_anthropic()["messages"]
    assert _roles(sent) == _roles(_original(case))
    recorded = [strip(m) for m in _original(case) if m["role"] == "system"]
    assert [strip(m) for m in sent if m["role"] == "system"] == recorded


def _payload_parts(fmt: str, view: RenderedContext) -> list[Any]:
    """Every part or item of the payload, with the parts inside tool results."""
    if fmt == "anthropic":
        messages = view.to_anthropic()["messages"]
        whole = [m for m in messages if m["role"] == "system"]  # kept exactly
        parts = whole + [p for m in messages if m["role"] != "system" for p in m["content"]]
        inner = [q for p in parts if p.get("type") == "tool_result" for q in p.get("content") or []]
        return parts + [q for q in inner if isinstance(q, dict)]
    if fmt == "openai":
        messages = view.to_openai()
        return messages + [c for m in messages for c in m.get("tool_calls") or []]
    items = view.to_openai_responses()
    outputs = [i["output"] for i in items if i.get("type") == "function_call_output"]
    return items + [q for out in outputs if isinstance(out, list) for q in out]


@pytest.mark.parametrize("case", CASES)
def test_own_provider_gets_everything_unchanged(case: dict[str, Any]) -> None:
    """Every text, call, result, part and item of the original reaches its own provider's
    payload; every item kept exactly (thinking, reasoning, server tools, compaction...)
    is sent byte for byte, key order included."""
    imported = _import(case)
    view = _render(imported.timeline, imported.system)
    fmt = case["format"]
    calls = [b for b in imported.timeline.blocks if b.type == "react.tool.call"]
    ids = {
        provider_call_id(b.call_id or ""): b.meta.get("source_call_id", b.call_id) for b in calls
    }
    if fmt == "anthropic":
        lost = missing(
            anthropic_atoms(_original(case)), anthropic_atoms(view.to_anthropic()["messages"], ids)
        )
    elif fmt == "openai":
        lost = missing(chat_atoms(_sent_as(case)), chat_atoms(view.to_openai(), ids))
    else:
        lost = missing(
            responses_atoms(_sent_as(case)), responses_atoms(view.to_openai_responses(), ids)
        )
    assert not lost
    sent = [json.dumps(strip(p), ensure_ascii=False) for p in _payload_parts(fmt, view)]
    for block in imported.timeline.blocks:
        item = native_item(block) if native_provider(block) == _OWN[fmt] else None
        if item is None and reasoning_provider(block) == _OWN[fmt]:
            item = reasoning_item(block)
        if item is not None and block.type == "react.tool.call":  # sent under its safe id
            item["call_id" if fmt == "responses" else "id"] = provider_call_id(block.call_id or "")
        if item is not None and fmt == "responses":
            item = _request_form(item)
        if item is not None:
            assert json.dumps(item, ensure_ascii=False) in sent, item
