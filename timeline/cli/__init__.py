"""The ``timeline`` command: demo, import, list, render, inspect, search, compact.

Exit codes: 0 ok, 1 runtime error (one ``error: ...`` line; --debug for the traceback),
2 usage error. Errors name the command-line flags, not the library's argument names.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import sys
import traceback
import warnings
from collections.abc import Callable, Sequence
from typing import NoReturn

from timeline.cli.commands import (
    cmd_compact,
    cmd_demo,
    cmd_import,
    cmd_inspect,
    cmd_list,
    cmd_render,
    cmd_search,
)
from timeline.cli.output import paint
from timeline.model.errors import TimelineError

__all__ = ["main"]

DESCRIPTION = """\
Keep an LLM conversation as a timeline of typed blocks, and look at it.

Start with the demo, then look at what it stored:
  timeline demo
  timeline list --db timeline-demo.db
  timeline inspect demo --db timeline-demo.db
  timeline inspect demo --db timeline-demo.db --html timeline.html

Exit codes: 0 ok, 1 runtime error (one line; --debug shows the traceback), 2 usage error.
"""

# library argument names -> the flags that set them, for error messages
_FLAG_TERMS = (
    (re.compile(r"\bkeep_recent_tokens\b"), "--keep-recent"),
    (re.compile(r"\bmax_tokens\b"), "--max-tokens"),
    (re.compile(r"\bcontext_window\b"), "--max-tokens"),
    (re.compile(r"\braise the budget\b"), "raise --max-tokens"),
    (re.compile(r"\bshorten it\b"), "shorten --system"),
)


def flag_terms(message: str) -> str:
    """``message`` with the library's argument names replaced by the CLI flags."""
    for pattern, flag in _FLAG_TERMS:
        message = pattern.sub(flag, message)
    return message


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("block-timeline")
    except PackageNotFoundError:
        return "unknown"


def _count(minimum: int) -> Callable[[str], int]:
    """An argparse type: an integer >= ``minimum``, with the flag named on error."""

    def parse(text: str) -> int:
        try:
            value = int(text.replace("_", ""))
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {value}")
        return value

    parse.__name__ = "integer"
    return parse


