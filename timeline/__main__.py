"""``python -m timeline`` runs the CLI."""

from timeline._cli import main

raise SystemExit(main())
