"""How each block type behaves: its role, whether it is a boundary, how it renders.

The set of types is open. A framework registers its own (``react.plan``,
``stage.gate``) with :func:`register_block_type` and every renderer, the compaction
cut-point search and the summarizers pick the behaviour up without patching.
"""

from __future__ import annotations

import threading
from typing import Literal

import attrs

from timeline._model.block import (
    ASSISTANT_COMPLETION,
    CONV_RANGE_SUMMARY,
    CONV_RECALLED,
    REACT_NOTE,
    REACT_PLAN,
    REACT_PLAN_HISTORY,
    REACT_TOOL_CALL,
    REACT_TOOL_RESULT,
    TURN_HEADER,
    USER_ATTACHMENT,
    USER_PROMPT,
)
from timeline._model.errors import PolicyError
from timeline._model.native import (
    PROVIDER_COMPACTION,
    PROVIDER_INPUT,
    PROVIDER_ITEM,
    PROVIDER_MESSAGE,
)
from timeline._model.reasoning import (
    ASSISTANT_REASONING,
    ASSISTANT_REDACTED_THINKING,
    ASSISTANT_THINKING,
)

__all__ = [
    "BlockTypeSpec",
    "Boundary",
    "RenderKind",
    "Role",
    "block_type",
    "register_block_type",
]

Role = Literal["user", "assistant"]
"""The provider-side role a block is rendered under (system blocks render user-side)."""

Boundary = Literal["turn", "message", "none"]
"""Cut-point preference: a turn boundary is best, a message boundary next."""

RenderKind = Literal[
    "header", "text", "attachment", "tool_call", "tool_result", "summary", "reasoning", "provider"
]
"""How a type renders; ``provider``: an opaque provider item, sent exactly to its own
provider and as its text form elsewhere (``timeline._model.native``)."""


@attrs.frozen
class BlockTypeSpec:
    """Behaviour of one block type.

    ``label`` prefixes the text in renders (``[PLAN]``); ``path_prefix`` and
    ``path_suffix`` build the default logical path ``<prefix>:<turn>.<suffix>``.
    """

    type: str
    role: Role
    boundary: Boundary = "none"
    label: str = ""
    render: RenderKind = "text"
    default_author: str = ""
    path_prefix: str = "ar"
    path_suffix: str = ""

    def default_path(self, turn_id: str, call_id: str | None, name: str | None) -> str:
        """The path a block of this type gets when appended without one."""
        if self.render in ("tool_call", "tool_result"):
            direction = "in" if self.render == "tool_call" else "out"
            return f"tc:{turn_id}.tool_calls.{call_id}.{direction}.json"
        suffix = self.path_suffix or self.type
        if self.render == "provider" and call_id:
            suffix = f"{suffix}.{call_id}"  # a server tool use and its result: one path
        if name:
            suffix = f"{suffix}.{name}"
        return f"{self.path_prefix}:{turn_id}.{suffix}"


_BUILTIN = (
    BlockTypeSpec(TURN_HEADER, "user", "turn", "[TURN]", "header", "system"),
    BlockTypeSpec(USER_PROMPT, "user", "turn", "[USER MESSAGE]", "text", "user"),
    BlockTypeSpec(USER_ATTACHMENT, "user", "message", "[USER ATTACHMENT]", "attachment", "user"),
    BlockTypeSpec(
        ASSISTANT_COMPLETION, "assistant", "message", "[ASSISTANT MESSAGE]", "text", "assistant"
    ),
    BlockTypeSpec(REACT_TOOL_CALL, "assistant", "message", "[TOOL CALL]", "tool_call", "assistant"),
    BlockTypeSpec(REACT_TOOL_RESULT, "user", "none", "[TOOL RESULT]", "tool_result", "tool"),
    BlockTypeSpec(REACT_NOTE, "user", "none", "[NOTE]", "text", "system"),
    BlockTypeSpec(ASSISTANT_THINKING, "assistant", "none", "[THINKING]", "reasoning", "assistant"),
    BlockTypeSpec(
        ASSISTANT_REDACTED_THINKING, "assistant", "none", "[THINKING]", "reasoning", "assistant"
    ),
    BlockTypeSpec(
        ASSISTANT_REASONING, "assistant", "none", "[REASONING]", "reasoning", "assistant"
    ),
    BlockTypeSpec(
        CONV_RANGE_SUMMARY, "user", "none", "[CONVERSATION SUMMARY]", "summary", "system", "su"
    ),
    BlockTypeSpec(
        CONV_RECALLED,
        "user",
        "none",
        "[RECALLED FROM EARLIER IN THE CONVERSATION]",
        "text",
        "system",
    ),
    BlockTypeSpec(PROVIDER_ITEM, "assistant", "none", "", "provider", "assistant"),
    BlockTypeSpec(PROVIDER_INPUT, "user", "none", "", "provider", "user"),
    BlockTypeSpec(PROVIDER_COMPACTION, "assistant", "none", "", "provider", "assistant"),
    BlockTypeSpec(PROVIDER_MESSAGE, "user", "message", "", "provider", "system"),
)
_BUILTIN_NAMES = frozenset(spec.type for spec in _BUILTIN)

_lock = threading.Lock()
_registry: dict[str, BlockTypeSpec] = {spec.type: spec for spec in _BUILTIN}


def register_block_type(
    type: str,
    *,
    role: Role = "user",
    boundary: Boundary = "none",
    label: str | None = None,
    default_author: str = "",
) -> BlockTypeSpec:
    """Register (or re-register) how a custom block type behaves.

    Custom types render as text parts prefixed by ``label`` (default ``[TYPE]``).
    Built-in types cannot be redefined: their rendering is part of the payload contract.
    """
    if not isinstance(type, str) or not type or type != type.strip():
        raise PolicyError(f"block type name must be a non-empty string without spaces: {type!r}")
    if type in _BUILTIN_NAMES:
        raise PolicyError(f"{type!r} is a built-in block type and cannot be re-registered")
    if role not in ("user", "assistant"):
        raise PolicyError(f"role for {type!r} must be 'user' or 'assistant', not {role!r}")
    if boundary not in ("turn", "message", "none"):
        raise PolicyError(f"boundary for {type!r} must be 'turn', 'message' or 'none'")
    spec = BlockTypeSpec(
        type=type,
        role=role,
        boundary=boundary,
        label=f"[{type.upper()}]" if label is None else label,
        render="text",
        default_author=default_author or ("assistant" if role == "assistant" else "system"),
    )
    with _lock:
        _registry[type] = spec
    return spec


def block_type(type: str) -> BlockTypeSpec:
    """The behaviour of ``type``; unregistered types behave as user-side text."""
    spec = _registry.get(type)
    if spec is None:
        return BlockTypeSpec(type, "user", "none", f"[{type.upper()}]", "text", "system")
    return spec


# plan blocks: registered (not built in), so a framework may still re-register them
# with its own label or role
register_block_type(REACT_PLAN, role="assistant", boundary="message", label="[PLAN]")
register_block_type(
    REACT_PLAN_HISTORY, role="user", label="[PLAN HISTORY]", default_author="system"
)
