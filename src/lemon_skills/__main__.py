"""``python -m lemon_skills`` runs the ``lemon`` CLI."""

from .cli import main

raise SystemExit(main())
