"""The clearing tier (#26 items 1 and 2): placeholders and read-back, the
``clear_at_least_tokens`` rule, dedupe of superseded reads, excluded tools, tool inputs,
earlier thinking, and the tier choice (clear alone, or clear then summarize)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import index_store
from tests.helpers.clearing import SYSTEM, read, shown
from tests.helpers.conversations import numbered
from timeline import (
    ClearingPolicy,
    CompactionPolicy,
    CompactionStats,
    PolicyError,
    Timeline,
    blocks,
)
from timeline._compaction.clearing import clearing_candidates, key_arguments, signature
from timeline._model.block import CONV_RANGE_SUMMARY
from timeline._model.reasoning import anthropic_thinking

Make = Callable[..., Timeline]


def policy(budget: int = 4_000, **clearing: Any) -> CompactionPolicy:
    return CompactionPolicy(max_tokens=budget, clearing=ClearingPolicy(**clearing))


def turn(tl: Timeline, prompt: str, paths: list[str], chars: int = 2_600) -> list[str]:
    tl.begin_turn()
    tl.append(blocks.user_prompt(prompt))
    out = [read(tl, p, chars) for p in paths]
    tl.append(blocks.assistant_completion(f"done with {prompt}"))
    return out


def summaries(tl: Timeline) -> list[str]:
    return [b.id for b in tl.blocks if b.type == CONV_RANGE_SUMMARY]


class TestPlaceholders:
    def test_old_results_render_as_one_line_naming_tool_arguments_and_path(
        self, make_tl: Make
    ) -> None:
        """Past the trigger, every tool result but the newest three shows one line naming
        the tool, its key arguments and the path to read it back; the rest stays whole."""
        tl = make_tl(policy=policy(dedupe_reads=False))
        paths = turn(tl, "read the code", [f"src/m{i}.py" for i in range(6)])
        view = tl.render(SYSTEM)
        assert view.compaction is not None and view.compaction.tier == "clear"
        texts = {b.path: b.text for b in view.blocks}
        for i, path in enumerate(paths[:3]):
            assert texts[path] == (
                f'[cleared: read_file(path="src/m{i}.py") result, 2,622 chars; '
                f"read_path {path} to restore]"
            )
        for path in paths[3:]:
            assert texts[path].startswith("contents of src/m")

    def test_cleared_content_is_never_lost(self, make_tl: Make) -> None:
        """The blocks stay whole in the timeline, the turn log and search; read(path)
        brings one back; a loaded timeline renders the same placeholders."""
        tl = make_tl(policy=policy(dedupe_reads=False))
        paths = turn(tl, "read the code", [f"src/m{i}.py" for i in range(6)])
        before = tl.render(SYSTEM).to_anthropic()
        assert all(not b.hidden for b in tl.blocks)
        store = index_store.open("memory://")
        tl.persist(store)
        [stored] = store.read("c1", paths[0])
        assert stored.text.startswith("contents of src/m0.py")
        assert [h.path for h in store.search("c1", "src/m0.py contents")][:1] == [paths[0]]
        again = Timeline.load(store, "c1", policy=tl.policy, token_counter=tl.token_counter)
        assert again.render(SYSTEM).to_anthropic() == before

    def test_unhide_shows_a_cleared_block_again(self, make_tl: Make) -> None:
        """``unhide(path)`` of a cleared block shows it whole again."""
        tl = make_tl(policy=policy(dedupe_reads=False))
        paths = turn(tl, "read the code", [f"src/m{i}.py" for i in range(6)])
        tl.render(SYSTEM)
        assert tl.unhide([paths[0]]) == 1
        assert shown(tl)[paths[0]].startswith("contents of src/m0.py")

    def test_placeholders_are_tokenized_once(self, make_tl: Make) -> None:
        """Every rebuild of the prompt shows the cleared blocks again; their placeholders
        are counted once, not at each rebuild (a pin rebuilds the stream and counts only
        what it shows anew)."""
        tl = make_tl(policy=policy(dedupe_reads=False))
        paths = turn(tl, "read the code", [f"src/m{i}.py" for i in range(6)])
        view = tl.render(SYSTEM)
        assert view.compaction is not None and view.compaction.tier == "clear"
        memo = tl.token_memo
        calls = memo.calls
        tl.pin([paths[-1]])  # shown whole already: the prompt is the same
        assert tl.render(SYSTEM).to_anthropic() == view.to_anthropic()
        assert memo.calls == calls

    def test_a_pinned_block_is_never_cleared(self, make_tl: Make) -> None:
        """Pinned results stay whole; pinning a cleared one shows it whole again."""
        tl = make_tl(policy=policy(keep_tool_results=2, dedupe_reads=False))
        paths = turn(tl, "read the code", [f"src/m{i}.py" for i in range(6)])
        tl.pin([paths[0]])
        tl.render(SYSTEM)
        texts = shown(tl)
        assert texts[paths[0]].startswith("contents of")
        assert texts[paths[1]].startswith("[cleared:")
        tl.pin([paths[1]])
        assert shown(tl)[paths[1]].startswith("contents of")

    def test_excluded_tools_are_never_cleared(self, make_tl: Make) -> None:
        """A result of an excluded tool stays whole, however old."""
        tl = make_tl(policy=policy(exclude_tools=["view"], keep_tool_results=2, dedupe_reads=False))
        tl.begin_turn()
        tl.append(blocks.user_prompt("look"))
        kept = read(tl, "README.md", 2_600, tool="view")
        cleared = [read(tl, f"src/m{i}.py", 2_600) for i in range(5)]
        texts = shown(tl)
        assert texts[kept].startswith("contents of README.md")
        assert texts[cleared[0]].startswith("[cleared:")


class TestDedupe:
    def test_a_superseded_read_is_cleared_even_when_recent(self, make_tl: Make) -> None:
        """A read of a path that a later write of the same path superseded is cleared,
        although it is among the newest results; the placeholder says why."""
        tl = make_tl(policy=policy(budget=2_400, keep_tool_results=3, dedupe_reads=True))
        tl.begin_turn()
        tl.append(blocks.user_prompt("edit it"))
        old = [read(tl, f"src/o{i}.py", 2_000) for i in range(3)]
        first = read(tl, "src/a.py", 2_000)
        write = tl.append(blocks.tool_call("write_file", {"path": "src/a.py", "content": "y"}))
        tl.append(blocks.tool_result(write.call_id or "", "written", tool_id="write_file"))
        texts = shown(tl)
        assert texts[first] == (
            '[cleared: read_file(path="src/a.py") result, 2,021 chars, superseded by a '
            f"later write_file of the same path; read_path {first} to restore]"
        )
        assert texts[old[0]].startswith("[cleared:")
        assert texts[old[-1]].startswith("contents of")  # among the newest three

    def test_without_dedupe_the_newest_results_stay(self, make_tl: Make) -> None:
        """``dedupe_reads=False``: the superseded read is among the newest, so it stays."""
        tl = make_tl(policy=policy(budget=2_400, keep_tool_results=3, dedupe_reads=False))
        tl.begin_turn()
        tl.append(blocks.user_prompt("edit it"))
        old = [read(tl, f"src/o{i}.py", 2_000) for i in range(3)]
        first = read(tl, "src/a.py", 2_000)
        write = tl.append(blocks.tool_call("write_file", {"path": "src/a.py", "content": "y"}))
        tl.append(blocks.tool_result(write.call_id or "", "written", tool_id="write_file"))
        texts = shown(tl)
        assert texts[first].startswith("contents of src/a.py")
        assert texts[old[0]].startswith("[cleared:")


class TestInputsAndThinking:
    def test_old_tool_inputs_are_cleared_when_asked(self, make_tl: Make) -> None:
        """``clear_tool_inputs``: an old large write's arguments become a placeholder
        naming its path (the call and its result stay paired)."""
        tl = make_tl(policy=policy(budget=3_000, clear_tool_inputs=True, keep_tool_results=1))
        tl.begin_turn()
        tl.append(blocks.user_prompt("write it"))
        call = tl.append(
            blocks.tool_call("write_file", {"path": "src/big.py", "content": "z" * 6_600})
        )
        tl.append(blocks.tool_result(call.call_id or "", "ok", tool_id="write_file"))
        read(tl, "src/b.py", 2_000)
        read(tl, "src/c.py", 2_000)
        payload = tl.render(SYSTEM).to_anthropic()
        uses = [p for m in payload["messages"] for p in m["content"] if p["type"] == "tool_use"]
        assert uses[0]["input"] == {
            "hidden": '[cleared input: write_file(path="src/big.py"), 6,634 chars; '
            f"read_path {call.path} to restore]"
        }
        assert uses[-1]["input"] == {"path": "src/c.py"}

    def test_inputs_stay_by_default(self, make_tl: Make) -> None:
        """Without ``clear_tool_inputs`` every call keeps its arguments."""
        tl = make_tl(policy=policy(budget=4_000, keep_tool_results=1))
        tl.begin_turn()
        tl.append(blocks.user_prompt("write it"))
        call = tl.append(blocks.tool_call("write_file", {"path": "a", "content": "z" * 6_600}))
        tl.append(blocks.tool_result(call.call_id or "", "ok", tool_id="write_file"))
        read(tl, "src/b.py", 3_800)
        read(tl, "src/c.py", 3_800)
        view = tl.render(SYSTEM)
        assert view.compaction is not None and view.compaction.cleared_blocks == 1
        assert '"content"' in {b.path: b.text for b in view.blocks}[call.path]

    def test_thinking_of_earlier_turns_is_left_out(self, make_tl: Make) -> None:
        """``clear_thinking``: the thinking of an earlier turn is not sent any more; the
        running turn's is."""
        tl = make_tl(policy=policy(dedupe_reads=False))

        def thought(n: int) -> None:
            item = {"type": "thinking", "thinking": f"hmm {n} " + "w " * 600, "signature": "c2ln"}
            tl.append(anthropic_thinking(item))

        tl.begin_turn()
        tl.append(blocks.user_prompt("first"))
        thought(1)
        tl.append(blocks.assistant_completion("one"))
        tl.begin_turn()
        tl.append(blocks.user_prompt("second"))
        thought(2)
        for i in range(6):
            read(tl, f"src/m{i}.py", 2_000)
        view = tl.render(SYSTEM)
        assert view.compaction is not None and view.compaction.tier == "clear"
        payload = view.to_anthropic()
        kinds = [p["type"] for m in payload["messages"] for p in m["content"]]
        assert kinds.count("thinking") == 1
        thinking = [p for m in payload["messages"] for p in m["content"] if p["type"] == "thinking"]
        assert thinking[0]["thinking"].startswith("hmm 2")


