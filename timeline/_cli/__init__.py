"""The ``timeline`` command: demo, import, list, render, inspect, search, compact, export,
delete.

Exit codes: 0 ok, 1 runtime error (one ``error: ...`` line; --debug for the traceback),
2 usage error. Errors name the command-line flags and files, not the library's argument
names, and are printed with control characters escaped (an id or a path from a file
cannot drive the terminal).
"""

from __future__ import annotations

import json
import logging
import os
import sys
import traceback
import warnings
from collections.abc import Sequence

from timeline._cli.commands import cmd_compact, cmd_demo, cmd_inspect, cmd_render
from timeline._cli.output import paint, printable
from timeline._cli.parser import build_parser as _parser
from timeline._model import BudgetError, PolicyError, TimelineError

__all__ = ["main"]

_FLAGS = {"max_tokens": "--max-tokens", "keep_recent_tokens": "--keep-recent"}
"""Policy settings the command line sets, and the flag that sets each."""


def _error_text(exc: Exception) -> str:
    """The one ``error:`` line for ``exc``, in the command line's terms: a policy setting
    is named by its flag, and a prompt whose fixed part does not fit says which flags
    change it."""
    if isinstance(exc, OSError):
        return _os_error(exc)
    if isinstance(exc, PolicyError) and exc.field in _FLAGS:
        return f"{_FLAGS[exc.field]}: {exc.reason}"
    if isinstance(exc, BudgetError) and exc.parts:
        what = " and ".join((", ".join(exc.parts[:-1]), exc.parts[-1])).removeprefix(" and ")
        need = "needs" if len(exc.parts) == 1 else "need"
        return (
            f"the {what} alone {need} {exc.required:,} tokens but the budget is "
            f"{exc.budget:,}; shorten --system or raise --max-tokens"
        )
    return str(exc)


def _os_error(exc: OSError) -> str:
    """``path: reason`` instead of ``[Errno 2] No such file or directory: 'path'``."""
    reason = (exc.strerror or str(exc)).lower()
    return f"{exc.filename}: {reason}" if exc.filename else reason


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
    from timeline._compaction import NoBudgetWarning

    # a command without --max-tokens is the normal case here; inspect says it in words
    warnings.simplefilter("ignore", NoBudgetWarning)
    if args.debug:  # the library's log (compactions, retries, persists) on stderr
        logging.basicConfig(level=logging.DEBUG, format="%(name)s: %(message)s")
    else:  # the output already says what happened; no stray log lines
        logging.getLogger("timeline").addHandler(logging.NullHandler())
    try:
        if args.func in _COUNTS_TOKENS:
            from timeline._tokens import warm_up

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
        text = _error_text(exc)
        print(f"{paint('error', '31', sys.stderr)}: {printable(text)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # never a traceback: anything else is a bug, said in one line
        if args.debug:
            traceback.print_exc()
        text = " ".join(str(exc).split())
        text = f"unexpected {type(exc).__name__}: {text} (a bug: --debug shows the traceback)"
        text = text.encode("utf-8", "backslashreplace").decode("utf-8")
        print(f"{paint('error', '31', sys.stderr)}: {printable(text)}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
