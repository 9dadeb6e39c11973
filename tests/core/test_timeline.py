"""The Timeline's own checks: what it refuses, and what its errors name."""

from __future__ import annotations

import msgspec
import pytest

import index_store
from timeline import (
    Block,
    BudgetError,
    CompactionPolicy,
    HeuristicCounter,
    InvalidBlockError,
    InvalidConversationIdError,
    PinnedOverBudgetError,
    PolicyError,
    Timeline,
    UnknownPathError,
    blocks,
)


@pytest.mark.parametrize("conversation_id", ["", None])
def test_an_empty_conversation_id_is_named_in_the_error(conversation_id: object) -> None:
    with pytest.raises(
        InvalidConversationIdError, match=r"^conversation_id must be a non-empty string$"
    ):
        Timeline(conversation_id)  # type: ignore[arg-type]


def test_a_conversation_id_no_store_can_hold_is_its_own_error() -> None:
    """A NUL or a lone surrogate in a conversation id raises InvalidConversationIdError
    (a ValueError, not a bad block), from the timeline and from a store alike."""
    for bad in ("conv\x00a", "conv\ud800"):
        with pytest.raises(InvalidConversationIdError, match="conversation_id") as err:
            Timeline(bad)
        assert isinstance(err.value, ValueError)
        assert not isinstance(err.value, InvalidBlockError)
    with index_store.open("sqlite:///:memory:") as store:
        with pytest.raises(InvalidConversationIdError, match="NUL"):
            store.search("conv\x00a", "query")
        with pytest.raises(InvalidConversationIdError, match="must be a str"):
            store.search(7, "query")  # type: ignore[arg-type]


def test_a_refused_pin_names_the_conversation() -> None:
    tl = Timeline("conv-9", policy=CompactionPolicy(max_tokens=1_000))
    tl.begin_turn()
    tl.append(blocks.plan("word " * 2_000))
    with pytest.raises(PinnedOverBudgetError) as caught:
        tl.pin(["ar:t1.react.plan"])
    assert caught.value.conversation_id == "conv-9"
    assert caught.value.budget == 1_000 and caught.value.required > 1_000


def test_hiding_an_unknown_path_names_it() -> None:
    tl = Timeline("h")
    tl.begin_turn()
    tl.append(blocks.user_prompt("hi"))
    with pytest.raises(UnknownPathError) as caught:
        tl.hide(["ar:t9.user.prompt"])
    assert caught.value.path == "ar:t9.user.prompt"
    assert caught.value.conversation_id == "h"


def test_a_manual_compaction_without_a_budget_says_what_to_set() -> None:
    tl = Timeline("n")
    tl.begin_turn()
    tl.append(blocks.user_prompt("hi"))
    with pytest.raises(PolicyError, match=r"^compaction needs a budget: set max_tokens or"):
        tl.compact()


def test_a_snapshot_call_without_a_tool_names_the_block() -> None:
    tl = Timeline("s")
    tl.begin_turn()
    call = tl.append(blocks.tool_call("ls", {}))
    snap = tl.snapshot()
    bare = msgspec.structs.replace(call, tool_id=None)
    broken = msgspec.structs.replace(
        snap, blocks=[bare if b.id == call.id else b for b in snap.blocks]
    )
    with pytest.raises(InvalidBlockError, match="a tool call needs call_id and tool_id") as caught:
        Timeline("s").restore(broken)
    assert caught.value.block_id == call.id


def _tl(**policy: int) -> Timeline:
    return Timeline("c24", policy=CompactionPolicy(**policy), token_counter=HeuristicCounter())


def test_getting_a_non_str_id_names_the_type_it_got() -> None:
    """``Timeline.get(7)`` naming ``NoneType`` instead of ``int`` would mislead."""
    with pytest.raises(InvalidBlockError, match=r"^block_id must be a str, got int$"):
        _tl().get(7)  # type: ignore[arg-type]


def test_pinned_over_budget_says_how_many_tokens_are_required() -> None:
    """``required`` is what the system prompt and the pinned blocks need together (a
    caller sizing a new budget reads it); dropping it would leave None."""
    tl = _tl(max_tokens=1_000)
    tl.begin_turn()
    tl.append(blocks.plan("plan " * 150))
    tl.pin(["ar:t1.react.plan"])
    with pytest.raises(PinnedOverBudgetError) as caught:
        tl.render("system " * 500)
    err = caught.value
    assert err.required is not None and err.budget == 1_000
    assert err.required > 1_000 and str(err.required) in str(err)


def test_a_system_prompt_over_the_compaction_budget_names_the_conversation() -> None:
    """Manual compaction with a system prompt larger than the budget raises a
    BudgetError that names the conversation (dropping ``conversation_id`` left None)."""
    tl = _tl(max_tokens=1_000)
    tl.begin_turn()
    tl.append(blocks.user_prompt("hello " * 50))
    with pytest.raises(
        BudgetError, match=r"system prompt \(\d+\) and the prompt.s framing"
    ) as caught:
        tl.compact("system " * 2_000)
    assert caught.value.conversation_id == "c24"


def test_a_one_character_id_from_the_id_factory_is_accepted() -> None:
    """Ids are non-empty strings: refusing length 1 (``1 < len``) would be wrong."""
    tl = Timeline("i", token_counter=HeuristicCounter(), id_factory=lambda k, n: "abcdefgh"[n])
    tl.begin_turn()
    tl.append(blocks.user_prompt("hi"))
    assert all(len(b.id) == 1 for b in tl.blocks)


def test_a_block_without_author_gets_the_default_author_of_its_type() -> None:
    """An assistant completion appended without author is the assistant's, a user-side
    note the system's (``default_author and "system"`` would make both "system")."""
    tl = _tl()
    tl.begin_turn()
    done = tl.append(Block(type="assistant.completion", text="done"))
    note = tl.append(Block(type="note", text="fyi"))
    assert (done.author, note.author) == ("assistant", "system")


def test_a_call_id_carried_by_a_non_call_block_stays_free_for_a_call() -> None:
    """Only tool calls take a call id: a note carrying one (kept as given) does not make a
    later call with that id a duplicate (``call_id or render == "tool_call"`` would)."""
    tl = _tl()
    tl.begin_turn()
    tl.append(Block(type="note", text="about c9", call_id="c9"))
    assert tl.append(blocks.tool_call("bash", {}, call_id="c9")).call_id == "c9"
