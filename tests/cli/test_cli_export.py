"""``timeline export``: a stored conversation, evicted history included, as the provider
JSON ``timeline import`` reads; export then import gives the same timeline. The CLI runs
in-process."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest

import index_store
from tests.helpers.samples import PNG_1x1 as PNG
from timeline import CompactionPolicy, Timeline, blocks
from timeline._cli import main
from timeline._model.reasoning import anthropic_thinking, openai_reasoning

SYSTEM = "You are a careful coding agent."
FIELDS = ("type", "author", "turn_id", "text", "call_id", "tool_id", "path", "mime", "data")


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def build(db: Path, fmt: str) -> Timeline:
    """Twelve persisted turns under a small budget (so most of them are evicted), with a
    hidden result, the format's own thinking or reasoning and, where the format carries
    media in a tool result (not Chat Completions), an image result."""
    store = index_store.open(db)
    tl = Timeline("agent", policy=CompactionPolicy(max_tokens=1_500, keep_recent_turns=1))
    for i in range(12):
        tl.begin_turn()
        tl.append(blocks.user_prompt(f"Task {i}: fix the connection leak in pool_{i}.py"))
        if fmt == "anthropic":
            thought = {"type": "thinking", "thinking": f"t{i}", "signature": "s"}
            tl.append(anthropic_thinking(thought))
        elif fmt == "responses" and i == 11:
            tl.append(openai_reasoning({"type": "reasoning", "id": f"rs_{i}", "summary": []}))
        call = tl.append(blocks.tool_call("read_file", {"path": f"pool_{i}.py"}))
        cid = call.call_id or ""
        if i == 3 and fmt != "openai":
            tl.append(blocks.tool_result(cid, "", tool_id="read_file", mime="image/png", data=PNG))
        else:
            text = f"def get():\n    return {i}\n" * 40
            tl.append(blocks.tool_result(cid, text, tool_id="read_file"))
        tl.append(blocks.assistant_completion(f"Fixed pool_{i}.py."))
        tl.render(SYSTEM)
        tl.persist(store)
    tl.hide([tl.blocks[-2].path], replacement_text="(hidden)")
    tl.persist(store)
    store.close()
    return tl


def turn_log(db: Path, conversation: str) -> list[tuple[Any, ...]]:
    store = index_store.open(db)
    try:
        return [tuple(getattr(b, f) for f in FIELDS) for b in store.turn_log(conversation)]
    finally:
        store.close()


@pytest.mark.parametrize("fmt", ["anthropic", "openai", "responses"])
def test_export_then_import_gives_the_same_timeline(tmp_path: Path, fmt: str) -> None:
    """Every block of the conversation, evicted ones and a hidden one included, comes back
    from the exported file in the same turns, with its tool names and media; exporting the
    copy gives the same file, system prompt included."""
    db, copy = tmp_path / "a.db", tmp_path / "b.db"
    build(db, fmt)
    store = index_store.open(db)
    window = store.load_window("agent")
    assert window is not None and len(window[1].blocks) < len(store.turn_log("agent")) / 2
    store.close()
    code, exported, err = run("export", "agent", "--db", str(db), "--format", fmt)
    assert code == 0, err
    path = tmp_path / "agent.json"
    path.write_text(exported)
    code, _, err = run("import", str(path), "--db", str(copy), "--conversation", "agent")
    assert code == 0, err
    assert turn_log(copy, "agent") == turn_log(db, "agent")
    assert run("export", "agent", "--db", str(copy), "--format", fmt)[1] == exported
    assert SYSTEM in json.dumps(json.loads(exported))


def test_export_of_an_unknown_conversation_is_one_error_line(tmp_path: Path) -> None:
    """An id the store does not hold is exit 1 with one line naming it; nothing printed."""
    build(tmp_path / "a.db", "openai")
    code, out, err = run("export", "nobody", "--db", str(tmp_path / "a.db"))
    assert (code, out) == (1, "")
    assert err.startswith("error: conversation 'nobody' is not in the store")


def test_a_reused_call_id_is_exported_unique_and_imported_with_its_tool(tmp_path: Path) -> None:
    """A file whose model reused ``call_0`` for another tool in a later turn imports each
    result under the tool of the call it answers; its export gives every call its own id,
    and exporting the copy gives the same file."""

    def turn(tool: str, text: str) -> list[dict[str, Any]]:
        call = {"id": "call_0", "type": "function"}
        call["function"] = {"name": tool, "arguments": "{}"}
        return [
            {"role": "user", "content": f"run {tool}"},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "call_0", "content": text},
            {"role": "assistant", "content": "done"},
        ]

    source = tmp_path / "chat.json"
    source.write_text(json.dumps(turn("read_file", "a") + turn("grep", "b")))
    db, copy = tmp_path / "a.db", tmp_path / "b.db"
    assert run("import", str(source), "--db", str(db), "--conversation", "c")[0] == 0
    results = [b for b in turn_log(db, "c") if b[0] == "react.tool.result"]
    assert [(r[3], r[5]) for r in results] == [("a", "read_file"), ("b", "grep")]
    code, exported, err = run("export", "c", "--db", str(db), "--format", "openai")
    assert code == 0, err
    ids = [m["tool_call_id"] for m in json.loads(exported) if m["role"] == "tool"]
    assert len(set(ids)) == 2
    (tmp_path / "c.json").write_text(exported)
    assert run("import", str(tmp_path / "c.json"), "--db", str(copy), "--conversation", "c")[0] == 0
    assert run("export", "c", "--db", str(copy), "--format", "openai")[1] == exported
