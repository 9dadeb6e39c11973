"""The pieces of content of a provider conversation, to check that each reaches a payload
unchanged (tests/io/test_real_conversations.py).

A conversation (Anthropic ``messages``, Chat ``messages`` or Responses ``input``) becomes a
list of atoms: each text with its role, each tool call (id, name, arguments), each tool
result (id, error flag) and its texts, and every other part or item as its canonical JSON
(sorted keys). System and developer messages are left out (the system prompt is returned
separately), but for an Anthropic ``role: "system"`` message inside ``messages``, which is
kept whole in its place (one atom: the message as canonical JSON), and so are
``cache_control`` markers (checkpoints the renderer places) and
whitespace-only texts (no provider accepts them as content). What stays is compared as a
multiset: every atom of the original must be in the payload.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator, Mapping
from typing import Any

Atom = tuple[Any, ...]
_SYSTEM = ("system", "developer")


def strip(value: Any) -> Any:
    """``value`` without ``cache_control`` keys, at any depth."""
    if isinstance(value, dict):
        return {k: strip(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [strip(v) for v in value]
    return value


def _canon(value: Any) -> str:
    return json.dumps(strip(value), sort_keys=True, ensure_ascii=False)


def _text(role: str, text: str) -> Iterator[Atom]:
    if text.strip():
        yield ("text", role, text)


def _is_plain_text(part: dict[str, Any], kinds: tuple[str, ...]) -> bool:
    """A text part that holds nothing but its text (empty annotation and logprob lists
    included: an output text without citations)."""
    rest = {k for k, v in strip(part).items() if not (k in ("annotations", "logprobs") and v == [])}
    return part.get("type") in kinds and rest <= {"type", "text"}


def _parts(role: str, content: Any, kinds: tuple[str, ...]) -> Iterator[Atom]:
    if isinstance(content, str):
        yield from _text(role, content)
        return
    for part in content or []:
        if isinstance(part, dict) and _is_plain_text(part, kinds):
            yield from _text(role, part["text"])
        else:
            yield ("part", role, _canon(part))


def anthropic_atoms(
    messages: list[dict[str, Any]], ids: Mapping[str, str] | None = None
) -> Counter[Atom]:
    """The atoms of Anthropic ``messages``; ``ids`` maps payload call ids back to the
    original ones (a reused id is sent as another, unique id)."""
    ids = ids or {}
    out: Counter[Atom] = Counter()
    for m in messages:
        if m["role"] == "system":
            out[("system message", _canon(m))] += 1
            continue
        content = m["content"]
        parts = [{"type": "text", "text": content}] if isinstance(content, str) else content
        for part in parts:
            if part.get("type") == "tool_result":
                call_id = ids.get(part["tool_use_id"], part["tool_use_id"])
                out[("result", call_id, bool(part.get("is_error")))] += 1
                out.update(_parts("tool", part.get("content"), ("text",)))
            elif part.get("type") == "tool_use":
                use = {**part, "id": ids.get(part["id"], part["id"])}
                out.update(_parts(m["role"], [use], ("text",)))
            else:
                out.update(_parts(m["role"], [part], ("text",)))
    return out


def chat_atoms(
    messages: list[dict[str, Any]], ids: Mapping[str, str] | None = None
) -> Counter[Atom]:
    """The atoms of Chat ``messages`` (``ids``: as for :func:`anthropic_atoms`)."""
    ids = ids or {}
    out: Counter[Atom] = Counter()
    for m in messages:
        role = m["role"]
        if role in _SYSTEM:
            continue
        if role == "tool":
            out[("result", ids.get(m["tool_call_id"], m["tool_call_id"]))] += 1
        out.update(_parts(role, m.get("content"), ("text",)))
        for call in m.get("tool_calls") or []:
            fn = call.get("function") or call.get("custom") or {}
            out[("call", ids.get(call["id"], call["id"]), fn.get("name"), _canon(fn))] += 1
        for key, value in m.items():
            if key not in ("role", "content", "tool_calls", "tool_call_id") and value is not None:
                out[("field", role, key, _canon(value))] += 1
    return out


def responses_atoms(
    items: list[dict[str, Any]], ids: Mapping[str, str] | None = None
) -> Counter[Atom]:
    """The atoms of Responses ``items`` (``ids``: as for :func:`anthropic_atoms`)."""
    ids = ids or {}
    out: Counter[Atom] = Counter()
    for item in items:
        kind = item.get("type", "message")
        if kind == "message":
            if item["role"] in _SYSTEM:
                continue
            out.update(_parts(item["role"], item["content"], ("input_text", "output_text")))
        elif kind == "function_call":
            call_id = ids.get(item["call_id"], item["call_id"])
            out[("call", call_id, item["name"], item["arguments"])] += 1
        elif kind == "function_call_output":
            out[("result", ids.get(item["call_id"], item["call_id"]))] += 1
            out.update(_parts("tool", item["output"], ("input_text", "output_text")))
        else:
            out[("item", _canon(item))] += 1
    return out


def missing(original: Counter[Atom], payload: Counter[Atom]) -> list[Atom]:
    """The atoms of ``original`` the payload lacks (each as often as it lacks it)."""
    return list((original - payload).elements())
