"""Snapshots of every payload format for the canonical timeline (plain data only)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from syrupy.assertion import SnapshotAssertion
from syrupy.extensions.json import JSONSnapshotExtension

from tests.helpers.canonical import SYSTEM, canonical_timeline


@pytest.fixture
def snapshot_json(snapshot: SnapshotAssertion) -> SnapshotAssertion:
    return snapshot.use_extension(JSONSnapshotExtension)


def _render() -> Any:
    return canonical_timeline().render(SYSTEM)


def test_canonical_timeline_has_every_feature() -> None:
    """The canonical timeline shows a summary, attachment, parallel calls, note, custom
    block and a hidden block, so the snapshots below cover them."""
    view = _render()
    types = [b.type for b in view.blocks]
    assert types[0] == "conv.range.summary"
    for wanted in ("user.attachment", "react.note", "react.plan"):
        assert wanted in types
    assert any(b.hidden for b in view.blocks)
    assert sum(1 for b in view.blocks if b.turn_id == "t2" and b.type == "react.tool.call") == 2


def test_anthropic_payload(snapshot_json: SnapshotAssertion) -> None:
    """to_anthropic(): system blocks, native tool blocks, cache_control on checkpoints."""
    assert snapshot_json == _render().to_anthropic()


def test_openai_chat_payload(snapshot_json: SnapshotAssertion) -> None:
    """to_openai(): Chat Completions messages with tool_calls and tool messages."""
    assert snapshot_json == _render().to_openai()


def test_openai_responses_payload(snapshot_json: SnapshotAssertion) -> None:
    """to_openai_responses(): input items with function_call / function_call_output."""
    assert snapshot_json == _render().to_openai_responses()


def test_document_payload(snapshot_json: SnapshotAssertion) -> None:
    """to_document(): v2's one-message layout with image parts and checkpoints."""
    assert snapshot_json == _render().to_document()


def test_text_rendering(snapshot: SnapshotAssertion) -> None:
    """to_text(): v2's document rendering as a string."""
    assert snapshot == _render().to_text()


def test_renders_are_byte_identical() -> None:
    """Two timelines built the same way give byte-identical payloads, as does rendering
    the same timeline twice."""
    a, b = canonical_timeline(), canonical_timeline()
    dump = lambda v: json.dumps(v.to_anthropic(), sort_keys=False).encode()  # noqa: E731
    first = dump(a.render(SYSTEM))
    assert first == dump(b.render(SYSTEM))
    assert first == dump(a.render(SYSTEM))
    assert json.dumps(a.render(SYSTEM).to_openai()) == json.dumps(b.render(SYSTEM).to_openai())
