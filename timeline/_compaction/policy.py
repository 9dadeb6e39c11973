"""The compaction policy, its loading from untrusted mappings, and context-window lookup.

The budget: ``max_tokens`` when given; else ``context_window - reserve_tokens``, the
window from the policy field, the top-level config or the model registry; else none.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, Literal, Self, get_args, get_origin

import attrs
import cattrs
from cattrs.gen import make_dict_structure_fn

from timeline._compaction.clearing import ClearingPolicy
from timeline._compaction.provider_compaction import CompactingProvider, NativeCompaction
from timeline._compaction.recall import RecallPolicy
from timeline._compaction.validators import (
    bool_type,
    failure_policy,
    keywords_only,
    non_negative,
    opt_instance,
    opt_ratio,
    opt_seconds,
    opt_str,
    opt_str_map,
    positive_float,
    positive_or_none,
    ratio,
    ratio_incl,
)
from timeline._model import PolicyError

__all__ = [
    "MODEL_CONTEXT_WINDOWS",
    "NO_BUDGET",
    "CompactionPolicy",
    "NoBudgetWarning",
    "OnSummaryFailure",
    "context_window_for",
    "policy_type",
]

NO_BUDGET: Final = "no budget: compaction off"
"""What ``inspect``, the CLI and the one-time warning say when no budget is known."""

OnSummaryFailure = Literal["fallback", "skip"]


class NoBudgetWarning(UserWarning):
    """A timeline rendered without a budget: it will never compact (warned once)."""


MODEL_CONTEXT_WINDOWS: Final[Mapping[str, int]] = {
    "claude-opus-4": 200_000,
    "claude-sonnet-4": 200_000,
    "claude-haiku-4": 200_000,
    "claude-3-7-sonnet": 200_000,
    "claude-3-5-sonnet": 200_000,
    "claude-3-5-haiku": 200_000,
    "gpt-5": 400_000,
    "gpt-4.1": 1_047_576,
    "gpt-4o": 128_000,
    "gpt-4-turbo": 128_000,
    "o3": 200_000,
    "o4-mini": 200_000,
    "gemini-2.5-pro": 1_048_576,
    "gemini-2.5-flash": 1_048_576,
    "gemini-2.0-flash": 1_048_576,
    "mistral-large": 131_072,
    "deepseek-chat": 65_536,
    "deepseek-reasoner": 65_536,
    "llama-3.1": 131_072,
    "llama-3.3": 131_072,
    "qwen2.5": 32_768,
}
"""Context windows of well-known models, matched by longest name prefix."""


def context_window_for(model: str) -> int | None:
    """The registry's context window for ``model`` (``provider/`` prefixes ignored)."""
    name = model.rsplit("/", 1)[-1].lower()
    best: str | None = None
    for prefix in MODEL_CONTEXT_WINDOWS:
        if name.startswith(prefix) and (best is None or len(prefix) > len(best)):
            best = prefix
    return None if best is None else MODEL_CONTEXT_WINDOWS[best]


_ALIASES: Final = {"budget": "max_tokens", "window": "context_window", "reserve": "reserve_tokens"}


