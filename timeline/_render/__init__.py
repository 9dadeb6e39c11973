"""timeline._render."""

from __future__ import annotations

# modules that are part of the interface as namespaces (``pipeline.x(...)``)
from timeline._render import pipeline
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
    "pipeline",
    "Clock",
    "Hook",
    "IdFactory",
    "RenderedContext",
    "Settings",
    "TOOLS_PROMPT_TOKENS",
    "draw_pages_with",
    "timestamp",
]
