"""The recall benchmark: what a later question can still find after compaction, in the
prompt or with one search (``python -m benchmarks.recall``)."""
