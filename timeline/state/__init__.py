"""timeline.state."""
