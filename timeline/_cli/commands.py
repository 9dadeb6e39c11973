"""What each ``timeline`` subcommand does (the parser and error handling are in ``cli``;
``import`` is in :mod:`timeline._cli.importing`).

The ``--json`` shapes are documented in ``docs/cli.md`` and kept stable: keys are only
ever added. Human-readable output passes everything that came from a conversation
through :func:`~timeline._cli.output.printable`; ``--json`` is exact.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

from timeline._cli.importing import cmd_import
from timeline._cli.output import color_enabled, emit_json, printable
from timeline._cli.search import cmd_search
from timeline._cli.stored import load, open_store, require
from timeline._cli.words import plural
from timeline._compaction import CompactionPreview
from timeline._model import TimelineError

__all__ = [
    "cmd_compact",
    "cmd_delete",
    "cmd_demo",
    "cmd_import",
    "cmd_inspect",
    "cmd_list",
    "cmd_render",
    "cmd_search",
]


def cmd_demo(args: argparse.Namespace) -> int:
    from timeline._cli.demo import run_demo
    from timeline._cli.output import invoked_as

    return run_demo(
        turns=args.turns,
        max_tokens=args.max_tokens,
        db=args.db,
        seed=args.seed,
        conversation=args.conversation,
        force=args.force,
        program=invoked_as(),
    )


def cmd_render(args: argparse.Namespace) -> int:
    store = open_store(args.db)
    try:
        loaded = load(args, store)
        view = loaded.timeline.render(loaded.system, tools=loaded.tools)
    finally:
        store.close()
    if args.format == "text":
        print(printable(view.to_text(), lines=True))
        return 0
    build: dict[str, Callable[[], Any]] = {  # to_openai* are overloaded: typed here
        "anthropic": view.to_anthropic,
        "openai": view.to_openai,
        "responses": view.to_openai_responses,
        "document": view.to_document,
    }
    emit_json(build[args.format]())
    return 0


def cmd_inspect(args: argparse.Namespace) -> int:
    from timeline._cli.inspect import breakdown_report, context_breakdown

    store = open_store(args.db)
    try:
        loaded = load(args, store)
        tl, system, tools = loaded.timeline, loaded.system, loaded.tools
        if args.html:
            from timeline._cli.files import store_files, write_private
            from timeline._cli.html_view import timeline_html

            log = store.turn_log(args.conversation)
            summaries = store.summaries(args.conversation)
            page = timeline_html(tl, system, tools, log=log, summaries=summaries)
            protected = store_files(getattr(store, "path", None))
            write_private(
                args.html, page.encode(), flag="--html", force=args.force, protected=protected
            )
        breakdown = context_breakdown(tl, system, tools)
    finally:
        store.close()
    if args.json:
        emit_json(breakdown)
    else:
        print(breakdown_report(breakdown, color=color_enabled(sys.stdout)))
        if args.html:
            print(f"wrote {printable(args.html)} (readable by you only)")
    return 0


def _conversation_row(store: Any, cid: str) -> dict[str, Any] | None:
    """One ``list`` row; a conversation whose rows cannot be read gets its ``error``."""
    row: dict[str, Any] = {"conversation": cid, "version": None, "blocks": None}
    row.update(window_blocks=None, turns=None, summaries=None, updated=None, error=None)
    try:
        loaded = store.load_window(cid)
        if loaded is None:
            return None
        version, snap = loaded
        row.update(
            version=version,
            blocks=len(store.turn_log(cid)),
            window_blocks=len(snap.blocks),
            turns=snap.state.turn_seq,
            summaries=len(store.summaries(cid)),
            updated=max((b.ts for b in snap.blocks), default="") or None,
        )
    except TimelineError as exc:
        row["error"] = str(exc)
    return row


def cmd_list(args: argparse.Namespace) -> int:
    store = open_store(args.db)
    try:
        found = [_conversation_row(store, cid) for cid in store.conversations()]
    finally:
        store.close()
    rows = [r for r in found if r is not None]
    if args.json:
        emit_json(rows)
        return 0
    if not rows:
        print(f"no conversations in {printable(args.db)}")
        return 0
    ids = {r["conversation"]: printable(r["conversation"]) for r in rows}
    width = max(len("conversation"), *(len(shown) for shown in ids.values()))
    print(
        f"{'conversation':<{width}} {'version':>7} {'blocks':>7} {'turns':>6} "
        f"{'summaries':>9}  updated"
    )
    for r in rows:
        name = ids[r["conversation"]]
        if r["error"]:
            print(f"{name:<{width}} unreadable: {printable(r['error'])}")
            continue
        print(
            f"{name:<{width}} {r['version']:>7} {r['blocks']:>7,} {r['turns']:>6,} "
            f"{r['summaries']:>9}  {printable(r['updated'] or '-')}"
        )
    print(plural(len(rows), "conversation"))
    return 0


def cmd_delete(args: argparse.Namespace) -> int:
    """Delete a stored conversation: its window, turn log, summaries and checkpoints."""
    store = open_store(args.db)
    try:
        require(store, args.conversation)
        blocks = len(store.turn_log(args.conversation))
        summaries = len(store.summaries(args.conversation))
        store.delete(args.conversation)
    finally:
        store.close()
    result = {"conversation": args.conversation, "deleted": True, "blocks": blocks}
    result["summaries"] = summaries
    if args.json:
        emit_json(result)
    else:
        print(
            f"deleted conversation {printable(repr(args.conversation))} from "
            f"{printable(args.db)}: {plural(blocks, 'block')}, "
            f"{plural(summaries, 'summary', 'summaries')}"
        )
    return 0


def cmd_compact(args: argparse.Namespace) -> int:
    store = open_store(args.db)
    try:
        loaded = load(args, store)
        tl, system, tools = loaded.timeline, loaded.system, loaded.tools
        if tl.policy.budget is None and args.keep_recent is None:
            raise TimelineError(
                "compact needs a budget: pass --max-tokens (the context budget) or "
                "--keep-recent (tokens to keep verbatim)"
            )
        keep = args.keep_recent
        if args.dry_run:
            preview = tl.compact(system, tools=tools, keep_recent_tokens=keep, dry_run=True)
            return _show_preview(args, preview)
        stats = tl.compact(system, tools=tools, force=True, keep_recent_tokens=keep)
        done = stats is not None and stats.skipped is None
        if done:
            tl.render(system, tools=tools)  # records what it was compacted with
        version = tl.persist(store) if done else tl.version
    finally:
        store.close()
    result: dict[str, Any] = {
        "conversation": args.conversation,
        "compacted": done,
        "skipped": stats.skipped if stats else None,
        "version": version,
        "compacted_blocks": stats.compacted_blocks if stats else 0,
        "tokens_before": stats.tokens_before if stats else None,
        "tokens_after": stats.tokens_after if stats else None,
        "summary_path": stats.summary_path if stats else None,
        "covered_turns": len(stats.covered_turn_ids) if stats else 0,
        "tier": stats.tier if done and stats else None,
        "cleared_blocks": stats.cleared_blocks if stats else 0,
        "cleared_tokens": stats.cleared_tokens if stats else 0,
    }
    if args.json:
        emit_json(result)
    elif stats is None:
        print("nothing to compact: no valid cut point before the kept window")
    elif stats.skipped is not None:
        print(f"not compacted ({printable(stats.skipped)}): nothing changed")
    else:
        print(_compacted_line(stats, version))
    return 0


def _show_preview(args: argparse.Namespace, preview: CompactionPreview) -> int:
    """What ``compact --dry-run`` prints: the preview, nothing changed."""
    if args.json:
        emit_json({"conversation": args.conversation, "dry_run": True, **preview.as_dict()})
        return 0
    tokens = f"{preview.tokens_before:,} -> about {preview.tokens_after:,} tokens"
    if preview.tier is None:
        print(f"dry run, nothing changed: nothing would be compacted ({printable(preview.note)})")
        return 0
    lines = [f"dry run, nothing changed: tier {preview.tier}, {tokens}"]
    if preview.cleared_blocks:
        lines.append(
            f"  clear {plural(preview.cleared_blocks, 'block')} of old tool output "
            f"({preview.cleared_tokens:,} tokens)"
        )
    if preview.cut_path is not None:
        lines.append(
            f"  summarize {plural(preview.summarized_blocks, 'block')} "
            f"({preview.summarized_tokens:,} tokens) before {printable(preview.cut_path)}"
        )
        lines.append(
            f"  keep {plural(preview.kept_blocks, 'block')} ({preview.kept_tokens:,} tokens) "
            f"verbatim, the summary counted at most {preview.summary_tokens:,} tokens"
        )
    print("\n".join(lines))
    return 0


def _compacted_line(stats: Any, version: int) -> str:
    """What ``compact`` did, in one line: the tier, what clearing freed, the summary."""
    cleared = (
        f"cleared {plural(stats.cleared_blocks, 'block')} ({stats.cleared_tokens:,} tokens)"
        if stats.cleared_blocks
        else ""
    )
    if stats.tier == "clear":
        what = cleared
    else:
        what = f"compacted {plural(stats.compacted_blocks, 'block')}"
        what = f"{cleared}, then {what}" if cleared else what
    path = stats.summary_path
    where = "" if path is None else f", summary at {printable(path)}"
    return (
        f"{what}: {stats.tokens_before:,} -> {stats.tokens_after or 0:,} tokens{where} "
        f"(tier {stats.tier}, version {version})"
    )
