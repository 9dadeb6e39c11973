"""timeline.model."""
