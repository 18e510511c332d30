"""Ranking skills for a request: skills as ``lemon_skills.search`` documents (``index``), the
ranker (``find``), the index's disk snapshot and the optional embedding similarity."""
