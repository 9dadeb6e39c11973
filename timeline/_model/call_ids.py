"""Tool-call ids: unique inside a timeline, whatever id a model or a caller chose.

Models reuse call ids (OpenAI models start again at ``call_0`` in a later turn, or repeat
an id from an earlier one), and a model may pick an id the library would generate next.
Neither may stop an agent, and every provider needs each call's id unique. So a timeline
gives every tool call an *internal* id, unique among the calls it holds:

* the id the call was given, when no call it holds has that id yet, nor one that goes to
  providers under the same safe id (``a.b`` and the literal ``a_b_2e7336dc8eba``);
* otherwise ``<given>#2``, ``#3``... (the first free one), with the given id kept in
  ``meta["source_call_id"]``; a generated id that is taken gets ``_2``, ``_3``...

A tool result names its call by either id. A name answers the call whose internal id it
is while that call has no result yet, else the latest call given that name (a reused id:
the result answers the call that reused it). The stored result carries the internal id
(and the given one in ``meta["source_call_id"]`` when they differ). Payload formats map
internal ids to provider-safe ones (:func:`~timeline._model.names.provider_call_id`);
adapters that hand blocks back to a framework give it :func:`given_call_id`, the id it
knows the call by.
"""

from __future__ import annotations

from typing import Final

import attrs

from timeline._model.block import Block
from timeline._model.names import provider_call_id

__all__ = ["SOURCE_CALL_ID", "CallIds", "call_names", "given_call_id"]

SOURCE_CALL_ID: Final = "source_call_id"
"""``meta`` key of a call or result whose internal id differs from the id it was given."""


def given_call_id(block: Block) -> str:
    """The id a call or result was given (by the model, the provider, the caller): its
    ``source_call_id`` when the timeline renamed it, else its ``call_id``."""
    source = block.meta.get(SOURCE_CALL_ID)
    return source if isinstance(source, str) and source else block.call_id or ""


def call_names(block: Block) -> tuple[str, ...]:
    """Every name a result may use for the call ``block`` (its internal id and, when
    renamed, the id it was given)."""
    given = given_call_id(block)
    internal = block.call_id or ""
    return (internal,) if given == internal else (internal, given)


@attrs.define(eq=False)
class CallIds:
    """The tool calls of a timeline by every name that may answer them, and which calls
    still wait for a result. A batch being appended works on a child (``parent`` the
    timeline's), which sees the parent's calls and changes only itself."""

    parent: CallIds | None = None
    _latest: dict[str, str] = attrs.field(factory=dict)
    """A name (an internal id, or an id a call was given) -> the latest call's internal id."""
    _open: set[str] = attrs.field(factory=set)
    """Internal ids of the calls added here without a result yet."""
    _closed: set[str] = attrs.field(factory=set)
    """In a child: the parent's open calls answered here."""
    _forms: set[str] = attrs.field(factory=set)
    """The provider-safe form of every internal id added here."""

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self._named(name) is not None

    def _form_taken(self, form: str) -> bool:
        if form in self._forms:
            return True
        return self.parent is not None and self.parent._form_taken(form)

    def _named(self, name: str) -> str | None:
        got = self._latest.get(name)
        if got is None and self.parent is not None:
            return self.parent._named(name)
        return got

    def is_open(self, internal: str) -> bool:
        """The call with this internal id has no result yet."""
        if internal in self._open:
            return True
        if internal in self._closed or self.parent is None:
            return False
        return self.parent.is_open(internal)

    def answered_by(self, name: str | None) -> str | None:
        """The internal id of the call a result naming ``name`` answers (None: no call
        has that name): the call with that internal id while it waits for its result,
        else the latest call given that name."""
        if not name:
            return None
        if self.is_open(name):
            return name
        return self._named(name)

    def internal_id(self, given: str) -> str:
        """The internal id for a new call given ``given``: itself when free, else the
        first free ``given#2``, ``given#3``..."""
        return self._free(given, "#")

    def generated_id(self, base: str) -> str:
        """A generated id (``base``, already provider-safe) made free: ``base_2``..."""
        return self._free(base, "_")

    def _free(self, name: str, sep: str) -> str:
        """``name``, or ``name<sep>2``, ``<sep>3``...: the first neither held as a name
        nor sharing its provider-safe form with a call held."""
        candidate, n = name, 1
        while candidate in self or self._form_taken(provider_call_id(candidate)):
            n += 1
            candidate = f"{name}{sep}{n}"
        return candidate

    def track(self, block: Block, render: str) -> None:
        """Take in an appended block (``render``: its type's render kind)."""
        internal = block.call_id
        if not internal:
            return
        if render == "tool_call":
            self._latest[internal] = internal
            self._forms.add(provider_call_id(internal))
            given = given_call_id(block)
            if given != internal:
                self._latest[given] = internal
            self._open.add(internal)
        elif render == "tool_result":
            self._open.discard(internal)
            if self.parent is not None:
                self._closed.add(internal)
