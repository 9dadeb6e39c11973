"""Drop-in adapters for agent frameworks, one module per framework.

* :mod:`timeline.integrations.langchain`: ``TimelineMiddleware`` for LangChain v1 /
  LangGraph agents, ``from_langchain`` / ``to_langchain`` converters
  (``pip install 'block-timeline[langchain]'``);
* :mod:`timeline.integrations.pydantic_ai`: ``TimelineHistory`` for pydantic-ai agents
  (``pip install 'block-timeline[pydantic-ai]'``);
* :mod:`timeline.integrations.openai_agents`: ``TimelineSession`` for the OpenAI Agents
  SDK (``pip install 'block-timeline[openai-agents]'``).

The core never imports these modules; each imports its framework when it is imported
and says which extra to install when the framework is missing.
"""

from __future__ import annotations

import shlex
from pathlib import Path

from timeline.model.errors import TimelineError

__all__ = ["IntegrationError", "InvalidItemError", "MissingExtraError", "missing_extra"]


class IntegrationError(TimelineError, ValueError):
    """A framework handed the adapter something it cannot use (no thread id, a message
    it cannot convert)."""


class InvalidItemError(IntegrationError, TypeError):
    """A session was given an item it cannot store: not a mapping, or not JSON (a value
    JSON has no form for, a lone surrogate, nesting deeper than the block model takes).
    Nothing is written; also a ``TypeError``, as a session that serializes its items
    raises for them."""


class MissingExtraError(TimelineError, ImportError):
    """The framework of an integration is not installed."""


def _source_tree() -> Path | None:
    """The checkout this package runs from (a clone, or an editable install), if any."""
    root = Path(__file__).resolve().parents[2]
    try:
        pyproject = (root / "pyproject.toml").read_text(encoding="utf-8")
    except OSError:
        return None
    return root if 'name = "block-timeline"' in pyproject else None


def missing_extra(framework: str, extra: str) -> MissingExtraError:
    """The error for an integration whose framework is not installed: the install line
    from the package index, and the one that works in a clone (``pip install -e``)."""
    root = _source_tree()
    where = shlex.quote(f"{root}[{extra}]") if root is not None else f"'.[{extra}]'"
    clone = f"pip install -e {where}" + ("" if root is not None else " in a clone")
    return MissingExtraError(
        f"timeline.integrations needs {framework}: pip install 'block-timeline[{extra}]' "
        f"(from a clone of the repository: {clone})"
    )
