"""The public surface: exactly the names meant to be public, and a cheap import."""

from __future__ import annotations

import ast
import importlib
import inspect
import re
import subprocess
import sys
from pathlib import Path

import index_store
import timeline

PUBLIC_NAMES = frozenset(
    {
        "AsyncCacheWarmSummarizer",
        "AsyncIndexStore",
        "AsyncLLMSummarizer",
        "AsyncSummarizerError",
        "AsyncSummarizer",
        "Block",
        "BlockTypeSpec",
        "BudgetError",
        "CacheWarmSummarizer",
        "CheckpointInfo",
        "ClearingPolicy",
        "CodecError",
        "CompactionDigest",
        "CompactionPolicy",
        "CompactionPreview",
        "CompactionStats",
        "ConflictError",
        "ContextOverflowError",
        "CorruptRecordError",
        "DriverError",
        "DuplicateBlockIdError",
        "Embedder",
        "EmptyPromptError",
        "EmptySummaryError",
        "HeuristicCounter",
        "IndexStore",
        "InvalidBlockError",
        "InvalidConversationIdError",
        "InventorySummarizer",
        "LLMSummarizer",
        "LastRender",
        "NativeCompaction",
        "NoBudgetWarning",
        "NotFoundError",
        "OrphanToolResultError",
        "PinnedOverBudgetError",
        "PolicyError",
        "RecallPolicy",
        "RenderedContext",
        "SearchHit",
        "SlidingWindowSummarizer",
        "StoreError",
        "StoreUnavailableError",
        "Summarizer",
        "SummaryRequest",
        "TiktokenCounter",
        "Timeline",
        "TimelineError",
        "TimelineSnapshot",
        "TimelineState",
        "TokenCounter",
        "TokenizerUnavailableError",
        "ToolNameError",
        "ToolSpec",
        "TruncateSummarizer",
        "UnknownPathError",
        "blocks",
        "context_window_for",
        "decode_block",
        "encode_block",
        "is_context_overflow",
        "is_usage_overflow",
        "provider_call_id",
        "provider_tool_name",
        "register_block_type",
        "sequential_ids",
        "tool_specs",
        "warm_up",
        "SummaryKind",
        "MEMORY_TOOL_SPECS",
        "CodingSession",
        "ContextUsage",
        "DriverEvent",
        "FunctionTool",
        "ImportedConversation",
        "ModelCall",
        "ModelReply",
        "ReactDriver",
        "ScriptedModel",
        "Tool",
        "ToolCallRequest",
        "ToolOutput",
        "TurnResult",
        "block_type",
        "compact_context_tool",
        "demo_tools",
        "function_tool",
        "import_conversation",
        "import_messages",
        "memory_read_tool",
        "memory_tools",
        "payload_tokens",
        "read_path_tool",
        "reply_blocks",
    }
)
"""The contract names of DESIGN §10 (and the third round's additions)."""


def test_timeline_all_is_the_public_surface() -> None:
    """timeline.__all__ lists the contract names of DESIGN §10, what the docs use, and nothing
    private."""
    assert set(timeline.__all__) == PUBLIC_NAMES
    assert sorted(timeline.__all__) == list(timeline.__all__)
    for name in timeline.__all__:
        assert hasattr(timeline, name)


def test_index_store_all_is_the_public_surface() -> None:
    """index_store exports open() and the backends (the protocols are timeline's)."""
    expected = ["MemoryStore", "PostgresStore", "SqliteStore", "open", "shown_dsn"]
    assert expected == index_store.__all__
    assert index_store.PostgresStore.__name__ == "PostgresStore"


def test_every_error_derives_from_timeline_error() -> None:
    """Every exported exception class is a TimelineError."""
    errors = [getattr(timeline, n) for n in timeline.__all__ if n.endswith("Error")]
    assert errors
    assert all(issubclass(e, timeline.TimelineError) for e in errors)


