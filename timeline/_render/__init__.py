"""timeline._render."""

from __future__ import annotations

from timeline._render.context import (
    RenderedContext,
    draw_pages_with,
)
from timeline._render.prepare import (
    TOOLS_PROMPT_TOKENS,
)
from timeline._render.settings import (
    Clock,
    Hook,
    IdFactory,
    Settings,
    timestamp,
)

__all__ = [
    "Clock",
    "Hook",
    "IdFactory",
    "RenderedContext",
    "Settings",
    "TOOLS_PROMPT_TOKENS",
    "draw_pages_with",
    "timestamp",
]
