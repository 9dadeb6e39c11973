"""The recall benchmark: what a later question can still find after compaction, in the
prompt or with one search (``python -m benchmarks.recall``)."""

START, END = "<!-- recall-benchmark:start -->", "<!-- recall-benchmark:end -->"
"""The section ``python -m benchmarks.recall --write-docs`` rewrites in docs/benchmarks.md."""
NOTES_START, NOTES_END = "<!-- recall-notes:start -->", "<!-- recall-notes:end -->"
"""Hand-written notes on those figures (the library before, recall on and off), kept by
every command that writes the file."""
