"""timeline.render."""
