"""CompactionPolicy: validation, loading from untrusted mappings, budget resolution."""

from __future__ import annotations

import pytest

from timeline import (
    CompactionPolicy,
    PolicyError,
    Timeline,
    context_window_for,
)


def test_defaults_follow_v2() -> None:
    """0.9 trigger, 0.7 keep, 6 recent turns, enabled."""
    p = CompactionPolicy(max_tokens=8_000)
    assert (
        p.trigger_ratio,
        p.keep_ratio,
        p.keep_recent_turns,
        p.enabled,
        p.budget,
    ) == (0.9, 0.7, 6, True, 8_000)


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"keep_ratio": 1.5}, "compaction.keep_ratio: must be in (0, 1)"),
        ({"compaction": {"trigger_ratio": 0}}, "compaction.trigger_ratio: must be in (0, 1]"),
        ({"max_tokens": -5}, "compaction.max_tokens: must be a positive integer"),
        ({"max_tokens": "lots"}, "compaction.max_tokens: expected a number"),
        ({"enabled": "yes"}, "compaction.enabled: expected true or false"),
        ({"keep_ratio": 0.95}, "keep_ratio: must be below trigger_ratio"),
        ({"bogus": 1}, "bogus"),
        ({"compaction": {}, "extra": 1}, "extra: unknown config key"),
        ({"compaction": []}, "compaction: must be a mapping"),
    ],
)
def test_bad_config_names_the_path(config: dict[str, object], message: str) -> None:
    """Errors from untrusted config name the offending path."""
    with pytest.raises(PolicyError) as err:
        CompactionPolicy.from_mapping(config)
    assert message in str(err.value)


def test_seed_000_layout_and_window_resolution() -> None:
    """context_window - reserve_tokens; the top-level window fills a missing field."""
    p = CompactionPolicy.from_mapping(
        {"compaction": {"reserve_tokens": 16_384}, "context_window": 200_000}
    )
    assert p.budget == 183_616


def test_window_from_the_model_registry() -> None:
    """Without a window the model registry resolves it; unknown models disable compaction."""
    assert CompactionPolicy(model="anthropic/claude-sonnet-4-5").budget == 200_000 - 16_384
    assert context_window_for("gpt-4o-mini") == 128_000
    unknown = CompactionPolicy(model="my-local-model")
    assert (unknown.budget, unknown.active) == (None, False)


def test_explicit_field_wins_over_top_level() -> None:
    """compaction.context_window beats the top-level field and the registry."""
    p = CompactionPolicy.from_mapping(
        {
            "compaction": {"context_window": 50_000, "reserve_tokens": 0},
            "context_window": 999_999,
            "model": "gpt-4o",
        }
    )
    assert p.budget == 50_000


def test_direct_construction_validates() -> None:
    """Constructing with bad values raises PolicyError too."""
    with pytest.raises(PolicyError, match="reserve_tokens"):
        CompactionPolicy(context_window=1_000, reserve_tokens=2_000)


def test_a_positional_budget_names_the_keyword() -> None:
    """``CompactionPolicy(8000)`` is a PolicyError saying ``max_tokens=8000``."""
    with pytest.raises(PolicyError, match=r"CompactionPolicy\(max_tokens=8000\)"):
        CompactionPolicy(8000)  # type: ignore[misc]


@pytest.mark.parametrize(
    ("keyword", "meant"), [("budget", "max_tokens"), ("keep_ratios", "keep_ratio")]
)
def test_an_unknown_keyword_names_the_field_meant(keyword: str, meant: str) -> None:
    """A misspelt or guessed keyword is a PolicyError naming the field it most likely meant."""
    with pytest.raises(PolicyError, match=f"no field '{keyword}'; did you mean {meant}"):
        CompactionPolicy(**{keyword: 0.5})


@pytest.mark.parametrize(
    ("policy", "fix"),
    [
        (8000, r"policy=CompactionPolicy\(max_tokens=8000\)"),
        ({"max_tokens": 8000}, r"CompactionPolicy\.from_mapping"),
        (None, r"policy=CompactionPolicy\(max_tokens=\.\.\.\)"),
    ],
)
def test_a_timeline_refuses_what_is_not_a_policy_at_once(policy: object, fix: str) -> None:
    """``Timeline(policy=8000)`` or a mapping fails at the constructor with the call to write,
    and assigning one later fails the same way, leaving the old policy."""
    with pytest.raises(PolicyError, match=fix):
        Timeline("c", policy=policy)  # type: ignore[arg-type]
    tl = Timeline("c", policy=CompactionPolicy(max_tokens=8000))
    with pytest.raises(PolicyError, match=fix):
        tl.policy = policy  # type: ignore[assignment]
    assert tl.policy == CompactionPolicy(max_tokens=8000)


def test_the_seed_layout_keeps_the_trigger_ratio_of_an_explicit_budget() -> None:
    """Seed 000's layout triggers at ``context_window - reserve`` (ratio 1.0) only when
    no ``max_tokens`` is given; with one the default ratio stays."""
    default = CompactionPolicy().trigger_ratio
    assert default != 1.0
    explicit = CompactionPolicy.from_mapping({"compaction": {"max_tokens": 10_000}})
    assert explicit.trigger_ratio == default
    seeded = CompactionPolicy.from_mapping({"compaction": {}, "context_window": 200_000})
    assert seeded.trigger_ratio == 1.0


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"max_tokens": -1}, "cfg.max_tokens: must be a positive integer, got -1"),
        ({"max_tokens": "x"}, "cfg.max_tokens: expected a number, got str"),
        ({"keep_ratio": 2.0}, "cfg.keep_ratio: must be in (0, 1), got 2.0"),
        ({"bogus": 1}, "cfg: extra fields found (bogus)"),
        (
            {"max_tokens": 1_000, "keep_recent_tokens": 1_000},
            "cfg.keep_recent_tokens: must be below the budget (1000), got 1000",
        ),
    ],
)
def test_a_policy_error_names_the_field_under_the_given_path(
    config: dict[str, object], message: str
) -> None:
    with pytest.raises(PolicyError) as caught:
        CompactionPolicy.from_mapping(config, path="cfg")
    assert str(caught.value) == message


def test_a_bad_failure_policy_names_the_field_and_the_value() -> None:
    """The validator raising ``PolicyError(None)`` would lose what was wrong."""
    with pytest.raises(PolicyError) as caught:
        CompactionPolicy(on_summary_failure="retry")  # type: ignore[arg-type]
    assert str(caught.value) == ("on_summary_failure: must be 'fallback' or 'skip', got 'retry'")
