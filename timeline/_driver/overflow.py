"""Is this provider error a context overflow?

Accepts an exception (SDK errors expose ``code``, ``status_code``, ``body``), a message
string, or a provider error body (a mapping or its JSON text). Structured codes decide
first, then a per-provider phrase table. Rate limits ("Request too large ... tokens per
min"), HTTP 413 payload-size errors, output-size parameter errors, auth and network
errors are *not* overflows: retrying them with a smaller prompt would not help.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from typing import Any, Final

__all__ = [
    "OVERFLOW_CODES",
    "is_context_overflow",
    "is_usage_overflow",
]

OVERFLOW_CODES: Final = frozenset(
    {
        "context_length_exceeded",
        "exceed_context_size_error",
        "model_max_prompt_tokens_exceeded",
        "string_above_max_length",
        "context_window_exceeded",
        "prompt_too_long",
        "input_too_long",
    }
)
"""Error codes / types that always mean the prompt is too long for the model."""

_NOT_OVERFLOW_CODES: Final = frozenset(
    {
        "rate_limit_exceeded",
        "rate_limit_error",
        "insufficient_quota",
        "invalid_api_key",
        "authentication_error",
        "permission_error",
        "overloaded_error",
        "request_too_large",
    }
)

_NEGATIVE: Final = re.compile(
    r"tokens per min|per minute|\bTPM\b|\bRPM\b|rate.?limit|too many requests|quota"
    r"|payload too large|request entity too large|request size exceeds|payload size exceeds"
    r"|max_tokens is too large|supports at most \d+ completion tokens"
    r"|maximum allowed number of output tokens|max_tokens.{0,40}(?:exceeds|>).{0,40}output"
    r"|api key|unauthori[sz]ed|forbidden|connection (?:error|reset|refused)|timed out"
    r"|throttl|please wait|try again later|overloaded",
    re.IGNORECASE,
)

_POSITIVE: Final = (
    # OpenAI, Azure OpenAI, DeepSeek, vLLM, OpenRouter ("maximum context length is N")
    r"maximum context length",
    r"context length exceeded",
    r"context_length_exceeded",
    # OpenAI Responses API
    r"exceeds the context window",
    r"input exceeds the context window",
    # Anthropic
    r"prompt is too long",
    r"input length and `?max_tokens`? exceed context limit",
    # AWS Bedrock
    r"input is too long for requested model",
    r"too many input tokens",
    r"input token count.{0,40}exceeds the maximum",
    # Gemini / Vertex AI
    r"exceeds the maximum number of tokens allowed",
    # Mistral
    r"too large for model with \d+ maximum context length",
    # Groq, generic
    r"reduce the length of the messages",
    # Cerebras
    r"current length is \d+ while limit is \d+",
    # Cohere
    r"too many tokens",
    r"cannot exceed \d+.{0,20}tokens",
    # xAI
    r"maximum prompt length is \d+",
    # Together / Hugging Face TGI
    r"`inputs` tokens \+ `max_new_tokens` must be",
    r"`inputs` must have less than \d+ tokens",
    r"input validation error:.{0,80}tokens",
    # vLLM (newer wording)
    r"is too long to fit into the model",
    r"prompt \(total length \d+\)",
    # llama.cpp server
    r"exceeds the available context size",
    r"exceed_context_size_error",
    # LM Studio
    r"context length of only \d+ tokens",
    r"context (?:the )?overflows",
    # Ollama
    r"input length exceeds (?:the )?maximum context length",
    # GitHub Copilot
    r"prompt token count of \d+ exceeds the limit",
    # generic phrasings seen across proxies
    r"context window (?:is )?(?:exceeded|too small|limit)",
    r"exceeds? (?:the )?(?:model'?s? )?context (?:window|length|limit|size)",
    r"token limit exceeded|exceeded (?:the )?token limit",
    r"prompt.{0,20}exceeds.{0,40}tokens",
)
_POSITIVE_RE: Final = re.compile("|".join(f"(?:{p})" for p in _POSITIVE), re.IGNORECASE)


def _walk(value: Any, depth: int = 0) -> Iterator[tuple[str, Any]]:
    """Every (key, value) pair of a nested error body, plus bare strings as ``message``."""
    if depth > 6:
        return
    if isinstance(value, Mapping):
        for k, v in value.items():
            yield str(k), v
            yield from _walk(v, depth + 1)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from _walk(v, depth + 1)
    elif isinstance(value, str):
        stripped = value.strip()
        if stripped[:1] in "{[":
            try:
                parsed = json.loads(stripped)
            except ValueError:
                return
            yield from _walk(parsed, depth + 1)


def _facts(error: Any) -> tuple[list[str], set[str], int | None]:
    texts: list[str] = []
    codes: set[str] = set()
    status: int | None = None
    bodies: list[Any] = []
    if isinstance(error, BaseException):
        texts.append(str(error))
        for attr in ("code", "type", "error_code"):
            value = getattr(error, attr, None)
            if isinstance(value, str):
                codes.add(value.lower())
        for attr in ("status_code", "status", "http_status"):
            value = getattr(error, attr, None)
            if isinstance(value, int):
                status = value
        for attr in ("body", "response_body", "error", "args"):
            value = getattr(error, attr, None)
            if value is not None and not isinstance(value, BaseException):
                bodies.append(value)
    elif isinstance(error, str):
        texts.append(error)
        bodies.append(error)
    elif isinstance(error, bytes):
        text = error.decode("utf-8", "replace")
        texts.append(text)
        bodies.append(text)
    elif isinstance(error, Mapping):
        bodies.append(error)
    for body in bodies:
        for key, value in _walk(body):
            key = key.lower()
            if key in ("code", "type", "error_code", "reason") and isinstance(value, str):
                codes.add(value.lower())
            elif key in ("status", "status_code", "http_status") and isinstance(value, int):
                status = value
            elif key in ("message", "detail", "error", "msg") and isinstance(value, str):
                texts.append(value)
    return texts, codes, status


def is_context_overflow(error: object) -> bool:
    """True when ``error`` says the prompt exceeded the model's context window."""
    texts, codes, status = _facts(error)
    if codes & OVERFLOW_CODES:
        return True
    if status == 413 or codes & _NOT_OVERFLOW_CODES:
        return False
    text = "\n".join(texts)
    if not text or _NEGATIVE.search(text):
        return False
    return _POSITIVE_RE.search(text) is not None


def is_usage_overflow(prompt_tokens: int | None, context_window: int | None) -> bool:
    """Silent overflow: the provider reports as many prompt tokens as the
    window holds, so it probably truncated the input without an error."""
    if not prompt_tokens or not context_window:
        return False
    return prompt_tokens >= context_window
