"""timeline._io."""

from __future__ import annotations

from timeline._io.importers import (
    ImportedConversation,
    import_conversation,
    import_messages,
)
from timeline._io.stream import (
    json_events,
)
from timeline._io.streamed import (
    StreamedImport,
)

__all__ = [
    "ImportedConversation",
    "StreamedImport",
    "import_conversation",
    "import_messages",
    "json_events",
]
