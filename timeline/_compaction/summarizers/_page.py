"""The inventory summary's page (the agent form): its sections rendered at given caps,
with the facts chosen for the room left."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Final

from timeline._compaction.digest import CompactionDigest
from timeline._compaction.quoting import quote, quote_capped
from timeline._compaction.sections import Fact, SummarySections
from timeline._compaction.summarizers._fact_pick import fact_lines

__all__ = ["EARLIER_HEADING", "Page"]

_CAPPED: dict[int, dict[str, str]] = {}
"""Carried requests repeat across compactions: each is capped once per cap (at most
4,096 per cap are kept)."""


def _capped(requests: list[str], cap: int) -> list[str]:
    """``[quote_capped(r, cap) for r in requests]``, looked up in one C loop."""
    memo = _CAPPED.get(cap)
    if memo is None:
        if len(_CAPPED) > 16:
            _CAPPED.clear()
        memo = _CAPPED[cap] = {}
    found = list(map(memo.get, requests))
    if None not in found:
        return found  # type: ignore[return-value]
    if len(memo) > 4096:
        memo.clear()
    out = []
    for r, capped in zip(requests, found, strict=True):
        if capped is None:
            capped = memo[r] = quote_capped(r, cap)
        out.append(capped)
    return out


EARLIER_HEADING: Final = "## Earlier Summary"
"""Summaries another summarizer (or an earlier version) wrote, carried verbatim."""
_SECTIONS: Final = (
    ("## Constraints & Preferences", "constraints", "- ", ""),
    ("## Progress\n### Done", "done", "- [x] ", None),
    ("### In Progress", "in_progress", "- [ ] ", None),
    ("### Not Started", "not_started", "- [ ] ", None),
)
"""The bulleted sections before Next Steps: (heading, list, bullet, blank line after)."""


def _newest_last(paths: Sequence[str], recent: Iterable[str]) -> list[str]:
    """``paths`` with the ones in ``recent`` (in its order) moved to the end."""
    listed = set(paths)
    last = [p for p in dict.fromkeys(recent) if p in listed]
    moved = set(last)
    return [p for p in paths if p not in moved] + last


def _omitted_line(omitted: int) -> str:
    return (
        f"- ({omitted} earlier requests omitted here; their full "
        "text is in the turn log, searchable with memory_read)"
    )


class Page:
    """The history summary's text at given list caps and request cap: sections that do
    not change between the (at most four) renders of one summary are joined once."""

    def __init__(
        self,
        lists: dict[str, list[str]],
        goal: list[str],
        next_steps: list[str],
        digest: CompactionDigest,
        earlier: Sequence[str] = (),
        facts: Sequence[Fact] = (),
    ) -> None:
        self.lists = lists
        self.digest = digest
        self.goal_items = goal
        self.next_steps = next_steps
        self.earlier = list(earlier)
        self.facts = list(facts)
        """Every fact the page may list (the ones it does: :attr:`picked`)."""
        self.goal = "\n".join(map(quote, goal)) if goal else "(not stated)"
        steps = [f"{i}. {s}" for i, s in enumerate(next_steps, 1)] or ["1. (none recorded)"]
        self.steps = "\n".join(steps)
        self._read = _newest_last(digest.read_files, (op.path for op in digest.file_reads))
        changed = (op.path for op in (*digest.file_writes, *digest.file_patches))
        self._modified = _newest_last(digest.modified_files, changed)
        self._files: dict[int, str] = {}
        self._blocked = self._decided = self._critical = ""
        self.picked: list[Fact] = []
        self.pick([])
        self._bullets: dict[tuple[str, int], str] = {}
        self._capped: dict[int, list[str]] = {}
        self._requests: dict[tuple[int, int | None], str | None] = {}
        self.last: tuple[dict[str, int], int, int | None] | None = None
        """The caps, request cap and kept requests of the latest render."""
        self.last_text = ""

    def pick(self, facts: list[Fact]) -> None:
        """List ``facts``: errors under Blocked, decisions under Key Decisions, the rest
        under Critical Context."""
        self.picked = facts
        kinds: dict[str, list[Fact]] = {"error": [], "decision": [], "": []}
        for fact in facts:
            kinds.get(fact.kind, kinds[""]).append(fact)
        self._blocked = "\n".join(fact_lines(kinds["error"]))
        self._decided = "\n".join(fact_lines(kinds["decision"]))
        self._critical = "\n".join(fact_lines(kinds[""]))

    def _with_facts(self, listed: str, facts: str) -> str:
        """A section's lines: the facts first, then its listed items (``- (none)``
        only when it has neither)."""
        if not facts:
            return listed
        return facts if listed == "- (none)" else f"{facts}\n{listed}"

    def bullets(self, name: str, cap: int, mark: str = "- ") -> str:
        """The section's last ``cap`` items as bullet lines (earlier ones counted)."""
        key = (name, cap)
        text = self._bullets.get(key)
        if text is None:
            items = self.lists[name]
            kept = items[-cap:]
            if not kept:
                text = "- (none)"
            else:
                text = mark + ("\n" + mark).join(kept)
                if len(items) > cap:
                    text = f"- ({len(items) - cap} earlier items omitted)\n{text}"
            self._bullets[key] = text
        return text

    @property
    def file_count(self) -> int:
        """The longer file list's length (what a cap of ``files`` can shorten)."""
        return max(len(self._read), len(self._modified))

    def files_at(self, cap: int) -> str:
        """The read and modified file lists, each its ``cap`` newest paths (in name
        order; the others counted)."""
        text = self._files.get(cap)
        if text is None:
            parts = []
            for tag, paths in (("read-files", self._read), ("modified-files", self._modified)):
                shown = sorted(paths[-cap:]) if cap > 0 else []
                more = [f"({len(paths) - len(shown)} more, read back from the turn log)"]
                parts += [f"<{tag}>", *map(quote, shown)]
                parts += [*(more if len(paths) > len(shown) else []), f"</{tag}>", ""]
            text = self._files[cap] = "\n".join(parts[:-1])
        return text

    def requests_at(self, cap: int) -> list[str]:
        """Every carried request capped at ``cap`` characters."""
        if cap not in self._capped:
            self._capped[cap] = _capped(self.digest.user_requests, cap)
        return self._capped[cap]

    def _listed(self, cap_chars: int, keep: int | None) -> tuple[list[str], int]:
        """The requests listed (capped; with ``keep``, the first and the newest ``keep``)
        and how many are counted as omitted."""
        listed = self.requests_at(cap_chars)
        omitted = self.digest.user_requests_omitted
        if keep is not None and len(listed) > keep + 1:
            omitted += len(listed) - 1 - keep
            listed = listed[:1] + listed[len(listed) - keep :] if keep else listed[:1]
        return listed, omitted

    def _request_lines(self, cap_chars: int, keep: int | None) -> str | None:
        key = (cap_chars, keep)
        if key in self._requests:
            return self._requests[key]
        listed, omitted = self._listed(cap_chars, keep)
        # bullets, not numbers: a numbered list would change every line when it shifts, and
        # each incremental summary would cost a fresh tokenization of the whole list
        text = None
        if listed:
            text = f"- {listed[0]}"
            if omitted:
                text += f"\n{_omitted_line(omitted)}"
            if len(listed) > 1:
                text += "\n- " + "\n- ".join(listed[1:])
        self._requests[key] = text
        return text

    def _head(self, caps: dict[str, int]) -> list[str]:
        """The lines before the requests (sections joined)."""
        out = ["## Goal", self.goal, ""]
        if self.earlier:
            out += [EARLIER_HEADING, "\n\n".join(self.earlier), ""]
        for heading, name, mark, blank in _SECTIONS:
            cap = 3 if name == "in_progress" else caps[name]
            out += [heading, self.bullets(name, cap, mark)]
            if blank is not None:
                out.append(blank)
        blocked = self._with_facts(self.bullets("blocked", caps["blocked"]), self._blocked)
        out += ["### Blocked", blocked, ""]
        decided = self._with_facts(self.bullets("decisions", caps["decisions"]), self._decided)
        out += ["## Key Decisions", decided, ""]
        out += ["## Next Steps", self.steps, ""]
        critical = self._with_facts(self.bullets("critical", caps["critical"]), self._critical)
        out += ["## Critical Context", critical, ""]
        out.append("## User Requests")
        return out

    def render(self, caps: dict[str, int], cap_chars: int, keep: int | None = None) -> str:
        """The summary with these list caps, request cap and (folding) kept requests."""
        self.last = (caps, cap_chars, keep)
        out = self._head(caps)
        requests = self._request_lines(cap_chars, keep)
        if requests is not None:
            out.append(requests)
        out += ["", self.files_at(caps["files"])]
        self.last_text = "\n".join(out)
        return self.last_text

    def size(self, caps: dict[str, int], cap_chars: int, keep: int | None = None) -> int:
        """``len(self.render(caps, cap_chars, keep))`` without building the text (the
        requests at their longest cap are most of it)."""
        out = self._head(caps)
        lines = len(out) + 2  # the blank line and the file lists after the requests
        total = sum(map(len, out)) + len(self.files_at(caps["files"]))
        listed, omitted = self._listed(cap_chars, keep)
        if listed:
            lines += 1
            total += sum(map(len, listed)) + 2 + 3 * (len(listed) - 1)
            if omitted:
                total += 1 + len(_omitted_line(omitted))
        return total + lines - 1

    def kept(self) -> dict[str, list[str]]:
        """The items each bulleted section of the latest render lists."""
        assert self.last is not None
        caps = self.last[0]
        return {
            name: self.lists[name][-(3 if name == "in_progress" else caps[name]) :]
            for name in self.lists
        }

    def sections(self) -> SummarySections:
        """What the latest render lists, as data: the next summary carries exactly this."""
        kept = self.kept()
        return SummarySections(
            goal=self.goal_items,
            constraints=kept["constraints"],
            done=kept["done"],
            in_progress=kept["in_progress"],
            not_started=kept["not_started"],
            blocked=kept["blocked"],
            decisions=kept["decisions"],
            next_steps=self.next_steps,
            critical=kept["critical"],
            earlier=self.earlier,
            facts=self.picked,
        )
