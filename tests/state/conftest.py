"""The state tests run on both backends (``backend``) and against a real PostgreSQL server."""

from tests.helpers.postgres import backend, fresh_db, pg_server, pg_url

__all__ = ["backend", "fresh_db", "pg_server", "pg_url"]
