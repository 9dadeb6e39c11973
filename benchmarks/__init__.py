"""Benchmarks: ``python -m benchmarks`` runs them all and writes docs/benchmarks.md."""
