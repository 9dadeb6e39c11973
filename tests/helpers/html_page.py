"""A stored conversation and its HTML page, for the tests of the page."""

from __future__ import annotations

import base64
import json
import re
import struct
import zlib
from typing import Any

import index_store
from timeline import Block, CompactionPolicy, Timeline, blocks
from timeline._cli.html_view import timeline_html

RESULT = "line of tool output with some words in it\n" * 40


def history(page: str) -> list[dict[str, str]]:
    """The page's compressed history entries, decoded as the page's script does."""
    match = re.search(r'id="history-data">([^<]*)</script>', page)
    if match is None or not match.group(1):
        return []
    entries: list[dict[str, str]] = json.loads(zlib.decompress(base64.b64decode(match.group(1))))
    return entries


def png(width: int = 4, height: int = 3) -> bytes:
    """A small valid PNG (red pixels)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    rows = b"".join(b"\x00" + b"\xff\x00\x00" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


def conversation(turns: int = 6) -> tuple[Timeline, Any]:
    """A persisted conversation with compactions, a hidden, a pinned and a cleared block,
    an image, a custom block type and an error result."""
    store = index_store.open("memory://")
    tl = Timeline("c", policy=CompactionPolicy(max_tokens=1_500))
    for t in range(turns):
        tl.begin_turn()
        tl.append(blocks.user_prompt(f"request {t}: look at file_{t}.py"), pin=t == 0)
        call = tl.append(blocks.tool_call("read_file", {"path": f"file_{t}.py", "limit": 40}))
        result = f"<script>x</script> {t}\n{RESULT}"
        tl.append(blocks.tool_result(call.call_id or "", result, is_error=t == 2))
        tl.append(blocks.assistant_completion(f"file_{t}.py is fine"))
        if t == turns - 1:
            tl.append(blocks.user_attachment(name="shot.png", mime="image/png", data=png()))
            tl.append(Block(type="stage.gate", text="gate passed: all checks green\nmore"))
            tl.append(blocks.note("old output cleared", cleared=True))
            tl.hide([call.path.replace(".in.json", ".out.json")], "(hidden output)")
        tl.render("sys")
        tl.persist(store)
    return tl, store


def stored_page(tl: Timeline, store: Any) -> str:
    return timeline_html(tl, "sys", log=store.turn_log("c"), summaries=store.summaries("c"))


def listing_page() -> tuple[Timeline, str]:
    """A one-turn timeline (a prompt, an ``ls`` call and its result, a reply) and its page."""
    tl = Timeline("h", policy=CompactionPolicy(max_tokens=50_000))
    tl.begin_turn()
    tl.append(blocks.user_prompt("list the files"))
    call = tl.append(blocks.tool_call("ls", {"path": "."}))
    tl.append(blocks.tool_result(call.call_id or "", "a.py\nb.py"))
    tl.append(blocks.assistant_completion("two files"))
    return tl, tl.render("sys").to_html()
