"""LISTEN/NOTIFY for a whole process: one listening connection per database, shared by every
waiter, so a gateway with many calls awaiting approval holds one connection, not one each.

A background thread owns the connection: it runs the ``LISTEN`` statements subscribers ask for
and wakes the subscribers of a channel when a notification arrives. :meth:`Hub.subscribe`
returns only once the channel is listened to, so a waiter that reads its state after
subscribing cannot miss a change made in between. When the connection fails every subscriber
is woken with the error (its next wait raises it) and the next subscription reconnects.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from lemon_skills.errors import LemonSkillsError, StateUnavailable

if TYPE_CHECKING:
    import psycopg

#: How long the thread blocks waiting for a notification before it runs new LISTENs.
_TICK_S = 0.05


class Subscription:
    """One waiter's interest in a channel: woken by each notification on it."""

    def __init__(self, hub: Hub, channel: str) -> None:
        self.channel = channel
        self._hub = hub
        self._event = threading.Event()
        self._error: LemonSkillsError | None = None

    def wait(self, timeout: float) -> bool:
        """Block up to ``timeout`` seconds; True when a notification arrived meanwhile.

        Raises:
            StateUnavailable: the listening connection failed.
        """
        fired = self._event.wait(max(0.0, timeout))
        return self.poll() or fired

    def poll(self) -> bool:
        """Whether a notification arrived since the last check (never blocks)."""
        fired = self._event.is_set()
        self._event.clear()
        if self._error is not None:
            raise self._error
        return fired

    def close(self) -> None:
        """Stop receiving notifications."""
        self._hub.unsubscribe(self)

    def wake(self, error: LemonSkillsError | None = None) -> None:
        if error is not None:
            self._error = error
        self._event.set()


class Hub:
    """The listening connection of one database in this process."""

    def __init__(
        self,
        connect: Callable[[], psycopg.Connection[Any]],
        unavailable: Callable[[BaseException], StateUnavailable],
        timeout: float,
    ) -> None:
        self._connect = connect
        self._unavailable = unavailable
        self._timeout = timeout
        self._lock = threading.Lock()
        self._subs: dict[str, set[Subscription]] = {}
        self._wanted: dict[str, threading.Event] = {}
        self._listening: set[str] = set()
        self._thread: threading.Thread | None = None
        self._failure: LemonSkillsError | None = None
        self._closed = threading.Event()

    def subscribe(self, channel: str) -> Subscription:
        """Listen on ``channel`` (once per process) and return a subscription to it.

        Raises:
            StateUnavailable: the database cannot be reached.
        """
        sub = Subscription(self, channel)
        with self._lock:
            self._subs.setdefault(channel, set()).add(sub)
            ready = channel in self._listening
            if not ready:
                listened = self._wanted.setdefault(channel, threading.Event())
                if self._thread is None:
                    self._failure = None
                    self._closed.clear()
                    self._thread = threading.Thread(
                        target=self._run, name="lemon-state-listen", daemon=True
                    )
                    self._thread.start()
        if not ready and not (listened.wait(self._timeout + 1) and channel in self._listening):
            self.unsubscribe(sub)
            raise self._failure or StateUnavailable("the listening connection", "timed out")
        return sub

    def unsubscribe(self, sub: Subscription) -> None:
        with self._lock:
            self._subs.get(sub.channel, set()).discard(sub)

    def close(self) -> None:
        """Stop the thread (it closes its connection)."""
        self._closed.set()

    def _run(self) -> None:
        from psycopg import Error, sql

        conn = None
        try:
            conn = self._connect()
            while not self._closed.is_set():
                wanted = self._take_wanted()
                if wanted is None:
                    return
                for channel, listened in wanted:
                    conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(channel)))
                    with self._lock:
                        self._listening.add(channel)
                    listened.set()
                for note in conn.notifies(timeout=_TICK_S):
                    with self._lock:
                        subs = list(self._subs.get(note.channel, ()))
                    for sub in subs:
                        sub.wake()
        except LemonSkillsError as exc:
            self._fail(exc)
        except Error as exc:
            self._fail(self._unavailable(exc))
        finally:
            self._retire()
            if conn is not None:
                with contextlib.suppress(Exception):
                    conn.close()

    def _take_wanted(self) -> list[tuple[str, threading.Event]] | None:
        """The channels to start listening on; None when nobody listens any more (the thread
        then retires under the same lock a new subscriber takes, so none is left unserved)."""
        with self._lock:
            if not self._wanted and not any(self._subs.values()):
                self._retire_locked()
                return None
            wanted, self._wanted = list(self._wanted.items()), {}
        return wanted

    def _retire(self) -> None:
        with self._lock:
            self._retire_locked()

    def _retire_locked(self) -> None:
        if self._thread is threading.current_thread():
            self._thread = None
            self._listening.clear()

    def _fail(self, error: LemonSkillsError) -> None:
        with self._lock:
            self._failure = error
            subs = [s for group in self._subs.values() for s in group]
            self._subs.clear()
            wanted, self._wanted = list(self._wanted.values()), {}
        for sub in subs:
            sub.wake(error)
        for listened in wanted:
            listened.set()
