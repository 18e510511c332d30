"""``python -m lemon_skills`` runs the ``lemon`` CLI."""

from .cli import run

run()