class TestClearAtLeast:
    def test_a_pass_that_frees_too_little_does_not_run(self, make_tl: Make) -> None:
        """Clearing that would free less than ``clear_at_least_tokens`` is not done: the
        compaction summarizes instead and nothing is cleared."""
        tl = make_tl(policy=policy(clear_at_least_tokens=5_000, dedupe_reads=False))
        turn(tl, "read the code", [f"src/m{i}.py" for i in range(6)])
        stats = tl.render(SYSTEM).compaction
        assert stats is not None
        assert (stats.tier, stats.cleared_blocks) == ("summarize", 0)
        assert not any(t.startswith("[cleared:") for t in shown(tl).values())

    def test_a_pass_that_frees_enough_runs(self, make_tl: Make) -> None:
        """The same timeline with a lower bar clears and makes no summary."""
        tl = make_tl(policy=policy(clear_at_least_tokens=1_000, dedupe_reads=False))
        turn(tl, "read the code", [f"src/m{i}.py" for i in range(6)])
        stats = tl.render(SYSTEM).compaction
        assert stats is not None and (stats.tier, stats.cleared_blocks) == ("clear", 3)
        assert stats.cleared_tokens >= 1_000
        assert not summaries(tl)

    def test_the_default_bar_is_a_tenth_of_the_budget(self) -> None:
        """``clear_at_least_tokens=None`` asks a tenth of the budget."""
        assert ClearingPolicy().least_tokens(32_000) == 3_200
        assert ClearingPolicy(clear_at_least_tokens=7).least_tokens(32_000) == 7


