"""Tool names a provider would see as one are refused where the tools are given; a
called safe name runs the one tool it stands for."""

from __future__ import annotations

import pytest

from timeline import HeuristicCounter, Timeline, ToolNameError
from timeline._driver import ModelReply, ReactDriver, ToolCallRequest
from timeline._model.names import provider_tool_names


def test_two_names_with_one_safe_form_are_refused_at_construction() -> None:
    """``fs.delete`` and ``fs:delete`` both go out as ``fs_delete``: ReactDriver refuses
    the pair when it is built, naming both, before any model call."""
    calls: list[object] = []
    tools = {"fs.delete": lambda p: "deleted", "fs:delete": lambda p: "also deleted"}
    with pytest.raises(ToolNameError, match=r"'fs\.delete' and 'fs:delete'.*'fs_delete'"):
        ReactDriver(Timeline("t", token_counter=HeuristicCounter()), calls.append, tools)
    assert calls == []


def test_a_name_equal_to_another_names_safe_form_is_refused() -> None:
    """``fs_delete`` beside ``fs.delete`` is the same provider name twice: refused."""
    with pytest.raises(ToolNameError):
        provider_tool_names(["fs_delete", "fs.delete"])
    assert provider_tool_names(["fs.delete", "fs.read"]) == {
        "fs_delete": "fs.delete",
        "fs_read": "fs.read",
    }


def test_a_called_safe_name_runs_its_tool() -> None:
    """A model calling ``fs_read`` (the safe form it was declared under) runs
    ``fs.read``."""
    replies = iter(
        [ModelReply(tool_calls=(ToolCallRequest("fs_read", {"p": "a"}),)), ModelReply(text="ok")]
    )
    tl = Timeline("t", token_counter=HeuristicCounter())
    ReactDriver(tl, lambda v: next(replies), {"fs.read": lambda p: f"read {p['p']}"}).run_turn("go")
    results = [b.text for b in tl.blocks if b.type == "react.tool.result"]
    assert results == ["read a"]
