"""Real git repositories for tests, and real servers for them on 127.0.0.1.

``GitRepo`` is a working repository (served as ``file://``) with an optional bare mirror that
``git daemon`` or ``git http-backend`` (behind a small threaded HTTP server) serves.
"""

from __future__ import annotations

import os
import select
import socket
import subprocess
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote

_ENV_KEEP = ("PATH", "LANG", "TMPDIR")


def git_env() -> dict[str, str]:
    """An environment independent of the machine's git configuration."""
    env = {k: os.environ[k] for k in _ENV_KEEP if k in os.environ}
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull, HOME=os.devnull)
    return env


def git(*args: str, cwd: Path | None = None) -> str:
    """Run git for test set-up; return stdout."""
    cmd = [
        "git",
        "-c",
        "user.name=Test",
        "-c",
        "user.email=test@example.com",
        "-c",
        "init.defaultBranch=main",
        "-c",
        "commit.gpgsign=false",
        *args,
    ]
    out = subprocess.run(cmd, cwd=cwd, env=git_env(), capture_output=True, text=True, check=True)
    return out.stdout


def skill_md(name: str, description: str = "Handle test things with care.", body: str = "") -> str:
    """A valid SKILL.md."""
    body = body or f"# {name}\n\nUse the {name} tools.\n"
    return f"---\nname: {name}\ndescription: {description}\n---\n\n{body}"


@dataclass
class GitRepo:
    """A working repository and, optionally, the bare mirror a server exports."""

    work: Path
    bare: Path | None = None

    @property
    def url(self) -> str:
        """``file://`` URL of the working repository."""
        return self.work.as_uri()

    def commit(self, files: Mapping[str, str | bytes | None], message: str = "change") -> str:
        """Write (or, with None, delete) files, commit, push to the mirror; return the sha."""
        for rel, content in files.items():
            path = self.work / rel
            if content is None:
                path.unlink()
                continue
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                path.write_bytes(content)
            else:
                path.write_text(content, encoding="utf-8")
        git("add", "-A", cwd=self.work)
        git("commit", "-q", "--allow-empty", "-m", message, cwd=self.work)
        if self.bare is not None:
            git("push", "-q", str(self.bare), "HEAD:main", "--tags", cwd=self.work)
        return self.head()

    def symlink(self, rel: str, target: str, message: str = "link") -> str:
        """Commit a symlink."""
        (self.work / rel).parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, self.work / rel)
        return self.commit({}, message)

    def tag(self, name: str) -> None:
        """Tag HEAD (and push the tag)."""
        git("tag", name, cwd=self.work)
        if self.bare is not None:
            git("push", "-q", str(self.bare), name, cwd=self.work)

    def head(self) -> str:
        """The current commit."""
        return git("rev-parse", "HEAD", cwd=self.work).strip()


def make_repo(
    root: Path,
    files: Mapping[str, str | bytes],
    *,
    serve_as: str | None = None,
    served_root: Path | None = None,
) -> GitRepo:
    """Create a repository at ``root`` with one commit of ``files``.

    ``serve_as`` (``owner/repo``) also creates the bare mirror ``served_root/owner/repo.git``.
    """
    root.mkdir(parents=True)
    git("init", "-q", cwd=root)
    repo = GitRepo(root)
    if serve_as is not None:
        assert served_root is not None
        bare = served_root / f"{serve_as}.git"
        bare.parent.mkdir(parents=True, exist_ok=True)
        git("init", "-q", "--bare", str(bare))
        repo.bare = bare
    repo.commit(files, "initial")
    return repo


class _CgiHandler(BaseHTTPRequestHandler):
    """Runs ``git http-backend`` per request (the smart HTTP protocol)."""

    project_root: Path

    def do_GET(self) -> None:
        self._backend()

    def do_POST(self) -> None:
        self._backend()

    def _body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks = []
            while size := int(self.rfile.readline().strip() or b"0", 16):
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
            self.rfile.readline()
            return b"".join(chunks)
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def _backend(self) -> None:
        path, _, query = self.path.partition("?")
        body = self._body()
        env = git_env()
        env.update(
            GIT_PROJECT_ROOT=str(self.project_root),
            GIT_HTTP_EXPORT_ALL="1",
            PATH_INFO=unquote(path),
            QUERY_STRING=query,
            REQUEST_METHOD=self.command,
            CONTENT_TYPE=self.headers.get("Content-Type", ""),
            CONTENT_LENGTH=str(len(body)),
            HTTP_CONTENT_ENCODING=self.headers.get("Content-Encoding", ""),
            GIT_PROTOCOL=self.headers.get("Git-Protocol", ""),
            REMOTE_ADDR="127.0.0.1",
        )
        out = subprocess.run(
            ["git", "http-backend"], input=body, env=env, capture_output=True, timeout=60
        ).stdout
        head, _, payload = out.partition(b"\r\n\r\n")
        status, headers = 200, []
        for line in head.split(b"\r\n"):
            key, _, value = line.decode("latin-1").partition(":")
            if key.lower() == "status":
                status = int(value.split()[0])
            elif key:
                headers.append((key, value.strip()))
        self.send_response(status)
        for key, value in headers:
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format: str, *args: object) -> None:
        pass


@dataclass
class Served:
    """A running server: ``base`` ends with ``/``; repositories live under ``root``."""

    base: str
    root: Path


def serve_http(root: Path) -> Iterator[Served]:
    """Serve bare repositories under ``root`` over smart HTTP on 127.0.0.1."""
    handler = type("Handler", (_CgiHandler,), {"project_root": root})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield Served(f"http://127.0.0.1:{server.server_address[1]}/", root)
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def serve_daemon(root: Path) -> Iterator[Served]:
    """Serve bare repositories under ``root`` with ``git daemon`` on 127.0.0.1."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [
            "git",
            "daemon",
            "--verbose",
            "--reuseaddr",
            "--export-all",
            "--informative-errors",
            f"--base-path={root}",
            "--listen=127.0.0.1",
            f"--port={port}",
            str(root),
        ],
        env=git_env(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        _wait_for(proc, b"Ready to rumble")
        yield Served(f"git://127.0.0.1:{port}/", root)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        assert proc.stderr is not None
        proc.stderr.close()


def _wait_for(proc: subprocess.Popen[bytes], marker: bytes, timeout: float = 10.0) -> None:
    assert proc.stderr is not None
    seen = b""
    while marker not in seen:
        ready, _, _ = select.select([proc.stderr], [], [], timeout)
        chunk = os.read(proc.stderr.fileno(), 4096) if ready else b""
        if not chunk:
            raise RuntimeError(f"git daemon did not start: {seen.decode(errors='replace')}")
        seen += chunk
    # Keep draining so a chatty daemon never blocks on a full pipe.
    threading.Thread(target=_drain, args=(proc,), daemon=True).start()


def _drain(proc: subprocess.Popen[bytes]) -> None:
    assert proc.stderr is not None
    try:
        while os.read(proc.stderr.fileno(), 4096):
            pass
    except (OSError, ValueError):
        pass
