"""Of a long tool result the model-free summary reads its first and last lines and the
lines that say something definite (an error, what was expected, a value set, the name
its call searched for), wherever they are."""

from __future__ import annotations

from collections.abc import Callable

from timeline import CompactionPolicy, Timeline, blocks
from timeline._model.block import CONV_RANGE_SUMMARY

POLICY = CompactionPolicy(max_tokens=8_000, keep_recent_turns=1)


def usages(n: int) -> list[str]:
    return [
        f"src/app/views/v{i}.py:{10 + i}:    w{i} = load_widget(WidgetId{i}, retries={i})"
        for i in range(n)
    ]


def compacted(tl: Timeline) -> str:
    tl.append(blocks.assistant_completion("Done."))
    tl.begin_turn()
    tl.append(blocks.user_prompt("next"))
    assert tl.compact("sys", keep_recent_tokens=10) is not None
    return [b for b in tl.blocks if b.type == CONV_RANGE_SUMMARY][-1].text


def test_a_long_search_keeps_the_definition_deep_inside(make_tl: Callable[..., Timeline]) -> None:
    """A grep with 80 usages and the definition at line 50: the definition is a fact."""
    tl = make_tl(policy=POLICY)
    tl.begin_turn()
    tl.append(blocks.user_prompt("Where is load_widget defined?"))
    hits = usages(80)
    hits.insert(50, "src/app/widgets.py:88:def load_widget(")
    call = tl.append(blocks.tool_call("grep", {"pattern": "load_widget", "path": "src"}))
    tl.append(blocks.tool_result(call.call_id or "", "\n".join(hits), tool_id="grep"))
    assert "src/app/widgets.py:88:def load_widget(" in compacted(tl)


def test_a_long_log_keeps_its_error_and_a_value_set_in_the_middle(
    make_tl: Callable[..., Timeline],
) -> None:
    """A 300-line build log whose error and one setting sit in the middle: both are
    facts; the ordinary lines around them are not read for facts."""
    tl = make_tl(policy=POLICY)
    tl.begin_turn()
    tl.append(blocks.user_prompt("Build it."))
    lines = [f"[{i:03}] compiling module_{i} ok" for i in range(300)]
    lines[140] = "linker: MAX_OPEN_FILES = 4096"
    lines[170] = "ld: fatal error: cannot find -lssl_v3"
    call = tl.append(blocks.tool_call("bash", {"command": "make all"}))
    out = blocks.tool_result(call.call_id or "", "\n".join(lines), tool_id="bash", is_error=True)
    tl.append(out)
    text = compacted(tl)
    assert "ld: fatal error: cannot find -lssl_v3" in text
    assert "MAX_OPEN_FILES = 4096" in text
    assert "[150] compiling module_150 ok" not in text
