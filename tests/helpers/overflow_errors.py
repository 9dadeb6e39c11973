"""Real provider error messages: the context overflows, and the errors that are not."""

from __future__ import annotations

import json
from typing import Any

from timeline._driver.scripted import ProviderError

OPENAI_MSG = (
    "This model's maximum context length is 128000 tokens. However, your messages resulted "
    "in 130541 tokens. Please reduce the length of the messages."
)


OPENAI_BODY = {
    "error": {
        "message": OPENAI_MSG,
        "type": "invalid_request_error",
        "param": "messages",
        "code": "context_length_exceeded",
    }
}


OVERFLOWS: list[tuple[str, Any]] = [
    ("openai message", OPENAI_MSG),
    ("openai body", OPENAI_BODY),
    ("openai body as JSON text", json.dumps(OPENAI_BODY)),
    (
        "openai sdk error",
        ProviderError(
            f"Error code: 400 - {OPENAI_BODY}",
            status_code=400,
            code="context_length_exceeded",
            body=OPENAI_BODY,
        ),
    ),
    (
        "openai code only",
        ProviderError("Bad request", status_code=400, code="context_length_exceeded"),
    ),
    (
        "openai responses",
        "Your input exceeds the context window of this model. Please adjust your input and try again.",
    ),
    (
        "azure openai",
        "This model's maximum context length is 8192 tokens, however you requested 9000 tokens (8500 in your prompt; 500 for the completion). Please reduce your prompt; or completion length.",
    ),
    (
        "azure body",
        {
            "error": {
                "code": "context_length_exceeded",
                "message": "This model's maximum context length is 4096 tokens.",
                "status": 400,
            }
        },
    ),
    ("anthropic", "prompt is too long: 208310 tokens > 200000 maximum"),
    (
        "anthropic body",
        {
            "type": "error",
            "error": {
                "type": "invalid_request_error",
                "message": "prompt is too long: 208310 tokens > 200000 maximum",
            },
        },
    ),
    (
        "anthropic max_tokens+input",
        "input length and `max_tokens` exceed context limit: 197000 + 8192 > 200000, decrease input length or `max_tokens` and try again",
    ),
    (
        "anthropic sdk",
        ProviderError(
            "Error code: 400 - {'type': 'error', 'error': {'type': 'invalid_request_error', 'message': 'prompt is too long: 210000 tokens > 200000 maximum'}}",
            status_code=400,
        ),
    ),
    (
        "bedrock invoke",
        "An error occurred (ValidationException) when calling the InvokeModel operation: Input is too long for requested model.",
    ),
    (
        "bedrock converse",
        "An error occurred (ValidationException) when calling the Converse operation: The model returned the following errors: prompt is too long: 200500 tokens > 200000 maximum",
    ),
    (
        "bedrock titan",
        "An error occurred (ValidationException) when calling the InvokeModel operation: Too many input tokens. Max input tokens: 8192, request input token count: 9120",
    ),
    (
        "gemini",
        "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).",
    ),
    (
        "vertex body",
        {
            "error": {
                "code": 400,
                "message": "The input token count (1048577) exceeds the maximum number of tokens allowed (1048576).",
                "status": "INVALID_ARGUMENT",
            }
        },
    ),
    (
        "mistral",
        "Prompt contains 40000 tokens and 0 draft tokens, too large for model with 32768 maximum context length",
    ),
    (
        "mistral body",
        {
            "object": "error",
            "message": "Prompt contains 40960 tokens and 0 draft tokens, too large for model with 32768 maximum context length",
            "type": "invalid_request_error",
            "param": None,
            "code": None,
        },
    ),
    (
        "groq",
        {
            "error": {
                "message": "Please reduce the length of the messages or completion.",
                "type": "invalid_request_error",
                "param": "messages",
                "code": "context_length_exceeded",
            }
        },
    ),
    ("cerebras", "Current length is 9000 while limit is 8192"),
    (
        "cohere",
        "too many tokens: total number of tokens in the prompt cannot exceed 4081 - received 5000. Try using a shorter prompt, or enabling prompt truncating.",
    ),
    (
        "openrouter",
        'This endpoint\'s maximum context length is 131072 tokens. However, you requested about 140000 tokens (135000 of text input, 5000 in the output). Please reduce the length of either one, or use the "middle-out" transform to compress your prompt automatically.',
    ),
    ("xai", "This model's maximum prompt length is 131072 but the request contains 140000 tokens."),
    (
        "deepseek",
        "This model's maximum context length is 65536 tokens. However, you requested 70000 tokens (66000 in the messages, 4000 in the completion). Please reduce the length of the messages or completion.",
    ),
    (
        "together / tgi sum",
        "Input validation error: `inputs` tokens + `max_new_tokens` must be <= 8193. Given: 8000 `inputs` tokens and 512 `max_new_tokens`",
    ),
    ("tgi inputs", "Input validation error: `inputs` must have less than 4096 tokens. Given: 5000"),
    (
        "vllm classic",
        "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (4500 in the messages, 500 in the completion). Please reduce the length of the messages or completion.",
    ),
    (
        "vllm new",
        "The prompt (total length 5000) is too long to fit into the model (context length 4096). Make sure that `max_model_len` is no smaller than the number of text tokens.",
    ),
    (
        "llama.cpp body",
        {
            "error": {
                "code": 400,
                "message": "the request exceeds the available context size, try increasing it",
                "type": "exceed_context_size_error",
                "n_prompt_tokens": 5000,
                "n_ctx": 4096,
            }
        },
    ),
    ("llama.cpp text", "the request exceeds the available context size, try increasing it"),
    (
        "lm studio",
        "Trying to keep the first 5000 tokens when context the overflows. However, the model is loaded with context length of only 4096 tokens, which is not enough. Try to load the model with a larger context length, or provide a shorter input",
    ),
    ("ollama", "input length exceeds maximum context length"),
    (
        "github copilot",
        {
            "error": {
                "message": "prompt token count of 130000 exceeds the limit of 128000",
                "code": "model_max_prompt_tokens_exceeded",
            }
        },
    ),
    ("bytes body", json.dumps(OPENAI_BODY).encode()),
]


