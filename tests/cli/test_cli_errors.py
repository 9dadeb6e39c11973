"""The CLI's ``error:`` line is made from the library error's fields (the policy setting,
the budget numbers and what does not fit), in the command line's terms; the library
errors carry those fields. The CLI runs in-process."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path
from typing import Any

import pytest

import index_store
from timeline import (
    BudgetError,
    CompactionPolicy,
    PinnedOverBudgetError,
    PolicyError,
    Timeline,
    ToolSpec,
    blocks,
)
from timeline._cli import main

SYSTEM = "You are a careful coding agent."
LONG_SYSTEM = "word " * 50


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def stored(db: Path, *, pin: bool = False) -> None:
    """Conversation ``c1``: one turn, its answer pinned when ``pin``, rendered with
    :data:`SYSTEM` and persisted."""
    store = index_store.open(db)
    try:
        tl = Timeline("c1", policy=CompactionPolicy(max_tokens=10_000))
        tl.begin_turn()
        tl.append(blocks.user_prompt("Why does test_retry fail?"))
        tl.append(blocks.assistant_completion("The backoff starts at zero. " * 20), pin=pin)
        tl.render(SYSTEM)
        tl.persist(store)
    finally:
        store.close()


def test_budget_error_names_what_does_not_fit() -> None:
    """A system prompt over the budget: BudgetError with the budget, what it needs and
    the part that does not fit."""
    tl = Timeline("c1", policy=CompactionPolicy(max_tokens=20))
    tl.begin_turn()
    tl.append(blocks.user_prompt("hi"))
    with pytest.raises(BudgetError) as caught:
        tl.render(LONG_SYSTEM)
    assert (caught.value.budget, caught.value.parts) == (20, ("system prompt",))
    assert caught.value.required > 20
    assert caught.value.conversation_id == "c1"


def test_budget_error_names_tool_definitions() -> None:
    """With tools, the fixed part that does not fit is the system prompt and the tools."""
    tl = Timeline("c1", policy=CompactionPolicy(max_tokens=20))
    tl.begin_turn()
    tl.append(blocks.user_prompt("hi"))
    tool = ToolSpec(name="read_file", description="Read a file. " * 20)
    with pytest.raises(BudgetError) as caught:
        tl.render(SYSTEM, tools=[tool])
    assert caught.value.parts == ("system prompt", "tool definitions")


def test_cli_system_prompt_over_budget_names_the_flags(tmp_path: Path) -> None:
    """inspect with a --system over --max-tokens: one line with the numbers and the two
    flags that change them."""
    db = tmp_path / "t.db"
    stored(db)
    code, _, err = run(
        "inspect", "c1", "--db", str(db), "--max-tokens", "5", "--system", LONG_SYSTEM
    )
    assert code == 1 and err.count("\n") == 1
    assert err.startswith("error: the system prompt alone needs ")
    assert err.endswith(" tokens but the budget is 5; shorten --system or raise --max-tokens\n")


def test_pinned_over_budget_names_the_parts(tmp_path: Path) -> None:
    """Pinned blocks that do not fit: the library error names the system prompt and the
    pinned blocks; the CLI says which flags change the budget."""
    db = tmp_path / "t.db"
    stored(db, pin=True)
    store = index_store.open(db)
    try:
        tl = Timeline.load(store, "c1", policy=CompactionPolicy(max_tokens=120))
        with pytest.raises(PinnedOverBudgetError) as caught:
            tl.render(SYSTEM)
    finally:
        store.close()
    assert caught.value.parts == ("system prompt", "pinned blocks")
    assert caught.value.budget == 120 and caught.value.required > 120
    code, _, err = run("render", "c1", "--db", str(db), "--max-tokens", "120")
    assert code == 1
    assert err == (
        f"error: the system prompt and pinned blocks alone need {caught.value.required:,} "
        "tokens but the budget is 120; shorten --system or raise --max-tokens\n"
    )


def test_pin_over_budget_names_the_parts() -> None:
    """Pinning a block that cannot fit: the same fields as a render that cannot."""
    tl = Timeline("c1", policy=CompactionPolicy(max_tokens=50))
    tl.begin_turn()
    with pytest.raises(PinnedOverBudgetError) as caught:
        tl.append(blocks.user_prompt("never change the public API " * 20), pin=True)
    assert caught.value.parts == ("system prompt", "pinned blocks")
    assert caught.value.budget == 50 and caught.value.required > 50


@pytest.mark.parametrize(
    ("settings", "field", "reason"),
    [
        (
            {"max_tokens": 100, "keep_recent_tokens": 200},
            "keep_recent_tokens",
            "must be below the budget (100), got 200",
        ),
        ({"max_tokens": 0}, "max_tokens", "must be a positive integer, got 0"),
        (
            {"keep_ratio": 0.9, "trigger_ratio": 0.8},
            "keep_ratio",
            "must be below trigger_ratio (0.8), got 0.9; otherwise every render would "
            "compact again",
        ),
    ],
)
def test_policy_error_carries_field_and_reason(
    settings: dict[str, Any], field: str, reason: str
) -> None:
    """A bad setting: PolicyError with its path and what is wrong; the message joins them."""
    with pytest.raises(PolicyError) as caught:
        CompactionPolicy(**settings)
    assert (caught.value.field, caught.value.reason) == (field, reason)
    assert str(caught.value) == f"{field}: {reason}"


def test_policy_error_from_mapping_carries_the_path() -> None:
    """A bad setting in a config mapping: the field is its path in the mapping."""
    with pytest.raises(PolicyError) as caught:
        CompactionPolicy.from_mapping({"compaction": {"keep_ratio": 2}})
    assert caught.value.field == "compaction.keep_ratio"
    assert caught.value.reason == "must be in (0, 1), got 2.0"


def test_policy_error_about_no_setting_has_no_field() -> None:
    """An error that is not about one setting keeps its whole message as the reason."""
    with pytest.raises(PolicyError) as caught:
        CompactionPolicy(8000)  # type: ignore[misc]
    assert caught.value.field is None
    assert caught.value.reason == str(caught.value)


@pytest.mark.parametrize(
    ("settings", "expected"),
    [
        (
            {"max_tokens": 100, "keep_recent_tokens": 200},
            "error: --keep-recent: must be below the budget (100), got 200\n",
        ),
        ({"max_tokens": 0}, "error: --max-tokens: must be a positive integer, got 0\n"),
        (
            {"keep_ratio": 0.9, "trigger_ratio": 0.8},
            "error: keep_ratio: must be below trigger_ratio (0.8), got 0.9; otherwise every "
            "render would compact again\n",
        ),
    ],
)
def test_cli_policy_error_names_the_flag(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, settings: dict[str, Any], expected: str
) -> None:
    """A policy error about a setting a flag sets is reported under that flag; any other
    setting keeps the library's name (no flag sets it)."""
    db = tmp_path / "t.db"
    stored(db)

    def bad_compact(*args: Any, **kwargs: Any) -> None:
        CompactionPolicy(**settings)  # the library's own error

    monkeypatch.setattr(Timeline, "compact", bad_compact)
    code, _, err = run("compact", "c1", "--db", str(db), "--keep-recent", "50")
    assert (code, err) == (1, expected)
