"""The ``timeline`` command's argument parser: one function per command, each adding
its subparser and flags (help texts are the CLI's documentation)."""

from __future__ import annotations

import argparse
import sys
from typing import NoReturn, TypeAlias

from timeline._cli.commands import (
    cmd_compact,
    cmd_delete,
    cmd_demo,
    cmd_import,
    cmd_inspect,
    cmd_list,
    cmd_render,
    cmd_search,
)
from timeline._cli.export import cmd_export
from timeline._cli.output import paint

__all__ = ["DESCRIPTION", "build_parser"]

DESCRIPTION = """\
Keep an LLM conversation as a timeline of typed blocks, and look at it.

Start with the demo, then look at what it stored:
  timeline demo
  timeline list --db timeline-demo.db
  timeline inspect demo --db timeline-demo.db
  timeline inspect demo --db timeline-demo.db --html timeline.html

Commands that only read (list, render, inspect, search, export) never create a store: a --db
that does not exist is an error. Stores and HTML pages are created readable by you only.

Exit codes: 0 ok, 1 runtime error (one line; --debug shows the traceback), 2 usage error.
"""

Subparsers: TypeAlias = "argparse._SubParsersAction[_Parser]"


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("block-timeline")
    except PackageNotFoundError:
        return "unknown"


class _Count:
    """An argparse type: an integer >= ``minimum`` (the help says the minimum when it is
    above 1), with the flag named on error."""

    __name__ = "integer"  # argparse names the type by it

    def __init__(self, minimum: int) -> None:
        self.minimum = minimum

    def __call__(self, text: str) -> int:
        try:
            value = int(text.replace("_", ""))
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if value < self.minimum:
            raise argparse.ArgumentTypeError(f"must be at least {self.minimum:,}, got {value}")
        return value


