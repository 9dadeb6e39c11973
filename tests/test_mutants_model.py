"""Edges of ``timeline.model`` and the Timeline's own checks, written against mutants of
the sampled mutation campaign (docs/testing.md, "Sampled campaign") that the broader
tests let through; each was checked to fail with its mutant applied."""

from __future__ import annotations

import pytest

from timeline import InvalidBlockError, Timeline, blocks


def test_a_custom_block_keeps_the_mime_type_it_is_given() -> None:
    block = blocks.custom("stage.gate", '{"open": true}', mime="application/json")
    assert block.mime == "application/json"
    assert blocks.custom("react.plan", "plan").mime == "text/markdown"


@pytest.mark.parametrize("conversation_id", ["", None])
def test_an_empty_conversation_id_is_named_in_the_error(conversation_id: object) -> None:
    with pytest.raises(InvalidBlockError, match=r"^conversation_id must be a non-empty string$"):
        Timeline(conversation_id)  # type: ignore[arg-type]