def changes_of_prefix(tl: Timeline, rounds: int) -> tuple[int, int, list[CompactionStats]]:
    """Renders ``rounds`` turns of a session; how many renders changed the stream the
    previous one sent (anything but appending to it), how many renders, and the
    compactions."""
    changed = renders = 0
    last: tuple[Any, ...] = ()
    done: list[CompactionStats] = []
    for t in range(rounds):
        tl.begin_turn()
        tl.append(blocks.user_prompt(f"step {t}: look at module {t}"))
        for k in range(3):
            read(tl, f"src/m{(t * 3 + k) % 40}.py", 1_200)
            view = tl.render(SYSTEM)
            renders += 1
            stable = view.blocks[: view.stable_count]
            changed += stable[: len(last)] != last
            last = stable
            if view.compaction is not None:
                done.append(view.compaction)
        tl.append(blocks.assistant_completion(f"module {t} done"))
    return changed, renders, done


class TestCacheAware:
    def test_clearing_changes_the_prefix_only_at_a_compaction(self, make_tl: Make) -> None:
        """Over a long session the sent prefix changes only at the renders that compact
        (in one step each), never request by request, and rarely."""
        tl = make_tl(policy=policy(budget=8_000))
        changed, renders, done = changes_of_prefix(tl, 60)
        assert changed == len(done)
        assert {s.tier for s in done} == {"clear", "summarize"}
        assert changed * 8 < renders


