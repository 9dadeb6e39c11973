"""What a clearing left of a timeline's blocks."""

from __future__ import annotations

from timeline import (
    Timeline,
    blocks,
)

SYSTEM = "You are a coding agent."


def read(tl: Timeline, path: str, chars: int, tool: str = "read_file") -> str:
    """A call of ``tool`` on ``path`` and its result of ``chars`` characters; the result's
    path."""
    call = tl.append(blocks.tool_call(tool, {"path": path}))
    body = f"contents of {path}\n" + "x" * chars
    return tl.append(blocks.tool_result(call.call_id or "", body, tool_id=tool)).path


def shown(tl: Timeline) -> dict[str, str]:
    """Each rendered block's path and the text it shows (the last render's)."""
    return {b.path: b.text for b in tl.render(SYSTEM).blocks}
