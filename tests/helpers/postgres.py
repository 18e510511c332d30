"""A throwaway PostgreSQL server for the state tests: ``initdb`` + ``pg_ctl`` in a temporary
directory, listening on 127.0.0.1 and a free port, run as an unprivileged user when the tests
run as root (PostgreSQL refuses to run as root). ``start()`` says why when it cannot.

The fixtures at the end (a plugin of tests/conftest.py): ``pg_server`` (one per session),
``pg_url`` (``LEMON_DATABASE_URL`` set, tables emptied), ``fresh_db`` (a new empty database),
``backend`` (a test runs on both).
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

USER = "lemon"


@dataclass
class Server:
    """A running server; ``url`` reaches its ``postgres`` database as a superuser."""

    root: Path
    bindir: Path
    port: int
    run_as: str | None

    @property
    def url(self) -> str:
        return f"postgresql://{USER}@127.0.0.1:{self.port}/postgres"

    def database_url(self, name: str) -> str:
        return f"postgresql://{USER}@127.0.0.1:{self.port}/{name}"

    def stop(self) -> None:
        with contextlib.suppress(subprocess.SubprocessError, OSError):
            _run(self, "pg_ctl", "-D", str(self.root / "data"), "-m", "immediate", "-w", "stop")
        shutil.rmtree(self.root, ignore_errors=True)


class Unavailable(Exception):
    """PostgreSQL cannot be started here; the message says what is missing."""


def bindir() -> Path | None:
    """Where initdb and pg_ctl are: on PATH, else Debian's /usr/lib/postgresql/<v>/bin."""
    found = shutil.which("initdb")
    if found and shutil.which("pg_ctl"):
        return Path(found).parent
    versions = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"),
        key=lambda p: int(Path(p).parts[-3]) if Path(p).parts[-3].isdigit() else 0,
    )
    return Path(versions[-1]).parent if versions else None


def start() -> Server:
    """Start a server, or raise :class:`Unavailable` saying why not."""
    try:
        import psycopg  # noqa: F401
        import psycopg_pool  # noqa: F401
    except ImportError as exc:
        raise Unavailable(f"{exc.name} is not installed (pip install -e '.[postgres]')") from exc
    where = bindir()
    if where is None:
        raise Unavailable(
            "PostgreSQL server binaries (initdb, pg_ctl) are not on PATH nor in "
            "/usr/lib/postgresql/*/bin (apt-get install postgresql)"
        )
    run_as = _unprivileged_user() if os.geteuid() == 0 else None
    if os.geteuid() == 0 and run_as is None:
        raise Unavailable("running as root and neither a postgres nor a nobody user exists")
    if os.geteuid() == 0 and _runuser() is None:
        raise Unavailable("running as root and runuser (util-linux) is not installed")
    root = Path(tempfile.mkdtemp(prefix="lemon-pg-"))
    root.chmod(0o755)
    if run_as is not None:
        entry = pwd.getpwnam(run_as)
        os.chown(root, entry.pw_uid, entry.pw_gid)
    server = Server(root=root, bindir=where, port=_free_port(), run_as=run_as)
    try:
        _run(
            server,
            "initdb",
            "-D",
            str(root / "data"),
            "-U",
            USER,
            "-A",
            "trust",
            "-E",
            "UTF8",
            "--locale=C",
            "--no-sync",
        )
        options = (
            f"-p {server.port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=off "
            "-c synchronous_commit=off -c full_page_writes=off -c max_connections=200"
        )
        _run(
            server,
            "pg_ctl",
            "-D",
            str(root / "data"),
            "-o",
            options,
            "-l",
            str(root / "log"),
            "-w",
            "-t",
            "60",
            "start",
        )
    except (subprocess.SubprocessError, OSError) as exc:
        log = root / "log"
        tail = log.read_text(errors="replace").strip().splitlines()[-3:] if log.exists() else []
        detail = getattr(exc, "stderr", "") or ""
        server.stop()
        raise Unavailable(f"PostgreSQL did not start: {exc} {detail} {' '.join(tail)}") from exc
    return server


def _run(server: Server, tool: str, *args: str) -> None:
    cmd = [str(server.bindir / tool), *args]
    if server.run_as is not None:
        cmd = [_runuser() or "runuser", "-u", server.run_as, "--", *cmd]
    subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=120, cwd=server.root)


def _runuser() -> str | None:
    """runuser lives in sbin, which a non-login PATH may lack."""
    found = shutil.which("runuser")
    candidates = [found] if found else []
    candidates += ["/usr/sbin/runuser", "/sbin/runuser"]
    return next((c for c in candidates if os.access(c, os.X_OK)), None)


def _unprivileged_user() -> str | None:
    for name in ("postgres", "nobody"):
        with contextlib.suppress(KeyError):
            pwd.getpwnam(name)
            return name
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# Fixtures (imported by the conftest files of the tests that use them).
_TABLES = "approvals, events, mcp_pins, pin_servers, skill_usage, state_imports"


@pytest.fixture(scope="session")
def pg_server() -> Iterator[Server]:
    """The session's PostgreSQL server; the tests that need it skip saying what is missing."""
    try:
        server = start()
    except Unavailable as exc:
        if os.environ.get("CI"):  # .ci/run installs PostgreSQL: a skip there would hide a gap
            pytest.fail(f"PostgreSQL could not be started in CI: {exc}")
        pytest.skip(f"PostgreSQL tests skipped: {exc}")
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def pg_url(pg_server: Server, monkeypatch: pytest.MonkeyPatch) -> str:
    """LEMON_DATABASE_URL set to the session server's database, emptied for this test."""
    import psycopg

    url = pg_server.url
    with psycopg.connect(url, autocommit=True) as conn:
        exists = conn.execute("SELECT to_regclass('lemon_schema') IS NOT NULL").fetchone()
        if exists and exists[0]:
            conn.execute(f"TRUNCATE {_TABLES}")
    monkeypatch.setenv("LEMON_DATABASE_URL", url)
    return url


@pytest.fixture
def fresh_db(pg_server: Server) -> str:
    """The URL of a new, empty database on the session server (for schema tests)."""
    import psycopg

    name = f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(pg_server.url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    return pg_server.database_url(name)


@pytest.fixture(params=["embedded", "postgresql"])
def backend(request: pytest.FixtureRequest) -> str:
    """Run the test on the embedded files, then on PostgreSQL (``LEMON_DATABASE_URL`` set)."""
    if request.param == "postgresql":
        request.getfixturevalue("pg_url")
    return str(request.param)
