"""Helpers from the OpenAI Agents SDK's tests, unchanged, each from its module of
openai-agents 0.24.0 (https://github.com/openai/openai-agents-python, MIT licence
(LICENSES.md), Copyright (c) 2025 OpenAI): ``FakeComputer`` from
``tests/test_computer_tool_lifecycle.py``, ``RecordingEditor`` from
``tests/test_tool_custom_data.py``, ``make_shell_call`` from ``tests/utils/hitl.py``."""

from __future__ import annotations

from typing import cast

from agents.computer import Button, Computer, Environment
from agents.editor import ApplyPatchOperation, ApplyPatchResult
from agents.items import TResponseOutputItem


class FakeComputer(Computer):
    def __init__(self, label: str = "computer", dimensions: tuple[int, int] = (1, 1)) -> None:
        self.label = label
        self._dimensions = dimensions

    @property
    def environment(self) -> Environment:
        return "mac"

    @property
    def dimensions(self) -> tuple[int, int]:
        return self._dimensions

    def screenshot(self) -> str:
        return "img"

    def click(self, x: int, y: int, button: Button) -> None:
        return None

    def double_click(self, x: int, y: int) -> None:
        return None

    def scroll(self, x: int, y: int, scroll_x: int, scroll_y: int) -> None:
        return None

    def type(self, text: str) -> None:
        return None

    def wait(self) -> None:
        return None

    def move(self, x: int, y: int) -> None:
        return None

    def keypress(self, keys: list[str]) -> None:
        return None

    def drag(self, path: list[tuple[int, int]]) -> None:
        return None


class RecordingEditor:
    def update_file(self, operation: ApplyPatchOperation) -> ApplyPatchResult:
        return ApplyPatchResult(output=f"Updated {operation.path}")

    def create_file(self, operation: ApplyPatchOperation) -> ApplyPatchResult:
        return ApplyPatchResult(output=f"Created {operation.path}")

    def delete_file(self, operation: ApplyPatchOperation) -> ApplyPatchResult:
        return ApplyPatchResult(output=f"Deleted {operation.path}")


def make_shell_call(
    call_id: str,
    *,
    id_value: str | None = None,
    commands: list[str] | None = None,
    status: str = "in_progress",
) -> TResponseOutputItem:
    """Build a shell_call payload with optional overrides."""
    return cast(
        TResponseOutputItem,
        {
            "type": "shell_call",
            "id": id_value or call_id,
            "call_id": call_id,
            "status": status,
            "action": {"type": "exec", "commands": commands or ["echo test"], "timeout_ms": 1000},
        },
    )
