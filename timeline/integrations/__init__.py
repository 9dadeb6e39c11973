"""Drop-in adapters for agent frameworks, one module per framework.

* :mod:`timeline.integrations.langchain`: ``TimelineMiddleware`` for LangChain v1 /
  LangGraph agents, ``from_langchain`` / ``to_langchain`` converters
  (the ``langchain`` extra);
* :mod:`timeline.integrations.pydantic_ai`: ``TimelineHistory`` for pydantic-ai agents
  (the ``pydantic-ai`` extra);
* :mod:`timeline.integrations.openai_agents`: ``TimelineSession`` for the OpenAI Agents
  SDK (the ``openai-agents`` extra).

The core never imports these modules; each imports its framework when it is imported
and says which extra to install when the framework is missing.
"""

from __future__ import annotations

from timeline._model import TimelineError, install_hint, name_home

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


def missing_extra(framework: str, extra: str) -> MissingExtraError:
    """The error for an integration whose framework is not installed, with the install
    line that works where this package runs (:func:`~timeline._model.extras.install_hint`)."""
    return MissingExtraError(
        f"timeline.integrations needs {framework}, which is not installed: {install_hint(extra)}"
    )


name_home(__name__, __all__, globals())
