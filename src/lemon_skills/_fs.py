"""Durable, race-safe file writes shared by every state file lemon-skills keeps.

The pattern is always: take an exclusive lock on ``<file>.lock``, re-read the current state,
change it, write a temp file in the same directory, fsync it and ``os.replace`` it over the
original. A reader therefore sees the old or the new file, never a torn one, and concurrent
writers in other processes lose no update.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from lemon_skills.errors import ConfigError

JsonDict = dict[str, Any]

#: How long a writer waits for another process's lock before giving up.
LOCK_TIMEOUT_S = 30.0


@contextlib.contextmanager
def locked(path: Path, *, timeout: float = LOCK_TIMEOUT_S) -> Iterator[None]:
    """Hold an exclusive inter-process lock associated with ``path``."""
    from filelock import FileLock  # imported by writers only: reading state needs no lock

    path.parent.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(path) + ".lock", timeout=timeout)
    with lock:
        yield


def write_bytes_atomic(path: Path, data: bytes, *, mode: int | None = None) -> None:
    """Replace ``path`` with ``data`` atomically (temp file, fsync, rename, fsync dir)."""
    import tempfile  # writers only, like filelock: start-up of read-only commands stays lean

    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".lemon-tmp", dir=path.parent)
    try:
        if mode is not None:
            os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    _fsync_dir(path.parent)


def write_text_atomic(path: Path, text: str, *, mode: int | None = None) -> None:
    """Replace ``path`` with UTF-8 ``text`` atomically."""
    write_bytes_atomic(path, text.encode("utf-8"), mode=mode)


def dump_json(data: Any) -> str:
    """Serialise state the way every lemon-skills file is written (2-space, sorted, newline)."""
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def write_json_atomic(
    path: Path, data: Any, *, mode: int | None = None, dump: Callable[[Any], str] = dump_json
) -> None:
    """Replace ``path`` with ``data`` as pretty JSON (or ``dump``'s layout), atomically."""
    write_text_atomic(path, dump(data), mode=mode)


def read_json(path: Path, *, default: Callable[[], JsonDict]) -> JsonDict:
    """Read a JSON object, returning ``default()`` when the file does not exist.

    Raises:
        ConfigError: the file exists but is unreadable, not JSON or not an object. A corrupt
            state file is never silently replaced by an empty one that a later write would
            persist over the user's data.
    """
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return default()
    except OSError as exc:
        raise ConfigError(f"cannot read: {exc.strerror}", path=path) from exc
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(
            f"corrupt JSON ({exc})",
            path=path,
            hint="fix or move the file away; lemon will not overwrite it",
        ) from exc
    if not isinstance(data, dict):
        raise ConfigError("expected a JSON object at the top level", path=path)
    return data


def update_json(
    path: Path,
    change: Callable[[JsonDict], JsonDict | None],
    *,
    default: Callable[[], JsonDict],
    mode: int | None = None,
    dump: Callable[[Any], str] = dump_json,
) -> JsonDict:
    """Lock, re-read, apply ``change`` and write back atomically; return the new state.

    ``change`` may mutate the dict in place (returning None) or return a replacement. When the
    state is unchanged nothing is written. ``dump`` lays the file out (default: pretty JSON).
    """
    with locked(path):
        current = read_json(path, default=default)
        before = _fingerprint(current)
        result = change(current)
        new = current if result is None else result
        if _fingerprint(new) != before:
            write_json_atomic(path, new, mode=mode, dump=dump)
        return new


def _fingerprint(data: Any) -> str:
    # compact output runs on the C encoder; the indented one is pure Python and ~10x slower
    return json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


#: Leftover staging/backup directories older than this belong to a process that died.
STALE_AFTER_S = 24 * 3600


def sweep_stale(root: Path, *, older_than: float = STALE_AFTER_S) -> None:
    """Remove ``.staging-*`` / ``.backup-*`` dirs under ``root`` a killed process left behind."""
    cutoff = time.time() - older_than
    with contextlib.suppress(OSError):
        for p in root.iterdir():
            if p.name.startswith((".staging-", ".backup-")):
                with contextlib.suppress(OSError):
                    if p.lstat().st_mtime < cutoff:
                        remove_tree(p)


def remove_tree(path: Path) -> None:
    """Remove a file, symlink or directory tree if it exists (never following a symlink)."""
    if path.is_symlink() or path.is_file():
        path.unlink(missing_ok=True)
    elif path.exists():
        import shutil

        shutil.rmtree(path)


def _fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some filesystems refuse fsync on directories; the rename is still atomic
    finally:
        os.close(fd)
