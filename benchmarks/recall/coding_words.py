"""Word pools of the coding sessions: a project's modules, names, tasks and tool output."""

from __future__ import annotations


def _pool(text: str) -> tuple[str, ...]:
    """The items of ``text``, split at ``|`` when it has one, else at spaces."""
    return tuple(text.split("|") if "|" in text else text.split())


PACKAGES = _pool(
    "ledgerly tidepool quarry beacon harbor orchard lantern fieldnote kettle "
    "sparrow trellis cobalt meridian driftwood juniper"
)
MODULES = _pool(
    "router cache auth billing parser scheduler storage config cli models utils "
    "http_client metrics queue exporter search notifications sessions webhooks "
    "migrations permissions ratelimit invoices reports uploads tenants audit"
)
VERBS = _pool(
    "load save parse render resolve validate flush refresh fetch build merge split "
    "compute apply normalize encode decode dispatch schedule retry"
)
NOUNS = _pool(
    "header payload token session invoice tenant batch record row page cursor "
    "snapshot entry route handler job chunk manifest ledger quota policy"
)
CONSTANTS = _pool(
    "MAX_RETRIES RETRY_BACKOFF_SECONDS SESSION_TTL BATCH_SIZE MAX_UPLOAD_MB "
    "DEFAULT_PAGE_SIZE WORKER_CONCURRENCY RATE_LIMIT_PER_MINUTE CACHE_MAX_ENTRIES "
    "LOCK_TIMEOUT_MS POOL_RECYCLE_SECONDS WEBHOOK_MAX_ATTEMPTS INVOICE_GRACE_DAYS "
    "EXPORT_CHUNK_ROWS QUEUE_VISIBILITY_TIMEOUT AUDIT_RETENTION_DAYS TOKEN_LEEWAY_SECONDS "
    "SEARCH_MAX_RESULTS REPORT_CACHE_MINUTES TENANT_SOFT_LIMIT"
)
SETTINGS = _pool(
    "pool_size max_overflow statement_timeout read_replica_lag_ms log_level "
    "sentry_sample_rate redis_db shard_count prefetch_multiplier smtp_port "
    "feature_flag_refresh s3_multipart_threshold_mb otel_export_interval_ms "
    "cors_max_age gunicorn_workers"
)
ERRORS = _pool(
    "KeyError|ValueError|TypeError|AttributeError|ZeroDivisionError|IndexError|"
    "UnicodeDecodeError|PermissionError|TimeoutError|RecursionError"
)
ERROR_DETAILS = {
    "KeyError": _pool("'tenant_id' 'currency' 'X-Request-Id' 'plan_code' 'locale' 'sku'"),
    "ValueError": _pool(
        "invalid literal for int() with base 10: 'N/A'|time data '31/02/2024' does not match "
        "format '%d/%m/%Y'|too many values to unpack (expected 2)|negative quota: -3"
    ),
    "TypeError": _pool(
        "'NoneType' object is not subscriptable|unsupported operand type(s) for +: 'int' "
        "and 'str'|Invoice.__init__() missing 1 required positional argument: 'due'"
    ),
    "AttributeError": _pool(
        "'dict' object has no attribute 'tenant'|module 'datetime' has no attribute "
        "'UTC'|'Cursor' object has no attribute 'rowcount_total'"
    ),
    "ZeroDivisionError": ("division by zero", "float division by zero"),
    "IndexError": ("list index out of range", "tuple index out of range"),
    "UnicodeDecodeError": (
        "'utf-8' codec can't decode byte 0xe9 in position 17: invalid continuation byte",
        "'ascii' codec can't decode byte 0xc3 in position 4: ordinal not in range(128)",
    ),
    "PermissionError": (
        "[Errno 13] Permission denied: '/var/run/app.sock'",
        "[Errno 13] Permission denied: 'exports/latest.csv'",
    ),
    "TimeoutError": ("timed out after 30.0s waiting for lock", "read timed out (15s)"),
    "RecursionError": ("maximum recursion depth exceeded while calling a Python object",),
}
LIBRARIES = _pool(
    "httpx pydantic sqlalchemy alembic celery redis boto3 structlog fastapi uvicorn "
    "orjson tenacity jinja2 click rich pytest-asyncio freezegun"
)
COMMIT_TOPICS = _pool(
    "Switch session store to redis|Add retry with jitter to webhook sender|"
    "Fix off-by-one in pagination cursor|Pin sqlalchemy below 2.1|Split billing into "
    "invoices and payments|Cache tenant lookups for 5 minutes|Drop Python 3.9 support|"
    "Stream CSV exports instead of buffering|Add audit log for permission changes|"
    "Move rate limits to config|Use UTC everywhere in reports|Rename Plan.code to "
    "Plan.slug|Bump httpx and fix timeouts|Guard against empty upload batches|"
    "Add healthcheck for read replica"
)
TASKS = _pool(
    "Fix the failing test in {test}|Add a --dry-run flag to the {mod} command|"
    "The {mod} module is slow on big inputs, profile it and speed it up|"
    "Refactor {mod} so the {noun} handling lives in one place|Write tests for {mod}|"
    "Users report a crash in {mod} when the {noun} is empty, find out why|"
    "Upgrade {lib} and fix whatever breaks|Add type hints to {path}|"
    "Make {mod} log the {noun} id on every error|Clean up the {mod} config loading|"
    "Investigate the flaky test in {test}|Add pagination to the {mod} endpoint|"
    "Move the {noun} validation from {mod} into models|Document how {mod} retries"
)
DECISIONS = (
    ("the {mod} cache backend", "redis", "memcached"),
    ("the serialization format for {noun} payloads", "msgpack", "JSON"),
    ("the retry strategy in {mod}", "exponential backoff with jitter", "fixed delays"),
    ("the migration tool", "alembic autogenerate with manual review", "raw SQL files"),
    ("the date library in {mod}", "the standard zoneinfo module", "pendulum"),
    ("the task queue for {mod}", "celery with a redis broker", "a cron job"),
    ("how {noun} ids are generated", "ULIDs", "auto-increment integers"),
    ("the HTTP client in {mod}", "httpx with a shared client", "requests"),
)
ASSISTANT_STEPS = (
    "Let me look at {path} first.",
    "I'll run the tests for {mod} to see the current state.",
    "Searching for where {func} is used.",
    "Checking the installed versions.",
    "Let me look at the recent history.",
    "I'll try the command that fails.",
    "Now I'll make the change in {path}.",
    "Reading the config to see what is set.",
)
DONE = (
    "Done: the change is in {path} and the tests for {mod} pass.",
    "I've updated {path}; {mod} now handles the empty case.",
    "Finished. {path} is refactored and nothing else changed behaviour.",
    "The fix is in place in {path}. Let me know if you want more tests.",
)
ACKS = ("I'll look back through what we did.", "Let me check.", "Checking my notes.")
