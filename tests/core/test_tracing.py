"""OpenTelemetry spans (the extra ``[otel]``): renders, compactions, persists, searches
and usage reports, recorded by the SDK's in-memory exporter; without the package nothing
is imported."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import index_store
from timeline import CompactionPolicy, Timeline, blocks

trace = pytest.importorskip("opentelemetry.trace")
sdk_trace = pytest.importorskip("opentelemetry.sdk.trace")
export = pytest.importorskip("opentelemetry.sdk.trace.export")
memory = pytest.importorskip("opentelemetry.sdk.trace.export.in_memory_span_exporter")

SYSTEM = "You are a careful assistant."


@pytest.fixture
def spans(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """An SDK tracer provider with an in-memory exporter, as the application's."""
    exporter = memory.InMemorySpanExporter()
    provider = sdk_trace.TracerProvider()
    provider.add_span_processor(export.SimpleSpanProcessor(exporter))
    monkeypatch.setattr(trace, "get_tracer_provider", lambda: provider)
    yield exporter
    provider.shutdown()


def named(exporter: Any, name: str) -> list[Any]:
    return [s for s in exporter.get_finished_spans() if s.name == name]


def grow(tl: Timeline, turns: int) -> None:
    for i in range(turns):
        tl.begin_turn()
        tl.append(blocks.user_prompt(f"Question {i}: " + "how does it work? " * 20))
        tl.append(blocks.assistant_completion(f"Answer {i}: " + "like this. " * 20))


def test_a_render_is_a_span_with_its_figures(spans: Any) -> None:
    """timeline.render carries the conversation, the prompt's tokens and blocks, the
    budget and the checkpoints; no compaction span when none ran."""
    tl = Timeline("c1", policy=CompactionPolicy(max_tokens=50_000))
    grow(tl, 3)
    view = tl.render(SYSTEM)
    (span,) = named(spans, "timeline.render")
    attributes = dict(span.attributes)
    assert attributes["timeline.conversation_id"] == "c1"
    assert attributes["timeline.tokens"] == view.tokens
    assert attributes["timeline.blocks"] == len(view.blocks)
    assert attributes["timeline.budget"] == 50_000
    assert attributes["timeline.cache.checkpoints"] == len(view.cache_points)
    assert attributes["timeline.compacted"] is False
    assert named(spans, "timeline.compaction") == []


def test_a_compaction_is_a_span_inside_its_render(spans: Any) -> None:
    """The render that compacts has a timeline.compaction child with the tokens before
    and after, the tier, the blocks summarized and whether the summary was prepared."""
    tl = Timeline("c1", policy=CompactionPolicy(max_tokens=3_000))
    for _ in range(40):
        grow(tl, 1)
        view = tl.render(SYSTEM)
        if view.compaction is not None:
            break
    stats = view.compaction
    assert stats is not None
    (span,) = named(spans, "timeline.compaction")
    attributes = dict(span.attributes)
    assert attributes["timeline.tokens_before"] == stats.tokens_before
    assert attributes["timeline.tokens_after"] == stats.tokens_after
    assert attributes["timeline.tier"] == "summarize"
    assert attributes["timeline.blocks_summarized"] == stats.compacted_blocks > 0
    assert attributes["timeline.prepared"] is False
    render = named(spans, "timeline.render")[-1]
    assert span.parent is not None and span.parent.span_id == render.context.span_id
    assert render.attributes["timeline.compacted"] is True


def test_a_manual_compaction_is_a_span(spans: Any) -> None:
    """compact() emits timeline.compaction on its own (reason manual)."""
    tl = Timeline("c1", policy=CompactionPolicy(max_tokens=20_000))
    grow(tl, 12)
    tl.compact(SYSTEM)
    (span,) = named(spans, "timeline.compaction")
    assert span.attributes["timeline.reason"] == "manual"


@pytest.mark.parametrize("url", ["memory://", "sqlite"])
def test_persist_and_search_are_spans(spans: Any, url: str, tmp_path: Path) -> None:
    """timeline.persist says the version and what was written; timeline.search the
    store, the query's size (never its text) and the hits."""
    store = index_store.open(url if url != "sqlite" else f"sqlite:///{tmp_path / 't.db'}")
    tl = Timeline("c1", policy=CompactionPolicy(max_tokens=50_000))
    grow(tl, 2)
    version = tl.persist(store)
    (persist,) = named(spans, "timeline.persist")
    assert dict(persist.attributes) == {
        "timeline.conversation_id": "c1",
        "timeline.version": version,
        "timeline.log_blocks": 6,
        "timeline.summaries": 0,
        "timeline.window_blocks": 6,
        "timeline.evicted_blocks": 0,
    }
    hits = store.search("c1", "how does it work", limit=3)
    (search,) = named(spans, "timeline.search")
    attributes = dict(search.attributes)
    assert attributes["timeline.hits"] == len(hits) > 0
    assert attributes["timeline.query_words"] == 4
    assert attributes["timeline.limit"] == 3
    assert "how does" not in str(attributes)


def test_a_usage_report_is_a_span_with_the_cache_figures(spans: Any) -> None:
    """record_usage emits timeline.usage: the prompt tokens, the cache read and write,
    whether the cache was hit and the cache break's cause."""
    tl = Timeline("c1", policy=CompactionPolicy(max_tokens=50_000))
    grow(tl, 2)
    tl.render(SYSTEM)
    tl.record_usage(
        {"input_tokens": 10, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 500}
    )
    (span,) = named(spans, "timeline.usage")
    assert dict(span.attributes) == {
        "timeline.conversation_id": "c1",
        "timeline.prompt_tokens": 510,
        "timeline.cache.read_tokens": 0,
        "timeline.cache.write_tokens": 500,
        "timeline.cache.hit": False,
        "timeline.cache.break": "none",
    }


def test_without_a_tracer_provider_nothing_is_recorded() -> None:
    """With the package but no provider set (the API's default), renders record nothing
    and work as always."""
    assert isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider)
    tl = Timeline("c1", policy=CompactionPolicy(max_tokens=3_000))
    grow(tl, 20)
    assert tl.render(SYSTEM).compaction is not None


@pytest.mark.slow  # a new process
def test_without_the_package_nothing_is_imported(tmp_path: Path) -> None:
    """Without opentelemetry installed, renders, compactions, persists and searches work,
    nothing of it is imported, and it is looked for once."""
    script = textwrap.dedent(
        """
        import sys

        looks = []

        class Missing:
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] == "opentelemetry":
                    looks.append(name)
                    raise ModuleNotFoundError(name)
                return None

        sys.meta_path.insert(0, Missing())
        import index_store
        from timeline import CompactionPolicy, Timeline, blocks

        store = index_store.open(sys.argv[1])
        tl = Timeline("c", policy=CompactionPolicy(max_tokens=3_000))
        compactions = 0
        for i in range(40):
            tl.begin_turn()
            tl.append(blocks.user_prompt("question " * 150))
            compactions += tl.render("sys").compaction is not None
            tl.persist(store)
        assert compactions and store.search("c", "question", limit=2)
        assert not [m for m in sys.modules if m.startswith("opentelemetry")]
        print(len(looks))
        """
    )
    db = f"sqlite:///{tmp_path / 't.db'}"
    out = subprocess.run(
        [sys.executable, "-c", script, db], capture_output=True, text=True, check=False
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["1"]
