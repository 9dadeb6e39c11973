"""Rule 3: a render over any accepted block succeeds, and so do persist and load, whatever
the text holds (lone surrogates, NUL, control characters, any plane)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from index_store import MemoryStore
from tests.adversarial.cases import base, load
from timeline import blocks

ANY_CHAR = st.one_of(
    st.characters(codec=None, exclude_categories=()),
    st.integers(0xD800, 0xDFFF).map(chr),
    st.sampled_from("\x00\x01\x1b\u2028\ufeff\U0010ffff"),
)
"""Any code point, lone surrogates and NUL included (hypothesis leaves surrogates out)."""


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.text(ANY_CHAR, max_size=60), min_size=1, max_size=4), st.text(ANY_CHAR, max_size=30)
)
def test_any_text_renders_persists_and_loads(texts: list[str], system: str) -> None:
    """Append any text as prompt, result and completion: render, persist and load work,
    and only lone surrogates changed (to U+FFFD)."""
    store = MemoryStore()
    tl = base(store)
    stored = []
    for text in texts:
        tl.begin_turn()
        stored.append(tl.append(blocks.user_prompt(text)))
        call = tl.append(blocks.tool_call("t", {"q": "x"}))
        stored.append(tl.append(blocks.tool_result(call.call_id or "", text)))
        stored.append(tl.append(blocks.assistant_completion(text)))
    view = tl.render(system)
    view.to_anthropic()
    view.to_openai()
    tl.persist(store)
    again = load(store)
    for b in stored:
        expected = "".join("\ufffd" if 0xD800 <= ord(c) <= 0xDFFF else c for c in b.text)
        assert b.text == expected
        assert again.get(b.id).text == expected