class TestTierChoice:
    def test_clear_alone_when_it_reaches_the_keep_target(self, make_tl: Make) -> None:
        """Clearing that brings the prompt under ``keep_ratio`` of the budget is the whole
        compaction: tier "clear", no summary; both hooks hear it."""
        heard: list[tuple[str, str, int | None]] = []
        tl = make_tl(
            policy=policy(dedupe_reads=False),
            on_before_compaction=lambda s: heard.append(("before", s.tier, s.tokens_after)),
            on_after_compaction=lambda s: heard.append(("after", s.tier, s.tokens_after)),
        )
        turn(tl, "read the code", [f"src/m{i}.py" for i in range(6)])
        stats = tl.render(SYSTEM).compaction
        assert stats is not None and stats.tier == "clear" and stats.summary_path is None
        assert stats.tokens_after is not None
        assert stats.tokens_after <= 0.7 * 4_000 < stats.tokens_before
        assert stats.tokens_before - stats.tokens_after == stats.cleared_tokens
        assert heard == [("before", "summarize", None), ("after", "clear", stats.tokens_after)]

    def test_clear_then_summarize_when_clearing_is_not_enough(self, make_tl: Make) -> None:
        """When the cleared prompt is still over the keep target, a summary follows; the
        stats say both what clearing freed and that a summary was made."""
        tl = make_tl(policy=policy(dedupe_reads=False))
        for t in range(6):
            tl.begin_turn()
            tl.append(blocks.user_prompt(f"turn {t} " + "p " * 600))
            read(tl, f"src/m{t}.py", 1_200)
            tl.append(blocks.assistant_completion(f"answer {t} " + "a " * 600))
        stats = tl.render(SYSTEM).compaction
        assert stats is not None and stats.tier == "summarize"
        assert stats.cleared_blocks > 0 and stats.summary_path is not None
        assert summaries(tl)

    def test_summarize_only_without_a_clearing_policy(self, make_tl: Make) -> None:
        """``clearing=None`` (the default) keeps today's behaviour: tier "summarize",
        nothing cleared."""
        tl = make_tl(policy=CompactionPolicy(max_tokens=4_000))
        turn(tl, "read the code", [f"src/m{i}.py" for i in range(6)])
        stats = tl.render(SYSTEM).compaction
        assert stats is not None and (stats.tier, stats.cleared_blocks) == ("summarize", 0)

    def test_a_summary_after_clearing_keeps_the_lower_share(self, make_tl: Make) -> None:
        """A summary made after clearing keeps ``summary_keep_ratio`` of the budget, so
        the next clearing passes have room."""

        def after(summary_keep_ratio: float | None) -> int:
            clearing = ClearingPolicy(summary_keep_ratio=summary_keep_ratio)
            tl = make_tl(
                policy=CompactionPolicy(max_tokens=6_000, keep_recent_turns=0, clearing=clearing)
            )
            for t in range(12):
                tl.begin_turn()
                tl.append(blocks.user_prompt(f"turn {t} " + "p " * 600))
                tl.append(blocks.assistant_completion(f"answer {t} " + "a " * 600))
            stats = tl.render(SYSTEM).compaction
            assert stats is not None and stats.tokens_after is not None
            return stats.tokens_after

        assert after(0.4) < after(None)

    def test_a_manual_compaction_clears_first_too(self, make_tl: Make) -> None:
        """``compact()`` picks the cheapest tier as well (any gain counts: it was asked)."""
        tl = make_tl(policy=policy(budget=20_000, dedupe_reads=False))
        turn(tl, "read the code", [f"src/m{i}.py" for i in range(6)])
        stats = tl.compact(SYSTEM)
        assert stats is not None and stats.tier == "clear" and stats.cleared_blocks == 3