class _Parser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one ``error: ...`` line, like every other."""

    def error(self, message: str) -> NoReturn:
        line = f"{message} (see '{self.prog} --help')"
        self.exit(2, f"{paint('error', '31', sys.stderr)}: {line}\n")


def _parser() -> argparse.ArgumentParser:
    common = _Parser(add_help=False)
    common.add_argument(
        "--debug",
        action="store_true",
        default=argparse.SUPPRESS,
        help="on an error, print the Python traceback too; log what the library does to stderr",
    )
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

    def command(name: str, help: str) -> argparse.ArgumentParser:
        return sub.add_parser(name, help=help, description=help, parents=[common])

    def db(s: argparse.ArgumentParser) -> None:
        s.add_argument(
            "--db",
            required=True,
            metavar="PATH",
            help="the store: a SQLite file path, or a store URL (sqlite:///..., postgresql://...)",
        )

    def stored(name: str, help: str) -> argparse.ArgumentParser:
        s = command(name, help)
        s.add_argument("conversation", metavar="ID", help="the conversation id")
        db(s)
        s.add_argument(
            "--max-tokens",
            type=_count(1),
            default=None,
            metavar="N",
            help="context budget in tokens (default: none, and then nothing compacts)",
        )
        s.add_argument(
            "--system",
            default=None,
            metavar="TEXT|@FILE",
            help="system prompt text, or @FILE to read it from a file (one trailing "
            "newline is dropped)",
        )
        return s

    def json_flag(s: argparse.ArgumentParser, what: str) -> None:
        s.add_argument("--json", action="store_true", help=f"print {what} as JSON")

    d = command("demo", "run a scripted coding-agent session on a local SQLite store")
    d.add_argument("--turns", type=_count(1), default=40, metavar="N", help="turns to run")
    d.add_argument(
        "--max-tokens", type=_count(1000), default=16_000, metavar="N", help="context budget"
    )
    d.add_argument(
        "--db", default="timeline-demo.db", metavar="PATH", help="the store (SQLite path or URL)"
    )
    d.add_argument("--seed", type=int, default=7, metavar="N", help="seed of the scripted session")
    d.add_argument("--conversation", default="demo", metavar="ID", help="conversation id to write")
    d.add_argument(
        "--force",
        action="store_true",
        help="replace the conversation even if the demo did not create it",
    )
    d.set_defaults(func=cmd_demo)

    i = command("import", "import OpenAI Chat Completions, Anthropic Messages or Responses JSON")
    i.add_argument("file", metavar="FILE", help="the JSON file (a messages list, or an object)")
    i.add_argument(
        "--format",
        choices=("openai", "anthropic", "responses"),
        required=True,
        help="the file's format: Chat Completions messages, Anthropic Messages, or Responses "
        "API input items (read whole; the other two are streamed)",
    )
    db(i)
    i.add_argument("--conversation", required=True, metavar="ID", help="a new conversation id")
    i.set_defaults(func=cmd_import)

    ls = command("list", "list the conversations in a store")
    db(ls)
    json_flag(ls, "an array of conversations")
    ls.set_defaults(func=cmd_list)

    r = stored("render", "print the prompt a model call would get")
    r.add_argument(
        "--format",
        choices=("anthropic", "openai", "responses", "text", "document"),
        default="anthropic",
        help="payload format (default: anthropic)",
    )
    r.set_defaults(func=cmd_render)

    n = stored("inspect", "context usage by block type (a /context view)")
    json_flag(n, "the usage (tokens and share per block type)")
    n.add_argument(
        "--html",
        metavar="OUT",
        default=None,
        help="also write the whole timeline as one static HTML page to OUT",
    )
    n.set_defaults(func=cmd_inspect)

    s = command("search", "full-text search of everything the conversation held")
    s.add_argument("conversation", metavar="ID", help="the conversation id")
    s.add_argument("query", metavar="QUERY", help="words to look for")
    db(s)
    s.add_argument("--limit", type=_count(1), default=10, metavar="N", help="most hits to show")
    json_flag(s, "the hits")
    s.set_defaults(func=cmd_search)

    c = stored(
        "compact", "compact now and persist (like /compact); needs --max-tokens or --keep-recent"
    )
    c.add_argument(
        "--keep-recent",
        type=_count(1),
        default=None,
        metavar="TOKENS",
        help="tokens of recent blocks to keep verbatim (needed without --max-tokens)",
    )
    json_flag(c, "what the compaction did")
    c.set_defaults(func=cmd_compact)
    return p


def _quiet_stdout() -> None:
    """After a broken pipe (``timeline ... | head``): send what is left to /dev/null."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


_COUNTS_TOKENS = frozenset({cmd_demo, cmd_render, cmd_inspect, cmd_compact})
"""Commands that render: they load the tokenizer first (``warm_up``), before any store."""


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    args = _parser().parse_args(argv)
    from timeline.compaction.policy import NoBudgetWarning

    # a command without --max-tokens is the normal case here; inspect says it in words
    warnings.simplefilter("ignore", NoBudgetWarning)
    if args.debug:  # the library's log (compactions, retries, persists) on stderr
        logging.basicConfig(level=logging.DEBUG, format="%(name)s: %(message)s")
    else:  # the output already says what happened; no stray log lines
        logging.getLogger("timeline").addHandler(logging.NullHandler())
    try:
        if args.func in _COUNTS_TOKENS:
            from timeline.tokens import warm_up

            warm_up()
        code = int(args.func(args))
        sys.stdout.flush()
        return code
    except BrokenPipeError:
        _quiet_stdout()
        return 0
    except (TimelineError, OSError, ValueError, json.JSONDecodeError) as exc:
        if args.debug:
            traceback.print_exc()
        print(f"{paint('error', '31', sys.stderr)}: {flag_terms(str(exc))}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # never a traceback: anything else is a bug, said in one line
        if args.debug:
            traceback.print_exc()
        text = " ".join(str(exc).split())
        text = f"unexpected {type(exc).__name__}: {text} (a bug: --debug shows the traceback)"
        text = text.encode("utf-8", "backslashreplace").decode("utf-8")
        print(f"{paint('error', '31', sys.stderr)}: {text}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
