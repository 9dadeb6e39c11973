"""timeline.io."""
