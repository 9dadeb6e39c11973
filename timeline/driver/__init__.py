"""The ReAct driver (:mod:`timeline.driver.react`) and its function tools
(:mod:`~timeline.driver.function_tools`), overflow detection
(:mod:`~timeline.driver.overflow`), the memory tools that read evicted content back
(:mod:`~timeline.driver.memory_tools`) and a scripted model for tests and the demo
(:mod:`~timeline.driver.scripted`)."""

from __future__ import annotations

from timeline.driver.function_tools import FunctionTool, function_tool
from timeline.driver.react import (
    ContextUsage,
    DriverEvent,
    ModelCall,
    ModelReply,
    ReactDriver,
    Tool,
    ToolCallRequest,
    ToolOutput,
    TurnResult,
    Usage,
)

__all__ = [
    "ContextUsage",
    "DriverEvent",
    "FunctionTool",
    "ModelCall",
    "ModelReply",
    "ReactDriver",
    "Tool",
    "ToolCallRequest",
    "ToolOutput",
    "TurnResult",
    "Usage",
    "function_tool",
]
