"""``ApprovalStore``: approvals created, decided, spent and waited for, in the SQLite file
under the agent dir or in the shared database (``lemon_skills.state``)."""

from __future__ import annotations

import builtins
import contextlib
import json
import sqlite3
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread

from lemon_skills import state
from lemon_skills.approvals import table
from lemon_skills.approvals.records import (
    DEFAULT_EXPIRES_IN_S,
    Approval,
    ApprovalContext,
    ApprovalStatus,
    Decision,
)
from lemon_skills.errors import ApprovalError, ApprovalNotFound
from lemon_skills.paths import agent_dir
from lemon_skills.state.notify import Subscription
from lemon_skills.state.postgres import Postgres

#: How often a waiter on the shared database re-reads without a notification (a safety net).
_RECHECK_S = 5.0
#: How often an async waiter checks its subscription (an in-memory flag, no I/O).
_ASYNC_TICK_S = 0.02
_POLL_FIRST_S = 0.02
_POLL_MAX_S = 0.25


class ApprovalStore:
    """The approvals database; the path is resolved at call time when not given.

    Without a ``path`` the configured backend is used (the shared database when one is
    configured, else ``<agent>/approvals.db``); a ``path`` always means that SQLite file.
    """

    def __init__(
        self,
        path: Path | None = None,
        *,
        clock: Callable[[], float] = time.time,
        database: Postgres | None = None,
    ):
        self._path = path
        self._clock = clock
        self._database = database

    def shared(self) -> Postgres | None:
        """The shared database this store uses, or None for the SQLite file."""
        if self._path is not None:
            return None
        return self._database if self._database is not None else state.database()

    @property
    def path(self) -> Path:
        """``<agent>/approvals.db`` unless a path was given."""
        return self._path if self._path is not None else agent_dir() / "approvals.db"

    def create(
        self,
        tool: str,
        action: Mapping[str, Any],
        *,
        rationale: str,
        context: ApprovalContext | None = None,
        expires_in: float = DEFAULT_EXPIRES_IN_S,
    ) -> Approval:
        """Record a new pending approval and return it (without waiting)."""
        if expires_in <= 0:
            raise ValueError("expires_in must be positive")
        now = self._clock()
        approval = Approval(
            id=uuid.uuid4().hex,
            tool=tool,
            action=dict(action),
            rationale=rationale,
            context=context or ApprovalContext(),
            created_at=now,
            expires_at=now + expires_in,
            status="pending",
        )
        payload = json.dumps(approval.action, sort_keys=True, ensure_ascii=False, default=str)
        with self._connect() as conn:
            conn.execute(
                f"INSERT INTO approvals ({table.COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (
                    approval.id,
                    tool,
                    payload,
                    rationale,
                    approval.context.run_id,
                    approval.context.session_key,
                    approval.context.agent_id,
                    approval.created_at,
                    approval.expires_at,
                    "pending",
                    None,
                    None,
                    None,
                ),
            )
        return approval

    def get(self, approval_id: str) -> Approval:
        """Return the approval with this id or unique id prefix.

        Raises:
            ApprovalNotFound: no approval matches.
            ApprovalError: the prefix matches several approvals.
        """
        with self._connect_existing(approval_id) as conn:
            return self._check(conn, approval_id)

    def list(
        self,
        *,
        status: ApprovalStatus | None = "pending",
        run_id: str | None = None,
        tool: str | None = None,
    ) -> builtins.list[Approval]:
        """Approvals, oldest first; pending ones by default (``status=None`` for every one)."""
        where, args = [], []
        for column, value in (("status", status), ("run_id", run_id), ("tool", tool)):
            if value is not None:
                where.append(f"{column} = ?")
                args.append(value)
        if self.shared() is None and not self.path.exists():  # listing must not create it
            return []
        sql = f"SELECT {table.COLUMNS} FROM approvals"
        if where:
            sql += " WHERE " + " AND ".join(where)
        with self._connect() as conn:
            self._expire_overdue(conn)
            rows = conn.execute(sql + " ORDER BY created_at, id", args).fetchall()
        return [table.from_row(r) for r in rows]

    def approve(
        self, approval_id: str, *, by: str | None = None, reason: str | None = None
    ) -> Approval:
        """Approve a pending approval (idempotent for one already approved).

        Raises:
            ApprovalNotFound: no such approval.
            ApprovalError: it was denied, expired or cancelled.
        """
        return self.decide(approval_id, "approved", by=by, reason=reason)

    def deny(
        self, approval_id: str, *, by: str | None = None, reason: str | None = None
    ) -> Approval:
        """Deny a pending approval (idempotent for one already denied)."""
        return self.decide(approval_id, "denied", by=by, reason=reason)

    def decide(
        self, approval_id: str, decision: Decision, *, by: str | None, reason: str | None = None
    ) -> Approval:
        """Record ``decision`` on a pending approval; see :meth:`approve`."""
        with self._connect_existing(approval_id) as conn:
            current = self._check(conn, approval_id)
            if current.status == decision:
                return current
            if not current.pending:
                raise ApprovalError(
                    f"Approval {current.id} is already {current.status}",
                    approval_id=current.id,
                    hint="a decided or expired approval cannot change; the caller must ask again",
                )
            cur = conn.execute(
                "UPDATE approvals SET status = ?, decided_by = ?, decided_at = ?, reason = ? "
                "WHERE id = ? AND status = 'pending'",
                (decision, by or "api", self._clock(), reason, current.id),
            )
            if cur.rowcount != 1:  # another process decided between our read and write
                return self.decide(approval_id, decision, by=by, reason=reason)
            table.announce(conn, current.id)
            return table.lookup(conn, current.id)

    def spend(self, approval_id: str) -> bool:
        """Mark an approval that runs one call as ``used``; True for the one caller (of any
        process on the same store) that moved it from ``approved``, so it runs its call once.

        Raises:
            ApprovalNotFound: no such approval.
        """
        with self._connect_existing(approval_id) as conn:
            cur = conn.execute(
                "UPDATE approvals SET status = 'used' WHERE id = ? AND status = 'approved'",
                (approval_id,),
            )
            if cur.rowcount != 1:
                return False
            table.announce(conn, approval_id)
            return True

    def cancel(self, approval_id: str) -> Approval:
        """Withdraw a pending approval (the requester gave up); decided ones stay as they are."""
        with self._connect_existing(approval_id) as conn:
            cur = conn.execute(
                "UPDATE approvals SET status = 'cancelled', decided_at = ? "
                "WHERE id = ? AND status = 'pending'",
                (self._clock(), approval_id),
            )
            if cur.rowcount == 1:
                table.announce(conn, approval_id)
            return table.lookup(conn, approval_id)

    def wait(self, approval_id: str, *, timeout: float | None = None) -> Approval:
        """Block until the approval is decided or expires (or ``timeout`` seconds pass).

        Returns the approval as it then is: decided, ``expired``, or still ``pending`` when
        ``timeout`` ran out before its expiry. Between checks only ``PRAGMA data_version`` is
        read, which changes when another connection commits.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        db = self.shared()
        if db is not None:
            listener = db.listen(table.CHANNEL)
            try:
                return self._wait_notified(listener, approval_id, deadline, _RECHECK_S)
            finally:
                listener.close()
        delay = _POLL_FIRST_S
        seen = None
        with self._connect_existing(approval_id) as conn:
            current = self._check(conn, approval_id)
            while current.pending:
                version = conn.execute("PRAGMA data_version").fetchone()[0]
                if version != seen or self._clock() >= current.expires_at:
                    seen = version
                    current = self._check(conn, current.id)
                    if not current.pending:
                        break
                pause = self._pause(current, delay, deadline, time.monotonic())
                if pause is None:
                    break
                time.sleep(pause)
                delay = min(delay * 1.5, _POLL_MAX_S)
        return current

    def _wait_notified(
        self, listener: Subscription, approval_id: str, deadline: float | None, slice_s: float
    ) -> Approval:
        """Wait on the shared database: re-read after each notification (or ``slice_s``)."""
        current = self.get(approval_id)
        while current.pending:
            pause = self._pause(current, slice_s, deadline, time.monotonic())
            if pause is None:
                break
            listener.wait(pause)
            current = self.get(current.id)
        return current

    async def await_decision(self, approval_id: str, *, timeout: float | None = None) -> Approval:
        """Async :meth:`wait`: polls from a worker thread without blocking the event loop."""
        db = await anyio.to_thread.run_sync(self.shared)
        if db is not None:
            return await self._await_notified(db, approval_id, timeout)
        deadline = None if timeout is None else anyio.current_time() + timeout
        delay = _POLL_FIRST_S
        current = await anyio.to_thread.run_sync(self.get, approval_id)
        while current.pending:
            pause = self._pause(current, delay, deadline, anyio.current_time())
            if pause is None:
                break
            await anyio.sleep(pause)
            delay = min(delay * 1.5, _POLL_MAX_S)
            current = await anyio.to_thread.run_sync(self.get, current.id)
        return current

    async def _await_notified(
        self, db: Postgres, approval_id: str, timeout: float | None
    ) -> Approval:
        """Check the process's subscription between short async sleeps (no thread is held
        while waiting) and re-read the approval when a notification arrived."""
        deadline = None if timeout is None else time.monotonic() + timeout
        listener = await anyio.to_thread.run_sync(db.listen, table.CHANNEL)
        try:
            current = await anyio.to_thread.run_sync(self.get, approval_id)
            while current.pending:
                pause = self._pause(current, _RECHECK_S, deadline, time.monotonic())
                if pause is None:
                    break
                until = time.monotonic() + pause
                while not listener.poll() and time.monotonic() < until:
                    await anyio.sleep(min(_ASYNC_TICK_S, max(0.0, until - time.monotonic())))
                current = await anyio.to_thread.run_sync(self.get, current.id)
        finally:
            listener.close()
        return current

    def _pause(
        self, current: Approval, delay: float, deadline: float | None, now: float
    ) -> float | None:
        """How long to sleep before the next check; None when the caller's timeout ran out."""
        pause = min(delay, max(0.0, current.expires_at - self._clock()) + 0.001)
        if deadline is None:
            return pause
        remaining = deadline - now
        return None if remaining <= 0 else min(pause, remaining)

    def request(
        self,
        tool: str,
        action: Mapping[str, Any],
        *,
        rationale: str,
        context: ApprovalContext | None = None,
        timeout: float = DEFAULT_EXPIRES_IN_S,
    ) -> Approval:
        """Create an approval that expires after ``timeout`` seconds and wait for the outcome.

        An interrupted wait cancels the approval so nobody approves a request nobody awaits.
        """
        approval = self.create(
            tool, action, rationale=rationale, context=context, expires_in=timeout
        )
        try:
            return self.wait(approval.id)
        finally:
            self.cancel(approval.id)

    async def arequest(
        self,
        tool: str,
        action: Mapping[str, Any],
        *,
        rationale: str,
        context: ApprovalContext | None = None,
        timeout: float = DEFAULT_EXPIRES_IN_S,
    ) -> Approval:
        """Async :meth:`request`."""
        approval = await anyio.to_thread.run_sync(
            lambda: self.create(
                tool, action, rationale=rationale, context=context, expires_in=timeout
            )
        )
        try:
            return await self.await_decision(approval.id)
        finally:
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(self.cancel, approval.id)

    def _check(self, conn: table.Sql, approval_id: str) -> Approval:
        """Look one approval up, marking it expired first when its time has passed."""
        current = table.lookup(conn, approval_id)
        if current.pending and current.expires_at <= self._clock():
            conn.execute(
                "UPDATE approvals SET status = 'expired', decided_at = expires_at "
                "WHERE id = ? AND status = 'pending'",
                (current.id,),
            )
            current = table.lookup(conn, current.id)
        return current

    def _expire_overdue(self, conn: table.Sql) -> None:
        conn.execute(
            "UPDATE approvals SET status = 'expired', decided_at = expires_at "
            "WHERE status = 'pending' AND expires_at <= ?",
            (self._clock(),),
        )

    def _connect_existing(self, approval_id: str) -> contextlib.AbstractContextManager[table.Sql]:
        """Connect for a lookup by id: without a database no approval exists, and none is made."""
        if self.shared() is None and not self.path.exists():
            raise ApprovalNotFound(approval_id)
        return self._connect()

    @contextlib.contextmanager
    def _connect(self) -> Iterator[table.Sql]:
        db = self.shared()
        if db is not None:
            with db.connection() as shared:
                yield shared
            return
        path = self.path
        try:
            conn = table.open_file(path)
        except sqlite3.DatabaseError as exc:
            raise table.corrupt(path, exc) from exc
        try:
            yield conn
        except sqlite3.DatabaseError as exc:
            raise table.corrupt(path, exc) from exc
        finally:
            conn.close()