def test_import_loads_no_tokenizer_and_no_driver() -> None:
    """Importing both packages loads neither tiktoken nor psycopg and opens no file."""
    code = (
        "import sys, timeline, index_store; "
        "print(sorted(m for m in ('tiktoken', 'psycopg') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# The modules a user imports from. Everything else is implementation: a module or package
# whose name starts with "_".
PUBLIC_MODULES = (
    "timeline",
    "timeline.blocks",
    "timeline.summarizers",
    "timeline.integrations",
    "timeline.integrations.langchain",
    "timeline.integrations.openai_agents",
    "timeline.integrations.pydantic_ai",
    "index_store",
)
# DESIGN §10.1 names `from timeline.summarizers import TruncateSummarizer`: the one module
# that repeats names of another, by contract
ALIASES = {"timeline.summarizers": "timeline"}


def _exports(module: str) -> dict[str, object]:
    mod = importlib.import_module(module)
    return {name: getattr(mod, name) for name in mod.__all__}


def test_each_public_name_has_one_path() -> None:
    """No class or function is exported by two public modules (but the contract's alias)."""
    homes: dict[int, list[str]] = {}
    for module in PUBLIC_MODULES:
        if module in ALIASES:
            continue
        for name, obj in _exports(module).items():
            if isinstance(obj, type) or inspect.isfunction(obj):
                homes.setdefault(id(obj), []).append(f"{module}.{name}")
    twice = sorted(paths for paths in homes.values() if len(paths) > 1)
    assert twice == []


def test_the_alias_module_repeats_its_homes_names() -> None:
    """timeline.summarizers holds the very objects timeline exports, nothing of its own."""
    for alias, home in ALIASES.items():
        for name, obj in _exports(alias).items():
            assert getattr(importlib.import_module(home), name) is obj


def test_public_names_say_where_they_are_imported_from() -> None:
    """help(), reprs, tracebacks and pickles name the public module, never a private one."""
    wrong = {}
    for module in PUBLIC_MODULES:
        home = ALIASES.get(module, module)
        for name, obj in _exports(module).items():
            kind = isinstance(obj, type) or inspect.isfunction(obj)
            if kind and obj.__module__ != home:
                wrong[f"{module}.{name}"] = obj.__module__
    assert wrong == {}
    assert repr(timeline.Timeline) == "<class 'timeline.Timeline'>"
    assert timeline.BudgetError.__module__ == "timeline"


def _doc_files() -> list[Path]:
    root = Path(__file__).parents[2]
    pages = [root / "README.md", *sorted((root / "docs").glob("*.md"))]
    return pages + sorted((root / "examples").glob("*.py"))


def _code_imports(path: Path) -> list[tuple[str, list[str]]]:
    text = path.read_text(encoding="utf-8")
    sources = (
        [text]
        if path.suffix == ".py"
        else re.findall(r"^```(?:python|py)\n(.*?)^```", text, flags=re.M | re.S)
    )
    found = []
    for source in sources:
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.ImportFrom) and node.module and not node.level:
                found.append((node.module, [a.name for a in node.names]))
            elif isinstance(node, ast.Import):
                found.extend((a.name, []) for a in node.names)
    return found


def test_every_name_the_docs_import_is_public_and_exists() -> None:
    """The docs and examples import only public modules, and each name is there."""
    ours = ("timeline", "index_store")
    wrong = []
    seen = 0
    for path in _doc_files():
        for module, names in _code_imports(path):
            if module.split(".")[0] not in ours:
                continue
            seen += 1
            if module not in PUBLIC_MODULES:
                wrong.append(f"{path.name}: {module}")
                continue
            mod = importlib.import_module(module)
            wrong.extend(f"{path.name}: {module}.{n}" for n in names if not hasattr(mod, n))
    assert seen > 20
    assert wrong == []


def test_user_docs_name_no_private_module() -> None:
    """User pages name public paths (the architecture page and docs/dev/ map the inside)."""
    root = Path(__file__).parents[2]
    pages = [root / "README.md", *sorted((root / "docs").glob("*.md"))]
    wrong = {
        p.name: hits
        for p in pages
        if p.name != "architecture.md"
        and (hits := re.findall(r"\b(?:timeline|index_store)\._[a-z]\w*", p.read_text("utf-8")))
    }
    assert wrong == {}


def _resolves(path: str) -> bool:
    """``timeline.Timeline.render`` and ``index_store.open`` resolve; a module path that
    does not exist (or a private one) does not."""
    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        try:
            for attr in parts[cut:]:
                obj = getattr(obj, attr)
        except AttributeError:
            return False
        return not any(p.startswith("_") for p in parts)
    return False


def test_every_path_a_user_page_names_exists() -> None:
    """A dotted name in a user page (`timeline.X`, `index_store.X`) is one a user can
    import; the tracing page names spans and attributes, which are no import paths."""
    root = Path(__file__).parents[2]
    pages = [root / "README.md", *sorted((root / "docs").glob("*.md"))]
    wrong = {
        p.name: stale
        for p in pages
        if p.name not in ("architecture.md", "observability.md")
        and (
            stale := sorted(
                {
                    m
                    for m in re.findall(
                        r"`((?:timeline|index_store)(?:\.\w+)+)", p.read_text("utf-8")
                    )
                    if not _resolves(m)
                }
            )
        )
    }
    assert wrong == {}