class TestPolicy:
    def test_loaded_from_a_mapping(self) -> None:
        """``clearing`` loads from config like every other policy field."""
        loaded = CompactionPolicy.from_mapping(
            {"max_tokens": 8_000, "clearing": {"keep_tool_results": 5, "exclude_tools": ["a"]}}
        )
        assert loaded.clearing == ClearingPolicy(keep_tool_results=5, exclude_tools=("a",))

    @pytest.mark.parametrize(
        ("clearing", "message"),
        [
            ({"keep_tool_results": -1}, "compaction.clearing.keep_tool_results: must be >= 0"),
            ({"exclude_tools": "bash"}, "compaction.clearing.exclude_tools: expected a list"),
            ({"clear_thinking": 1}, "compaction.clearing.clear_thinking: expected true or"),
            ({"summary_keep_ratio": 0.95}, "compaction.clearing.summary_keep_ratio: must be"),
            ({"trigger": 1}, "compaction.clearing: extra fields found (trigger)"),
        ],
    )
    def test_bad_settings_name_their_path(self, clearing: dict[str, Any], message: str) -> None:
        """A bad setting is a PolicyError naming it."""
        with pytest.raises(PolicyError) as err:
            CompactionPolicy.from_mapping({"max_tokens": 8_000, "clearing": clearing})
        assert str(err.value).startswith(message)

    def test_bad_settings_in_code(self) -> None:
        """The same checks apply when the policy is built in code."""
        with pytest.raises(PolicyError, match="exclude_tools"):
            ClearingPolicy(exclude_tools="bash")
        with pytest.raises(PolicyError, match="clearing: must be a ClearingPolicy"):
            CompactionPolicy(max_tokens=1_000, clearing={})  # type: ignore[arg-type]


def test_a_cleared_placeholder_without_tool_or_call_says_tool() -> None:
    assert signature(None, None) == "tool()"
    assert signature(None, " read  file ") == "read file()"


def test_clearing_reads_the_policy_tool_classification(make_tl: Callable[..., Timeline]) -> None:
    """A tool the policy classifies as a write supersedes an earlier read of its path
    (the clearing tier asks the policy's ``tool_classification``, not the defaults only)."""
    from tests.helpers.clearing import read, shown

    clearing = ClearingPolicy(keep_tool_results=3, dedupe_reads=True)
    classified = {"put_file": "write"}
    tl = make_tl(
        policy=CompactionPolicy(max_tokens=2_400, clearing=clearing, tool_classification=classified)
    )
    tl.begin_turn()
    tl.append(blocks.user_prompt("edit it"))
    for i in range(3):
        read(tl, f"src/o{i}.py", 2_000)
    first = read(tl, "src/a.py", 2_000)
    put = tl.append(blocks.tool_call("put_file", {"path": "src/a.py", "content": "y"}))
    tl.append(blocks.tool_result(put.call_id or "", "written", tool_id="put_file"))
    assert "superseded by a later put_file of the same path" in shown(tl)[first]


def test_a_long_path_argument_is_cut_in_a_cleared_placeholder() -> None:
    shown = key_arguments({"path": "src/" + "a" * 300 + ".py", "note": "b" * 300})
    assert shown.startswith('path="src/aaa') and shown.endswith('…"')
    assert "note" not in shown


def test_clearing_tool_inputs_spares_the_newest_calls() -> None:
    """With ``clear_tool_inputs``, only the calls older than the newest
    ``keep_tool_results`` lose their input; clearing the newest
    call's input too would hide what the model is working on now."""
    first = blocks.tool_call("run", {"cmd": "make test"}, call_id="c1")
    second = blocks.tool_call("run", {"cmd": "make lint"}, call_id="c2")
    stream = numbered(
        first,
        blocks.tool_result("c1", "ok", tool_id="run"),
        second,
        blocks.tool_result("c2", "ok", tool_id="run"),
    )
    policy = ClearingPolicy(keep_tool_results=1, clear_tool_inputs=True, clear_thinking=False)
    found = clearing_candidates(stream, 0, policy, carried=frozenset(), current_turn="", cleared={})
    assert [(c.index, c.reason) for c in found] == [(0, "input"), (1, "old")]
