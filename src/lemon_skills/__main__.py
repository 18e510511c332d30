"""``python -m lemon_skills`` runs the ``lemon`` CLI."""

from lemon_skills.cli import run

run()
