"""``python -m timeline`` runs the CLI."""

from timeline.cli import main

raise SystemExit(main())