NOT_OVERFLOWS: list[tuple[str, Any]] = [
    (
        "openai TPM rate limit",
        "Request too large for gpt-4o in organization org-abc on tokens per min (TPM): Limit 30000, Requested 50000. The input or output tokens must be reduced in order to run successfully.",
    ),
    (
        "openai TPM body",
        {
            "error": {
                "message": "Request too large for gpt-4o in organization org-abc on tokens per min (TPM): Limit 30000, Requested 50000.",
                "type": "tokens",
                "code": "rate_limit_exceeded",
            }
        },
    ),
    (
        "groq TPM",
        "Request too large for model `llama3-70b-8192` in organization `org_x` service tier `on_demand` on tokens per minute (TPM): Limit 6000, Requested 9000, please reduce your message size and try again.",
    ),
    (
        "openai RPM",
        "Rate limit reached for gpt-4 in organization org-x on requests per min (RPM): Limit 3, Used 3, Requested 1.",
    ),
    (
        "anthropic 413 body",
        ProviderError(
            "Error code: 413",
            status_code=413,
            body={
                "type": "error",
                "error": {
                    "type": "request_too_large",
                    "message": "Request exceeds the maximum allowed number of bytes.",
                },
            },
        ),
    ),
    ("nginx 413", ProviderError("413 Request Entity Too Large", status_code=413)),
    ("gemini payload", "Request payload size exceeds the limit: 20971520 bytes."),
    (
        "openai max_tokens param",
        "max_tokens is too large: 100000. This model supports at most 16384 completion tokens, whereas you provided 100000.",
    ),
    (
        "anthropic max_tokens param",
        "max_tokens: 100000 > 64000, which is the maximum allowed number of output tokens for claude-sonnet-4-20250514",
    ),
    (
        "openai auth",
        ProviderError(
            "Incorrect API key provided: sk-abc. You can find your API key at https://platform.openai.com/account/api-keys.",
            status_code=401,
            code="invalid_api_key",
        ),
    ),
    (
        "anthropic auth",
        {
            "type": "error",
            "error": {"type": "authentication_error", "message": "invalid x-api-key"},
        },
    ),
    ("network", "Connection error."),
    ("timeout", "Request timed out."),
    (
        "anthropic overloaded",
        {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
    ),
    (
        "gemini quota",
        {
            "error": {
                "code": 429,
                "message": "Resource has been exhausted (e.g. check quota).",
                "status": "RESOURCE_EXHAUSTED",
            }
        },
    ),
    (
        "openai quota",
        {
            "error": {
                "message": "You exceeded your current quota, please check your plan and billing details.",
                "type": "insufficient_quota",
                "code": "insufficient_quota",
            }
        },
    ),
    (
        "bedrock throttling",
        "An error occurred (ThrottlingException) when calling the InvokeModel operation: Too many tokens, please wait before trying again.",
    ),
    ("unknown model", "The model `gpt-5-ultra` does not exist or you do not have access to it."),
    ("server error", ProviderError("Internal server error", status_code=500)),
    ("empty", ""),
    ("none", None),
]
