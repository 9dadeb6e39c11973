"""Manual compaction on a :class:`~timeline.Timeline`: ``compact`` (and its dry run) and
``acompact``, the calls a coding agent's ``/compact`` and the ``compact_context`` tool
make (the work is the render pipeline's)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, Protocol, overload

from timeline._compaction import CompactionPreview, CompactionStats
from timeline._model import check_compact_args, check_render_args, tool_specs
from timeline._render import Settings, pipeline
from timeline._state import Ledger

__all__ = ["Compacting"]


class _Host(Settings, Protocol):
    """What the methods need of the timeline: its ledger, and itself as the pipeline's
    settings."""

    @property
    def _ledger(self) -> Ledger: ...


class Compacting:
    """The manual compaction methods of :class:`~timeline.Timeline`."""

    @overload
    def compact(
        self: _Host,
        system: str = "",
        *,
        tools: Sequence[Any] = (),
        force: bool = True,
        keep_recent_tokens: int | None = None,
        dry_run: Literal[False] = False,
        focus: str | None = None,
    ) -> CompactionStats | None: ...
    @overload
    def compact(
        self: _Host,
        system: str = "",
        *,
        tools: Sequence[Any] = (),
        force: bool = True,
        keep_recent_tokens: int | None = None,
        dry_run: Literal[True],
        focus: str | None = None,
    ) -> CompactionPreview: ...
    def compact(
        self: _Host,
        system: str = "",
        *,
        tools: Sequence[Any] = (),
        force: bool = True,
        keep_recent_tokens: int | None = None,
        dry_run: bool = False,
        focus: str | None = None,
    ) -> CompactionStats | CompactionPreview | None:
        """Manual compaction (a coding agent's ``/compact``); None when there is nothing to
        cut. ``force=True`` compacts even under the trigger (False: only when a render
        would); ``keep_recent_tokens`` overrides how much recent history stays verbatim;
        ``focus`` tells the summarizer what to keep in view. ``dry_run=True`` changes
        nothing and returns what the compaction would do now (a
        :class:`CompactionPreview`)."""
        system, _ = check_render_args(system, (), force)
        check_compact_args(keep_recent_tokens, dry_run, focus)
        ledger, keep, specs = self._ledger, keep_recent_tokens, tool_specs(tools)
        if dry_run:
            return pipeline.preview(
                ledger, self, system, force=force, keep_tokens=keep, tools=specs
            )
        return pipeline.compact(
            ledger, self, system, force=force, keep_tokens=keep, tools=specs, focus=focus
        )

    async def acompact(
        self: _Host,
        system: str = "",
        *,
        tools: Sequence[Any] = (),
        force: bool = True,
        keep_recent_tokens: int | None = None,
        focus: str | None = None,
    ) -> CompactionStats | None:
        """:meth:`compact` for async summarizers (awaited, with the policy's timeout)."""
        system, _ = check_render_args(system, (), force)
        check_compact_args(keep_recent_tokens, False, focus)
        specs = tool_specs(tools)
        return await pipeline.acompact(
            self._ledger,
            self,
            system,
            force=force,
            keep_tokens=keep_recent_tokens,
            tools=specs,
            focus=focus,
        )