class _Parser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one ``error: ...`` line, like every other."""

    def error(self, message: str) -> NoReturn:
        line = f"{message} (see '{self.prog} --help')"
        self.exit(2, f"{paint('error', '31', sys.stderr)}: {line}\n")


def _common() -> _Parser:
    """The flags every command takes (a parent parser)."""
    common = _Parser(add_help=False)
    common.add_argument(
        "--debug",
        action="store_true",
        default=argparse.SUPPRESS,
        help="on an error, print the Python traceback too; log what the library does to stderr",
    )
    return common


def _command(sub: Subparsers, name: str, help: str) -> argparse.ArgumentParser:
    return sub.add_parser(name, help=help, description=help, parents=[_common()])


def _db(s: argparse.ArgumentParser) -> None:
    s.add_argument(
        "--db",
        required=True,
        metavar="PATH",
        help="the store: a SQLite file path, or a store URL (sqlite:///..., postgresql://...)",
    )


def _json_flag(s: argparse.ArgumentParser, what: str) -> None:
    s.add_argument("--json", action="store_true", help=f"print {what} as JSON")


def _stored(sub: Subparsers, name: str, help: str) -> argparse.ArgumentParser:
    """A command over one stored conversation, rendered under a budget and system prompt
    (by default the ones it was last rendered with, kept in the store)."""
    s = _command(sub, name, help)
    s.add_argument("conversation", metavar="ID", help="the conversation id")
    _db(s)
    s.add_argument(
        "--max-tokens",
        type=_Count(1),
        default=None,
        metavar="N",
        help="context budget in tokens (default: the budget the conversation was last "
        "rendered with; none, and then nothing compacts, if it had none)",
    )
    s.add_argument(
        "--system",
        default=None,
        metavar="TEXT|@FILE",
        help="system prompt text, or @FILE to read it from a file (one trailing "
        "newline is dropped); default: the conversation's own, kept in the store",
    )
    return s


def _query(text: str) -> str:
    """An argparse type: a search query with at least one non-blank character."""
    if not text.strip():
        raise argparse.ArgumentTypeError("QUERY is empty; give the words to look for")
    return text


def _add_demo(sub: Subparsers) -> None:
    d = _command(sub, "demo", "run a scripted coding-agent session on a local SQLite store")
    d.add_argument(
        "--turns", type=_Count(1), default=40, metavar="N", help="turns to run (default: 40)"
    )
    d.add_argument(
        "--max-tokens",
        type=_Count(1000),
        default=16_000,
        metavar="N",
        help="context budget in tokens, at least 1,000 (default: 16,000)",
    )
    d.add_argument(
        "--db",
        default="timeline-demo.db",
        metavar="PATH",
        help="the store, a SQLite path or a store URL (default: timeline-demo.db)",
    )
    d.add_argument(
        "--seed",
        type=int,
        default=7,
        metavar="N",
        help="seed of the scripted session: another seed, other files and errors (default: 7)",
    )
    d.add_argument(
        "--conversation",
        default="demo",
        metavar="ID",
        help="conversation id to write (default: demo)",
    )
    d.add_argument(
        "--force",
        action="store_true",
        help="replace the conversation even if the demo did not create it",
    )
    d.set_defaults(func=cmd_demo)


def _add_import(sub: Subparsers) -> None:
    i = _command(
        sub, "import", "import OpenAI Chat Completions, Anthropic Messages or Responses JSON"
    )
    i.add_argument(
        "file", metavar="FILE", help="the JSON file (a messages list, or an object); - reads stdin"
    )
    i.add_argument(
        "--format",
        choices=("openai", "anthropic", "responses"),
        default=None,
        help="the file's format: Chat Completions messages, Anthropic Messages, or Responses "
        "API input items (read whole; the other two are streamed). Default: detected from "
        "the file's first messages",
    )
    _db(i)
    i.add_argument("--conversation", required=True, metavar="ID", help="a new conversation id")
    i.set_defaults(func=cmd_import)


def _add_list(sub: Subparsers) -> None:
    ls = _command(sub, "list", "list the conversations in a store")
    _db(ls)
    _json_flag(ls, "an array of conversations")
    ls.set_defaults(func=cmd_list)


def _add_render(sub: Subparsers) -> None:
    r = _stored(sub, "render", "print the prompt a model call would get")
    r.add_argument(
        "--format",
        choices=("anthropic", "openai", "responses", "text", "document"),
        default="anthropic",
        help="payload format (default: anthropic)",
    )
    r.set_defaults(func=cmd_render)


def _add_inspect(sub: Subparsers) -> None:
    n = _stored(sub, "inspect", "context usage by block type (a /context view)")
    _json_flag(n, "the usage (tokens and share per block type)")
    n.add_argument(
        "--html",
        metavar="OUT",
        default=None,
        help="also write the whole timeline as one self-contained HTML page to OUT "
        "(readable by you only; never over the store, nor over an existing file "
        "without --force)",
    )
    n.add_argument(
        "--force",
        action="store_true",
        help="let --html replace an existing file (a symlink there is replaced, not followed)",
    )
    n.set_defaults(func=cmd_inspect)


def _add_search(sub: Subparsers) -> None:
    s = _command(sub, "search", "full-text search of everything the conversation held")
    s.add_argument("conversation", metavar="ID", help="the conversation id")
    s.add_argument("query", metavar="QUERY", type=_query, help="words to look for")
    _db(s)
    s.add_argument(
        "--limit", type=_Count(1), default=10, metavar="N", help="most hits to show (default: 10)"
    )
    _json_flag(s, "the hits")
    s.set_defaults(func=cmd_search)


def _add_export(sub: Subparsers) -> None:
    e = _command(
        sub,
        "export",
        "write a whole stored conversation, evicted history included, as provider JSON "
        "(what import reads)",
    )
    e.add_argument("conversation", metavar="ID", help="the conversation id")
    _db(e)
    e.add_argument(
        "--format",
        choices=("anthropic", "openai", "responses"),
        default="anthropic",
        help="Anthropic Messages {system, messages}, Chat Completions messages or Responses "
        "input items (default: anthropic)",
    )
    e.add_argument(
        "--system",
        default=None,
        metavar="TEXT|@FILE",
        help="system prompt text, or @FILE to read it from a file; default: the "
        "conversation's own, kept in the store",
    )
    e.set_defaults(func=cmd_export)


def _add_delete(sub: Subparsers) -> None:
    d = _command(sub, "delete", "delete a stored conversation (window, turn log, summaries)")
    d.add_argument("conversation", metavar="ID", help="the conversation id")
    _db(d)
    _json_flag(d, "what was deleted")
    d.set_defaults(func=cmd_delete)


def _add_compact(sub: Subparsers) -> None:
    c = _stored(
        sub,
        "compact",
        "compact now and persist (like /compact); needs a budget (the conversation's own, "
        "--max-tokens) or --keep-recent",
    )
    c.add_argument(
        "--keep-recent",
        type=_Count(1),
        default=None,
        metavar="TOKENS",
        help="tokens of recent blocks to keep verbatim (needed without --max-tokens)",
    )
    c.add_argument(
        "--clear",
        action="store_true",
        help="clear old tool results first (ClearingPolicy defaults); summarize only when "
        "that is not enough",
    )
    c.add_argument(
        "--dry-run",
        action="store_true",
        help="show what the compaction would do (its tier, the cut, the blocks and tokens "
        "summarized and kept, the tokens after) and change nothing",
    )
    _json_flag(c, "what the compaction did (with --dry-run: would do)")
    c.set_defaults(func=cmd_compact)


def build_parser() -> argparse.ArgumentParser:
    """The whole command line: global flags, then each command in the order ``--help``
    lists them."""
    p = _Parser(
        prog="timeline",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--version", action="version", version=f"timeline {_version()}")
    p.add_argument(
        "--debug",
        action="store_true",
        help="on an error, print the traceback too; log what the library does to stderr",
    )
    sub = p.add_subparsers(
        dest="command", required=True, metavar="COMMAND", help="what to do (each has --help)"
    )
    for add in (
        _add_demo,
        _add_import,
        _add_list,
        _add_render,
        _add_inspect,
        _add_search,
        _add_compact,
        _add_export,
        _add_delete,
    ):
        add(sub)
    return p
