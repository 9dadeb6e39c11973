"""The HTML page of a rendered prompt or a stored conversation: one self-contained static
file (blocks grouped by turn, coloured by type and sized by tokens, with a search box).

It sits above the render pipeline, which never imports it: importing this package makes
it the page behind ``RenderedContext.to_html``.
"""

from __future__ import annotations

from timeline._html.breakdown import (
    CATEGORIES,
    SYSTEM_ROW,
    calibration_note,
    category_of,
    plural,
    token_breakdown,
)
from timeline._html.page import (
    Item,
    context_html,
    page,
    query_script,
    view_items,
)
from timeline._render import draw_pages_with

draw_pages_with(context_html)

__all__ = [
    "CATEGORIES",
    "Item",
    "SYSTEM_ROW",
    "calibration_note",
    "category_of",
    "context_html",
    "page",
    "plural",
    "query_script",
    "token_breakdown",
    "view_items",
]
