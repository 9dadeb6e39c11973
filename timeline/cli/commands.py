"""What each ``timeline`` subcommand does (the parser and error handling are in ``cli``).

The ``--json`` shapes are documented in ``docs/cli.md`` and kept stable: keys are only
ever added.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from timeline.cli.output import color_enabled, emit_json, progress
from timeline.model.errors import TimelineError
from timeline.render.usage import plural

__all__ = [
    "cmd_compact",
    "cmd_demo",
    "cmd_import",
    "cmd_inspect",
    "cmd_list",
    "cmd_render",
    "cmd_search",
]


def _store(db: str) -> Any:
    import index_store

    return index_store.open(db if "://" in db else f"sqlite:///{db}")


def _policy(max_tokens: int | None) -> Any:
    from timeline.compaction.policy import CompactionPolicy

    return CompactionPolicy(max_tokens=max_tokens) if max_tokens else CompactionPolicy()


def read_system(value: str | None) -> str:
    """``--system``: the text itself, or ``@file`` for a file's text without the one
    trailing newline an editor adds."""
    if not value:
        return ""
    if value.startswith("@"):
        with open(value[1:], encoding="utf-8-sig") as fh:
            text = fh.read()
        return text[:-2] if text.endswith("\r\n") else text.removesuffix("\n")
    return value


def _load(args: argparse.Namespace, store: Any) -> Any:
    from timeline.core.timeline import Timeline

    return Timeline.load(store, args.conversation, policy=_policy(args.max_tokens))


def cmd_demo(args: argparse.Namespace) -> int:
    from timeline.cli.demo import run_demo

    return run_demo(
        turns=args.turns,
        max_tokens=args.max_tokens,
        db=args.db,
        seed=args.seed,
        conversation=args.conversation,
        force=args.force,
    )


def cmd_import(args: argparse.Namespace) -> int:
    from timeline.io.stream import import_file

    store = _store(args.db)
    try:
        if store.load_window(args.conversation) is not None:
            raise TimelineError(
                f"conversation {args.conversation!r} already exists in {args.db}; "
                "import into a new --conversation id"
            )
        with (
            open(args.file, "rb") as fh,
            progress(f"importing {os.path.basename(args.file)}", _size(fh)) as advance,
        ):
            try:
                tl, skipped = import_file(fh, args.format, args.conversation, advance)
            except UnicodeDecodeError as exc:
                raise TimelineError(f"{args.file}: not valid JSON: not UTF-8 ({exc})") from exc
            except TimelineError as exc:
                if str(exc).startswith("not valid JSON"):
                    raise TimelineError(f"{args.file}: {exc}") from exc
                raise
        version = tl.persist(store)
    finally:
        store.close()
    note = (
        f" (skipped {plural(skipped, 'system message')}: pass the system prompt to render "
        "with --system)"
        if skipped
        else ""
    )
    print(
        f"imported {plural(len(tl.blocks), 'block')} into {args.conversation!r} "
        f"(version {version}){note}"
    )
    return 0


def _size(fh: Any) -> int | None:
    try:
        return os.fstat(fh.fileno()).st_size or None
    except OSError:
        return None


def cmd_render(args: argparse.Namespace) -> int:
    store = _store(args.db)
    try:
        view = _load(args, store).render(read_system(args.system))
    finally:
        store.close()
    if args.format == "text":
        print(view.to_text())
        return 0
    payload: Any = {
        "anthropic": view.to_anthropic,
        "openai": view.to_openai,
        "responses": view.to_openai_responses,
        "document": view.to_document,
    }[args.format]()
    emit_json(payload)
    return 0


def cmd_inspect(args: argparse.Namespace) -> int:
    from timeline.cli.inspect import context_usage, usage_report

    store = _store(args.db)
    try:
        tl = _load(args, store)
        system = read_system(args.system)
        if args.html:
            from timeline.cli.html_view import timeline_html

            log = store.turn_log(args.conversation)
            summaries = store.summaries(args.conversation)
            page = timeline_html(tl, system, log=log, summaries=summaries)
        usage = context_usage(tl, system)
    finally:
        store.close()
    if args.html:
        with open(args.html, "w", encoding="utf-8") as fh:
            fh.write(page)
    if args.json:
        emit_json(usage)
    else:
        print(usage_report(usage, color=color_enabled(sys.stdout)))
        if args.html:
            print(f"wrote {args.html}")
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
    store = _store(args.db)
    try:
        found = [_conversation_row(store, cid) for cid in store.conversations()]
    finally:
        store.close()
    rows = [r for r in found if r is not None]
    if args.json:
        emit_json(rows)
        return 0
    if not rows:
        print(f"no conversations in {args.db}")
        return 0
    width = max(len("conversation"), *(len(r["conversation"]) for r in rows))
    print(
        f"{'conversation':<{width}} {'version':>7} {'blocks':>7} {'turns':>6} "
        f"{'summaries':>9}  updated"
    )
    for r in rows:
        if r["error"]:
            print(f"{r['conversation']:<{width}} unreadable: {r['error']}")
            continue
        print(
            f"{r['conversation']:<{width}} {r['version']:>7} {r['blocks']:>7,} {r['turns']:>6,} "
            f"{r['summaries']:>9}  {r['updated'] or '-'}"
        )
    print(plural(len(rows), "conversation"))
    return 0


def cmd_search(args: argparse.Namespace) -> int:
    store = _store(args.db)
    try:
        hits = store.search(args.conversation, args.query, limit=args.limit)
    finally:
        store.close()
    if args.json:
        emit_json(
            [
                {
                    "path": h.path,
                    "turn_id": h.turn_id,
                    "kind": h.kind,
                    "score": h.score,
                    "type": h.block.type,
                    "block_id": h.block.id,
                    "snippet": h.snippet,
                }
                for h in hits
            ]
        )
        return 0
    if not hits:
        print(f"no matches for {args.query!r}")
        return 0
    for h in hits:
        snippet = " ".join(h.snippet.split())
        print(f"{h.score:8.3f}  {h.kind:7}  {h.path}  (turn {h.turn_id})\n          {snippet}")
    print(plural(len(hits), "match", "matches"))
    return 0


def cmd_compact(args: argparse.Namespace) -> int:
    if args.max_tokens is None and args.keep_recent is None:
        raise TimelineError(
            "compact needs a budget: pass --max-tokens (the context budget) or --keep-recent "
            "(tokens to keep verbatim)"
        )
    store = _store(args.db)
    try:
        tl = _load(args, store)
        stats = tl.compact(
            read_system(args.system), force=True, keep_recent_tokens=args.keep_recent
        )
        done = stats is not None and stats.skipped is None
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
    }
    if args.json:
        emit_json(result)
    elif stats is None:
        print("nothing to compact: no valid cut point before the kept window")
    elif stats.skipped is not None:
        print(f"not compacted ({stats.skipped}): nothing changed")
    else:
        print(
            f"compacted {plural(stats.compacted_blocks, 'block')}: {stats.tokens_before:,} -> "
            f"{stats.tokens_after or 0:,} tokens, summary at {stats.summary_path} "
            f"(version {version})"
        )
    return 0
