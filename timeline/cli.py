"""The ``timeline`` command: demo, import, render, inspect, search, compact.

Exit codes: 0 ok, 1 runtime error (one line; ``--debug`` for the traceback), 2 usage.
"""

from __future__ import annotations

import argparse
import json
import sys
import traceback
from collections.abc import Sequence
from typing import Any

from timeline.errors import TimelineError

__all__ = ["main"]


def _policy(max_tokens: int | None) -> Any:
    from timeline.policy import CompactionPolicy

    return CompactionPolicy(max_tokens=max_tokens) if max_tokens else CompactionPolicy()


def _store(db: str) -> Any:
    import index_store

    return index_store.open(db if "://" in db else f"sqlite:///{db}")


def _read_system(value: str | None) -> str:
    if not value:
        return ""
    if value.startswith("@"):
        with open(value[1:], encoding="utf-8") as fh:
            return fh.read()
    return value


def cmd_demo(args: argparse.Namespace) -> int:
    from timeline.demo import run_demo

    return run_demo(turns=args.turns, max_tokens=args.max_tokens, db=args.db, seed=args.seed)


def cmd_import(args: argparse.Namespace) -> int:
    from timeline.importers import import_messages

    with open(args.file, encoding="utf-8") as fh:
        try:
            data = json.load(fh)
        except json.JSONDecodeError as exc:
            raise TimelineError(f"{args.file}: not valid JSON: {exc}") from exc
    store = _store(args.db)
    try:
        if store.load_window(args.conversation) is not None:
            raise TimelineError(
                f"conversation {args.conversation!r} already exists in {args.db}; "
                "import into a new id"
            )
        tl, skipped = import_messages(data, args.format, args.conversation)
        version = tl.persist(store)
    finally:
        store.close()
    note = (
        f" (skipped {skipped} system message(s): pass them to render with --system)"
        if skipped
        else ""
    )
    print(f"imported {len(tl.blocks)} blocks into {args.conversation!r} (version {version}){note}")
    return 0


def _load(args: argparse.Namespace, store: Any) -> Any:
    from timeline.timeline import Timeline

    return Timeline.load(store, args.conversation, policy=_policy(args.max_tokens))


def cmd_render(args: argparse.Namespace) -> int:
    store = _store(args.db)
    try:
        view = _load(args, store).render(_read_system(args.system))
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
    print(json.dumps(payload, indent=2, ensure_ascii=False))
    return 0


def cmd_inspect(args: argparse.Namespace) -> int:
    from timeline.inspect import context_report

    store = _store(args.db)
    try:
        tl = _load(args, store)
        print(context_report(tl, _read_system(args.system)))
    finally:
        store.close()
    return 0


def cmd_search(args: argparse.Namespace) -> int:
    store = _store(args.db)
    try:
        hits = store.search(args.conversation, args.query, limit=args.limit)
    finally:
        store.close()
    if not hits:
        print(f"no matches for {args.query!r}")
        return 0
    for h in hits:
        snippet = " ".join(h.snippet.split())
        print(f"{h.score:8.3f}  {h.kind:7}  {h.path}  (turn {h.turn_id})\n          {snippet}")
    return 0


def cmd_compact(args: argparse.Namespace) -> int:
    store = _store(args.db)
    try:
        tl = _load(args, store)
        stats = tl.compact(
            _read_system(args.system), force=True, keep_recent_tokens=args.keep_recent
        )
        if stats is None:
            print("nothing to compact: no valid cut point before the kept window")
            return 0
        version = tl.persist(store)
    finally:
        store.close()
    print(
        f"compacted {stats.compacted_blocks} blocks: {stats.tokens_before} -> "
        f"{stats.tokens_after} tokens, summary at {stats.summary_path} (version {version})"
    )
    return 0


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="timeline", description=__doc__)
    p.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    sub = p.add_subparsers(dest="command", required=True)

    d = sub.add_parser("demo", help="run a scripted ReAct session on the embedded SQLite store")
    d.add_argument("--turns", type=int, default=40)
    d.add_argument("--max-tokens", type=int, default=16_000)
    d.add_argument("--db", default="timeline-demo.db")
    d.add_argument("--seed", type=int, default=7)
    d.set_defaults(func=cmd_demo)

    i = sub.add_parser("import", help="import OpenAI or Anthropic messages JSON")
    i.add_argument("file")
    i.add_argument("--format", choices=("openai", "anthropic"), required=True)
    i.add_argument("--db", required=True)
    i.add_argument("--conversation", required=True)
    i.set_defaults(func=cmd_import)

    def stored(name: str, help: str) -> argparse.ArgumentParser:
        s = sub.add_parser(name, help=help)
        s.add_argument("conversation")
        s.add_argument("--db", required=True)
        s.add_argument("--max-tokens", type=int, default=None)
        s.add_argument("--system", default=None, help="system prompt text, or @file")
        return s

    r = stored("render", "print the prompt a model call would get")
    r.add_argument(
        "--format",
        choices=("anthropic", "openai", "responses", "text", "document"),
        default="anthropic",
    )
    r.set_defaults(func=cmd_render)
    stored("inspect", "context usage by block type (a /context view)").set_defaults(
        func=cmd_inspect
    )
    s = sub.add_parser("search", help="full-text search of everything the conversation held")
    s.add_argument("conversation")
    s.add_argument("query")
    s.add_argument("--db", required=True)
    s.add_argument("--limit", type=int, default=10)
    s.set_defaults(func=cmd_search)
    c = stored("compact", "compact now and persist (like /compact)")
    c.add_argument("--keep-recent", type=int, default=None, help="tokens to keep verbatim")
    c.set_defaults(func=cmd_compact)
    return p


_COUNTS_TOKENS = frozenset({cmd_demo, cmd_render, cmd_inspect, cmd_compact})
"""Commands that render: they load the tokenizer first (``warm_up``), before any store."""


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        if args.func in _COUNTS_TOKENS:
            from timeline.tokens import warm_up

            warm_up()
        return int(args.func(args))
    except (TimelineError, OSError, ValueError) as exc:
        if args.debug:
            traceback.print_exc()
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
