"""Running the frameworks' own tests (ported, see each file's header) under this suite.

The hosts run their async tests with pytest-asyncio (``asyncio_mode = "auto"``) or
anyio's plugin. Here an async test marked for anyio runs under anyio's plugin (on
asyncio); any other async test runs in a fresh event loop of its own, as pytest-asyncio
would run it, so the ported files keep their marks unchanged.
"""

from __future__ import annotations

import asyncio
import inspect
from typing import Any

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "asyncio: an async test (run in an event loop of its own)")


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    fn = pyfuncitem.obj
    if not inspect.iscoroutinefunction(fn) or pyfuncitem.get_closest_marker("anyio"):
        return None
    names = pyfuncitem._fixtureinfo.argnames
    kwargs: dict[str, Any] = {name: pyfuncitem.funcargs[name] for name in names}
    asyncio.run(fn(**kwargs))
    return True


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(autouse=True)
def _no_tracing() -> None:
    """The SDK's conftest installs a test trace processor; without it, no export."""
    try:
        from agents import set_tracing_disabled
    except ImportError:  # pragma: no cover - the extra is missing
        return
    set_tracing_disabled(True)
