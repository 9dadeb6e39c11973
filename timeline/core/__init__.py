"""timeline.core."""