@attrs.frozen(kw_only=True)
class CompactionPolicy:
    """When and how much the timeline compacts.

    ``trigger_ratio`` of the budget starts a compaction; it leaves ``keep_ratio`` of what
    the system prompt leaves (the summary included); the last ``keep_recent_turns`` turns
    are kept whole when they fit in that share. ``max_blocks`` also triggers on the
    visible block count.
    ``emergency_keep_ratio``: the budget share ``force_sanitize`` keeps (less than usual).
    """

    max_tokens: int | None = attrs.field(default=None, validator=positive_or_none)
    context_window: int | None = attrs.field(default=None, validator=positive_or_none)
    reserve_tokens: int = attrs.field(default=16_384, validator=non_negative)
    model: str | None = attrs.field(default=None, validator=opt_str)
    enabled: bool = attrs.field(default=True, validator=bool_type)
    trigger_ratio: float = attrs.field(default=0.9, validator=ratio_incl)
    keep_ratio: float = attrs.field(default=0.7, validator=ratio)
    keep_recent_turns: int = attrs.field(default=6, validator=non_negative)
    min_split_prefix_blocks: int = attrs.field(default=3, validator=non_negative)
    max_blocks: int | None = attrs.field(default=None, validator=positive_or_none)
    preserve_recent_blocks: int = attrs.field(default=0, validator=non_negative)
    emergency_keep_ratio: float = attrs.field(default=0.2, validator=ratio)
    summary_max_tokens: int | None = attrs.field(default=None, validator=positive_or_none)
    user_prompt_cap_chars: int = attrs.field(default=600, validator=non_negative)
    max_user_requests: int = attrs.field(default=60, validator=non_negative)
    focus_instructions: str | None = attrs.field(default=None, validator=opt_str)
    summary_timeout_seconds: float | None = attrs.field(default=None, validator=opt_seconds)
    tool_classification: Mapping[str, str] | None = attrs.field(default=None, validator=opt_str_map)
    keep_recent_tokens: int | None = attrs.field(default=None, validator=positive_or_none)
    """Tokens of recent context kept verbatim (instead of ``keep_ratio``)."""
    cache_ttl_seconds: float | None = attrs.field(default=None, validator=positive_float)
    """Tool results older than this (outside the recent turns) are pruned before a summary."""
    on_summary_failure: OnSummaryFailure = attrs.field(default="fallback", validator=failure_policy)
    """A failed summarizer: ``"fallback"`` to the inventory summary, or ``"skip"`` the
    compaction."""
    clearing: ClearingPolicy | None = attrs.field(
        default=None, validator=opt_instance(ClearingPolicy)
    )
    """The clearing tier run before a summary (None: summarize only)."""
    recall: RecallPolicy | None = attrs.field(
        factory=RecallPolicy, validator=opt_instance(RecallPolicy)
    )
    """Compacted blocks relevant to the newest prompt rendered back after the stable
    stream (None: no recall; :mod:`timeline._compaction.recall`)."""
    native: NativeCompaction | None = attrs.field(
        default=None, validator=opt_instance(NativeCompaction)
    )
    """Provider-native compaction (None: the library compacts): the provider compacts at
    its trigger and its compaction block becomes the summary; the library compacts on its
    own only past the budget (:mod:`timeline._compaction.provider_compaction`)."""
    prepare_at: float | None = attrs.field(default=None, validator=opt_ratio)
    """Past this share of the trigger (0.8), the next summary is made off the agent's
    path and the compaction at the trigger applies it (None: made at the trigger)."""

    def __new__(cls, *args: Any, **kwargs: Any) -> Self:
        keywords_only(cls, args, kwargs, _ALIASES)  # CompactionPolicy(8000): say max_tokens=
        return super().__new__(cls)

    def __attrs_post_init__(self) -> None:
        if self.keep_ratio >= self.trigger_ratio:
            raise PolicyError(
                f"must be below trigger_ratio ({self.trigger_ratio}), "
                f"got {self.keep_ratio}; otherwise every render would compact again",
                field="keep_ratio",
            )
        if (
            self.max_tokens is None
            and self.context_window is not None
            and self.context_window <= self.reserve_tokens
        ):
            raise PolicyError(
                f"must be below context_window ({self.context_window}), got {self.reserve_tokens}",
                field="reserve_tokens",
            )
        clearing = self.clearing
        summary_keep = clearing.summary_keep_ratio if clearing is not None else None
        if summary_keep is not None and summary_keep >= self.trigger_ratio:
            raise PolicyError(
                f"must be below trigger_ratio ({self.trigger_ratio}), got {summary_keep}",
                field="clearing.summary_keep_ratio",
            )
        budget = self.budget
        keep = self.keep_recent_tokens
        if keep is not None and budget is not None and keep >= budget:
            raise PolicyError(
                f"must be below the budget ({budget}), got {keep}", field="keep_recent_tokens"
            )

    @property
    def budget(self) -> int | None:
        """Prompt token budget, or None when no window is known (compaction disabled)."""
        if self.max_tokens is not None:
            return self.max_tokens
        window = self.context_window
        if window is None and self.model:
            window = context_window_for(self.model)
        if window is None:
            return None
        return window - self.reserve_tokens

    @property
    def active(self) -> bool:
        """Compaction can run: enabled and a budget is known."""
        return self.enabled and self.budget is not None

    @property
    def summary_keep_ratio(self) -> float:
        """The share of the budget a summary keeps verbatim: ``keep_ratio``, or the
        clearing tier's lower ``summary_keep_ratio`` when it has one."""
        clearing = self.clearing
        if clearing is not None and clearing.summary_keep_ratio is not None:
            return clearing.summary_keep_ratio
        return self.keep_ratio

    def native_params(self) -> dict[str, Any]:
        """The request's keyword arguments asking the provider to compact (``{}``: the
        policy has no native mode). See :meth:`NativeCompaction.params`."""
        if self.native is None:
            return {}
        return self.native.params(self.budget, self.trigger_ratio)

    def summary_budget(self) -> int:
        """Tokens a summary may take: the policy's cap, else 10% of the budget."""
        if self.summary_max_tokens is not None:
            return self.summary_max_tokens
        return max(256, int((self.budget or 32_000) * 0.10))

    def summary_reserve(self, budget: int, previous: int = 0) -> int:
        """Tokens a cut leaves for the summary: :meth:`summary_budget`, or the size of the
        ``previous`` summary it extends when larger (it rarely comes out smaller), at most
        a fifth of the budget."""
        return min(max(self.summary_budget(), previous), max(64, budget // 5))

    @classmethod
    def from_mapping(
        cls, config: Mapping[str, Any], *, path: str = "compaction"
    ) -> CompactionPolicy:
        """Load from an untrusted mapping (TOML, JSON, env); errors name the bad path.

        Accepts the policy fields directly or the layout of a ``compaction`` section
        ``{"compaction": {...}, "context_window": ..., "model": ...}`` where the top-level
        window and model fill what the ``compaction`` section leaves out. In that layout
        compaction triggers when the context passes
        ``context_window - reserve_tokens`` (``trigger_ratio`` 1.0 unless given).
        """
        if not isinstance(config, Mapping):
            raise PolicyError(f"must be a mapping, got {type(config).__name__}", field=path)
        section: Mapping[str, Any] = config
        prefix = path
        if "compaction" in config:
            inner = config["compaction"]
            if not isinstance(inner, Mapping):
                raise PolicyError(
                    f"must be a mapping, got {type(inner).__name__}", field="compaction"
                )
            section = dict(inner)
            prefix = "compaction"
            extra = set(config) - {"compaction", "context_window", "model"}
            if extra:
                raise PolicyError("unknown config key", field=sorted(extra)[0])
            for key in ("context_window", "model"):
                if section.get(key) is None and config.get(key) is not None:
                    section = {**section, key: config[key]}
            if "trigger_ratio" not in section and section.get("max_tokens") is None:
                section = {**section, "trigger_ratio": 1.0}
        try:
            return _converter.structure(dict(section), cls)
        except PolicyError as exc:
            if exc.field is None:
                raise PolicyError(_join(prefix, exc.message)) from None
            raise PolicyError(exc.reason, field=_join(prefix, exc.field)) from None
        except cattrs.BaseValidationError as exc:
            messages = cattrs.transform_error(exc, path="$", format_exception=_format)
            found = [_reformat(m, prefix) for m in messages]
            if len(found) == 1 and found[0][0]:  # one setting: its path and what is wrong
                raise PolicyError(found[0][1], field=found[0][0]) from exc
            text = "; ".join(f"{where}: {what}" if where else what for where, what in found)
            raise PolicyError(text) from exc


def policy_type(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    """``Timeline(policy=...)`` takes a :class:`CompactionPolicy`; a budget or a mapping
    is refused at once with the call that builds one (not at the first render)."""
    if isinstance(value, CompactionPolicy):
        return
    if isinstance(value, int) and not isinstance(value, bool):
        fix = f"policy=CompactionPolicy(max_tokens={value})"
    elif isinstance(value, Mapping):
        fix = "policy=CompactionPolicy.from_mapping({...}) for a config mapping"
    else:
        fix = "policy=CompactionPolicy(max_tokens=...)"
    got = type(value).__name__
    raise PolicyError(f"{attribute.name} must be a CompactionPolicy, got {got}; write {fix}")


def _format(exc: BaseException, type_: type | None) -> str:
    """Our own messages verbatim; cattrs' wording for everything else."""
    if isinstance(exc, PolicyError):
        return exc.message
    if isinstance(exc, TypeError) and exc.args and str(exc.args[0]).startswith("expected"):
        return str(exc.args[0])
    return cattrs.v.format_exception(exc, type_)


def _join(prefix: str, message: str) -> str:
    """``message`` (``field: what``) under the caller's ``path`` (none when empty)."""
    return f"{prefix}.{message}" if prefix else message


def _reformat(message: str, prefix: str) -> tuple[str, str]:
    """cattrs says ``what @ $path``; we say ``prefix.path: what``, returned as (path,
    what), the path empty when there is none. A validator's own message starts with its
    field name (``keep_ratio: must be...``), which joins the path."""
    what, sep, where = message.rpartition(" @ ")
    if not sep:
        return "", message
    where = where.removeprefix("$")  # "" (the mapping itself), ".field" or "['key']"
    field, sep, rest = what.partition(": ")
    if sep and all(part.isidentifier() for part in field.split(".")):
        if not where.endswith(f".{field}"):
            where = f"{where}.{field}"
        what = rest
    where = f"{prefix}{where}".removeprefix(".")
    return where, what


_converter = cattrs.Converter(forbid_extra_keys=True, detailed_validation=True)


def _structure_number(value: Any, type_: type) -> Any:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"expected a number, got {type(value).__name__}")
    if type_ is int and isinstance(value, float):
        if not value.is_integer():
            raise TypeError(f"expected an integer, got {value!r}")
        return int(value)
    return type_(value)


def _structure_bool(value: Any, _: type) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"expected true or false, got {value!r}")
    return value


def _structure_str(value: Any, _: type) -> str:
    if not isinstance(value, str):
        raise TypeError(f"expected a string, got {type(value).__name__}")
    return value


def _structure_names(value: Any, _: type) -> tuple[str, ...]:
    if isinstance(value, str) or not isinstance(value, list | tuple):
        raise TypeError(f"expected a list of strings, got {type(value).__name__}")
    if not all(isinstance(v, str) for v in value):
        raise TypeError("expected a list of strings")
    return tuple(value)


def _structure_choice(value: Any, type_: Any) -> Any:
    choices = get_args(type_)
    if value not in choices or isinstance(value, bool):
        names = " or ".join(repr(c) for c in choices)
        raise TypeError(f"expected {names}, got {value!r}")
    return value


def _is_choice(type_: Any) -> bool:
    origin: Any = get_origin(type_)
    return origin is Literal


_converter.register_structure_hook_func(lambda t: t == tuple[str, ...], _structure_names)
# a field with its own validator registers after this, and its hook takes precedence
_converter.register_structure_hook_func(_is_choice, _structure_choice)
_converter.register_structure_hook_func(
    lambda t: t == CompactingProvider,
    lambda value, _: value,  # the field's validator names it
)


def _section_hook(type_: Any) -> Any:
    """A nested section (``clearing``, ``native``): a mapping, said so when it is not."""
    inner = make_dict_structure_fn(
        type_, _converter, _cattrs_forbid_extra_keys=True, _cattrs_detailed_validation=True
    )

    def structure(value: Any, t: Any) -> Any:
        if not isinstance(value, Mapping):
            raise TypeError(f"expected a mapping of its fields, got {type(value).__name__}")
        return inner(value, t)

    return structure


_converter.register_structure_hook_factory(
    lambda t: attrs.has(t) and t is not CompactionPolicy, _section_hook
)
_converter.register_structure_hook(int, _structure_number)
_converter.register_structure_hook(float, _structure_number)
_converter.register_structure_hook(bool, _structure_bool)
_converter.register_structure_hook(str, _structure_str)
