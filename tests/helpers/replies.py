"""Provider replies as the SDKs return them, for the reply readers."""

from __future__ import annotations

REASONING = {
    "type": "reasoning",
    "id": "rs_01",
    "summary": [{"type": "summary_text", "text": "Need the file."}],
    "encrypted_content": "gAAAAABencrypted",
}


RESPONSE = {
    "id": "resp_01",
    "object": "response",
    "created_at": 0,
    "model": "gpt-5",
    "status": "completed",
    "parallel_tool_calls": True,
    "tool_choice": "auto",
    "tools": [],
    "output": [
        {**REASONING, "status": "completed"},
        {
            "type": "function_call",
            "id": "fc_01",
            "call_id": "call_01",
            "name": "read_file",
            "arguments": '{"path":"a.py"}',
            "status": "completed",
        },
    ],
    "usage": {
        "input_tokens": 300,
        "output_tokens": 40,
        "total_tokens": 340,
        "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
        "output_tokens_details": {"reasoning_tokens": 30},
    },
}


CHAT = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "created": 0,
    "model": "gpt-4o",
    "choices": [
        {
            "index": 0,
            "finish_reason": "tool_calls",
            "message": {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_9",
                        "type": "function",
                        "function": {"name": "read_file", "arguments": '{"path":"a.py"}'},
                    }
                ],
            },
        }
    ],
    "usage": {"prompt_tokens": 12, "completion_tokens": 7, "total_tokens": 19},
}
