"""Provider payload formatters over a shared, always-valid message plan."""
