"""Peak memory of ``timeline import`` on a large messages file, as a multiple of its size.

``python -m benchmarks.import_memory --mb 200`` writes an OpenAI messages file of about
that size (tool results of about 40 KB, like real exports), then imports it in a child
process twice: with ``timeline import`` (streaming) and with the whole-document path
(``json.load`` + ``import_messages``) for comparison. Prints each child's peak RSS and its
ratio to the file size.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

_WHOLE = """
import json, resource, sys, index_store
from timeline._io.importers import import_messages
with open(sys.argv[1], encoding="utf-8") as fh:
    data = json.load(fh)
tl, _ = import_messages(data, "openai", "c")
store = index_store.open("sqlite:///" + sys.argv[2])
tl.persist(store)
store.close()
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)
"""
_CLI = """
import resource, sys
from timeline._cli import main
code = main(sys.argv[1:])
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)
raise SystemExit(code)
"""


def write_file(path: Path, megabytes: int) -> int:
    """An OpenAI messages export of about ``megabytes`` MB; returns its size in bytes."""
    line = "2026-01-01 12:00:00 INFO worker processed request id=123456 in 12 ms\n"
    result = line * 600
    with path.open("w", encoding="utf-8") as fh:
        fh.write("[")
        n = 0
        while fh.tell() < megabytes * 1_000_000:
            if n:
                fh.write(",")
            call = f"call_{n}"
            turn = [
                {"role": "user", "content": f"Check the log of worker {n}."},
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": call,
                            "type": "function",
                            "function": {"name": "bash", "arguments": '{"command": "cat w.log"}'},
                        }
                    ],
                },
                {"role": "tool", "tool_call_id": call, "content": result},
                {"role": "assistant", "content": f"Worker {n} is healthy."},
            ]
            fh.write(",".join(json.dumps(m) for m in turn))
            n += 1
        fh.write("]")
    return path.stat().st_size


def peak_rss(args: list[str]) -> int:
    """Peak resident memory (bytes) of a child process that prints its own ru_maxrss."""
    done = subprocess.run(
        args,
        check=True,
        stdout=subprocess.DEVNULL,
        capture_output=False,
        stderr=subprocess.PIPE,
        text=True,
    )
    return int(done.stderr.strip().splitlines()[-1]) * 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=200, help="file size in MB")
    parser.add_argument("--skip-whole", action="store_true", help="only the streaming import")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "export.json"
        size = write_file(src, args.mb)
        print(f"file: {size / 1e6:,.0f} MB")
        stream = peak_rss(
            [
                sys.executable,
                "-c",
                _CLI,
                "import",
                str(src),
                "--format",
                "openai",
                "--db",
                os.path.join(tmp, "s.db"),
                "--conversation",
                "c",
            ]
        )
        print(
            f"timeline import (streaming): peak RSS {stream / 1e6:,.0f} MB = {stream / size:.2f}x"
        )
        if not args.skip_whole:
            whole = peak_rss([sys.executable, "-c", _WHOLE, str(src), os.path.join(tmp, "w.db")])
            print(
                f"json.load + import_messages: peak RSS {whole / 1e6:,.0f} MB = {whole / size:.2f}x"
            )


if __name__ == "__main__":
    main()
