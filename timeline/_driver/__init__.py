"""The ReAct driver (:mod:`timeline._driver.react`) and its function tools
(:mod:`~timeline._driver.function_tools`), overflow detection
(:mod:`~timeline._driver.overflow`), the memory tools that read evicted content back
(:mod:`~timeline._driver.memory_tools`) and a scripted model for tests and the demo
(:mod:`~timeline._driver.scripted`)."""

from __future__ import annotations

from timeline._driver.function_tools import (
    FunctionTool,
    function_tool,
)
from timeline._driver.memory_tools import (
    TOOL_SPECS,
    compact_context_tool,
    memory_read_tool,
    memory_tools,
    read_path_tool,
)
from timeline._driver.overflow import (
    is_context_overflow,
    is_usage_overflow,
)
from timeline._driver.react import (
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
from timeline._driver.scripted import (
    DEMO_TOOL_SPECS,
    CodingSession,
    ScriptedModel,
    demo_tools,
)

__all__ = [
    "CodingSession",
    "ContextUsage",
    "DEMO_TOOL_SPECS",
    "DriverEvent",
    "FunctionTool",
    "ModelCall",
    "ModelReply",
    "ReactDriver",
    "ScriptedModel",
    "TOOL_SPECS",
    "Tool",
    "ToolCallRequest",
    "ToolOutput",
    "TurnResult",
    "Usage",
    "compact_context_tool",
    "demo_tools",
    "function_tool",
    "is_context_overflow",
    "is_usage_overflow",
    "memory_read_tool",
    "memory_tools",
    "read_path_tool",
]
