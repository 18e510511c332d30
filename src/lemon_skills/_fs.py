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
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from lemon_skills.errors import ConfigError

if sys.platform != "win32":  # Windows has no flock: transients are swept by age only
    import fcntl

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


def write_bytes_atomic(
    path: Path,
    data: bytes | Iterable[bytes | memoryview],
    *,
    mode: int | None = None,
    durable: bool = True,
) -> None:
    """Replace ``path`` with ``data`` atomically (temp file, fsync, rename, fsync dir).

    ``durable=False`` skips the fsyncs: for caches, where a file lost to a crash is rebuilt
    and waiting for the disk would cost more than the cache saves.

    Temp files a killed writer left in the same directory are removed first (``sweep_stale``).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    sweep_stale(path.parent)
    while True:
        fd, tmp = _create_temp(path)
        if _claim(fd, tmp):
            break
        os.close(fd)  # a sweeper removed it between creation and claim: take another name
    try:
        if mode is not None:
            os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as fh:
            if isinstance(data, bytes):
                fh.write(data)
            else:
                fh.writelines(data)
            if durable:
                fh.flush()
                os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    if durable:
        _fsync_dir(path.parent)


#: How ``_create_temp`` opens: a new file only (never an existing one, never via a symlink).
_TEMP_FLAGS = (
    os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
)


def _create_temp(path: Path) -> tuple[int, str]:
    """Create a new private temp file beside ``path``: what ``tempfile.mkstemp`` does,
    without importing ``tempfile`` (and ``random``, ``shutil``) into a command that writes
    one cache file on its way to answering."""
    while True:
        tmp = os.path.join(path.parent, f".{path.name}.{os.urandom(6).hex()}{TEMP_SUFFIX}")
        try:
            return os.open(tmp, _TEMP_FLAGS, 0o600), tmp
        except FileExistsError:
            continue


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
        raise ConfigError(
            f"cannot read: {exc.strerror}",
            path=path,
            hint=f"{path.parent} must be a directory you may read and write",
        ) from exc
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


def refuse_newer(state: JsonDict, known: int, *, path: Path) -> None:
    """Refuse to rewrite a state file a newer release wrote: it may hold what this one drops.

    Raises:
        ConfigError: ``state["version"]`` is above ``known``.
    """
    version = state.get("version")
    if isinstance(version, int) and not isinstance(version, bool) and version > known:
        raise ConfigError(
            f"written by a newer lemon-skills (format version {version}; this release knows "
            f"up to {known}); refusing to change it",
            path=path,
            hint="upgrade lemon-skills (pip install -U lemon-skills), or use the newer release",
        )


def _fingerprint(data: Any) -> str:
    # compact output runs on the C encoder; the indented one is pure Python and ~10x slower
    return json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


#: Suffix of the temp files of ``write_bytes_atomic``.
TEMP_SUFFIX = ".lemon-tmp"
#: A ``.backup-*`` dir may hold the only copy of a skill whose replacement was interrupted, so
#: one that is not empty is kept this long for a person to recover it.
STALE_AFTER_S = 24 * 3600


@contextlib.contextmanager
def scratch_dir(parent: Path, prefix: str) -> Iterator[Path]:
    """A new private directory in ``parent`` (name starts with ``prefix``), removed on exit.

    The directory is claimed (an exclusive ``flock`` on it) for as long as it exists, so the
    next writer in ``parent`` can tell it from one a killed process left behind and sweep it.
    """
    import tempfile

    parent.mkdir(parents=True, exist_ok=True)
    sweep_stale(parent)
    while True:
        path = tempfile.mkdtemp(prefix=prefix, dir=parent)
        fd = os.open(path, os.O_RDONLY)
        if _claim(fd, path):
            break
        os.close(fd)
    try:
        yield Path(path)
    finally:
        try:
            remove_tree(Path(path))
        finally:
            os.close(fd)


def claim_file(path: Path, *, stale_s: float, now: float | None = None) -> bool:
    """Claim one piece of background work by creating ``path``: False while another process's
    claim stands (parallel commands must not each start the work). The work removes the file
    when done; a claim older than ``stale_s`` (work that died) is taken over. An unwritable
    directory claims nothing."""
    now = time.time() if now is None else now
    for _ in range(2):
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
            return True
        except FileExistsError:
            try:
                if now - path.stat().st_mtime < stale_s:
                    return False
                path.unlink()
            except FileNotFoundError:
                continue
        except OSError:
            return False
    return False


def sweep_stale(root: Path, *, older_than: float = STALE_AFTER_S) -> None:
    """Remove the staging dirs and temp files in ``root`` that a killed process left behind.

    Their owner held an exclusive ``flock`` on them until it died (the kernel drops it then),
    so an entry that can be locked now has no live writer, however young it is. A ``.backup-``
    dir is removed when empty, else only after ``older_than`` seconds (it may be the only copy
    of a skill). Without ``flock`` (Windows) every transient waits ``older_than``.
    """
    try:
        names = os.listdir(root)
    except OSError:
        return
    cutoff = time.time() - older_than
    for name in names:
        if name.startswith(".staging-") or name.endswith(TEMP_SUFFIX):
            _reap(os.path.join(root, name), cutoff, keep_unless_old=False)
        elif name.startswith(".backup-"):
            _reap(os.path.join(root, name), cutoff, keep_unless_old=True)


def _claim(fd: int, path: str) -> bool:
    """Lock ``fd`` exclusively; False when ``path`` no longer names it (a sweeper took it)."""
    if sys.platform == "win32":
        return True
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        return os.fstat(fd).st_ino == os.lstat(path).st_ino
    except FileNotFoundError:
        return False


def _reap(path: str, cutoff: float, *, keep_unless_old: bool) -> None:
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return
    try:
        if sys.platform == "win32":
            if os.fstat(fd).st_mtime < cutoff:
                remove_tree(Path(path))
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return  # a live writer holds it
        st = os.fstat(fd)
        if st.st_ino != os.lstat(path).st_ino:
            return
        if keep_unless_old and st.st_mtime >= cutoff and os.listdir(path):
            return
        remove_tree(Path(path))
    except OSError:
        pass  # gone already, or not ours to remove: the next writer tries again
    finally:
        os.close(fd)


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
