"""The one exception tree of lemon-skills.

Every error a caller may want to catch derives from ``LemonSkillsError`` and formats its own
message from structured keyword fields::

    LemonSkillsError
     ├── ConfigError            unreadable or invalid configuration / state file
     │    └── StateUnavailable  the shared state database cannot be reached
     ├── ManifestError          a SKILL.md that cannot be parsed
     ├── SkillNotFound          no skill with that key is visible
     ├── InstallError           fetch / activation failed
     │    ├── SourceError       the source could not be resolved or fetched
     │    └── IntegrityError    hashes do not match the lock
     ├── TrustPolicyViolation   audit blocked or approval denied
     ├── SkillWriteError        an agent's skill write was refused (name, content, path, gate)
     ├── CommandError           a subprocess exited non-zero
     ├── ApprovalError          an approval cannot be found or decided
     │    └── ApprovalNotFound  no approval has that id
     ├── CuratorError           a curator pass or rollback could not run
     ├── ServeError             an HTTP server could not start (port in use, unknown host)
     ├── InvalidValue           a value given to a command is invalid (exit 2 at the CLI)
     └── McpError
          ├── McpConnectError   a server could not be started or reached
          ├── McpAuthError      OAuth failed
          │    └── McpAuthRequired  a 401 from a server without oauth config
          └── McpToolError      a tool, resource or prompt call failed
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any


class LemonSkillsError(Exception):
    """Base class of every domain error; ``str(err)`` is a complete, user-facing sentence."""

    hint: str | None = None
    #: What the command line exits with (2 marks a bad value, as click's usage errors do).
    exit_code: int = 1

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        if hint is not None:
            self.hint = hint


class ConfigError(LemonSkillsError):
    """A configuration or state file is unreadable, corrupt or invalid."""

    def __init__(self, reason: str, *, path: Path | None = None, hint: str | None = None) -> None:
        self.path = path
        self.reason = reason
        message = f"{path}: {reason}" if path is not None else reason
        super().__init__(message, hint=hint)


class StateUnavailable(ConfigError):
    """The state database (``LEMON_DATABASE_URL``) cannot be reached; nothing ran or was written.

    ``url`` never carries a password.
    """

    def __init__(self, url: str, what: str) -> None:
        self.url = url
        self.what = what
        super().__init__(
            f"cannot reach the state database {url}: {what}",
            hint="check LEMON_DATABASE_URL and the server; nothing was run or written locally",
        )


class ManifestError(LemonSkillsError):
    """A SKILL.md whose frontmatter cannot be read."""

    def __init__(self, reason: str, *, path: Path | None = None, field: str | None = None) -> None:
        self.path = path
        self.field = field
        self.reason = reason
        where = str(path) if path is not None else "SKILL.md"
        if field:
            where += f" (field {field!r})"
        super().__init__(f"{where}: {reason}")


class SkillNotFound(LemonSkillsError):
    """No visible skill has the requested key."""

    def __init__(self, key: str, *, suggestions: Sequence[str] = ()) -> None:
        self.key = key
        self.suggestions = tuple(suggestions)
        message = f"Skill not found: {key}"
        hint = None
        if self.suggestions:
            hint = "did you mean " + ", ".join(self.suggestions) + "?"
        else:
            hint = "run `lemon skill list` to see the skills that are visible here"
        super().__init__(message, hint=hint)


class InstallError(LemonSkillsError):
    """Installing, updating or uninstalling a skill failed; nothing was changed."""


class SourceError(InstallError):
    """A skill source could not be resolved or fetched."""


class IntegrityError(InstallError):
    """Installed files do not match their lock record."""


class TrustPolicyViolation(LemonSkillsError):
    """The audit blocked a bundle or an approval was denied."""


class SkillWriteError(LemonSkillsError):
    """A skill create/edit/patch/file write was refused; nothing on disk changed.

    ``reason`` is written for the model that asked: it says what to change and retry.
    """

    def __init__(self, reason: str, *, hint: str | None = None) -> None:
        self.reason = reason
        super().__init__(reason, hint=hint)


class CommandError(LemonSkillsError):
    """A subprocess failed."""

    def __init__(
        self, cmd: Sequence[str], *, returncode: int | None, stdout: str = "", stderr: str = ""
    ) -> None:
        self.cmd = tuple(cmd)
        self.returncode = returncode
        self.stdout = stdout
        self.stderr = stderr
        status = "timed out" if returncode is None else f"exited with {returncode}"
        tail = _telling_line(stderr)
        message = f"`{' '.join(self.cmd[:3])}` {status}"
        if tail:
            message += f": {tail}"
        super().__init__(message)


def _telling_line(stderr: str) -> str:
    """The line of a command's stderr that says what went wrong: the first ``fatal:`` or
    ``error:`` line (git ends its with advice such as "and the repository exists."), else the
    last line."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    first = next((ln for ln in lines if ln.lower().startswith(("fatal:", "error:"))), None)
    return first or (lines[-1] if lines else "")


class ApprovalError(LemonSkillsError):
    """An approval cannot be decided (already decided, expired, ambiguous id)."""

    def __init__(self, message: str, *, approval_id: str | None = None, hint: str | None = None):
        self.approval_id = approval_id
        super().__init__(message, hint=hint)


class ApprovalNotFound(ApprovalError):
    """No approval has the given id (or id prefix)."""

    def __init__(self, approval_id: str) -> None:
        super().__init__(
            f"Approval not found: {approval_id}",
            approval_id=approval_id,
            hint="run `lemon approvals list --all` to see every approval",
        )


class McpError(LemonSkillsError):
    """Base class of MCP failures; carries the server name when known."""

    def __init__(self, message: str, *, server: str | None = None, hint: str | None = None):
        self.server = server
        prefix = f"MCP server {server!r}: " if server else ""
        super().__init__(prefix + message, hint=hint)


class McpConnectError(McpError):
    """A server could not be started, reached or initialised."""


class McpAuthError(McpError):
    """OAuth discovery, token acquisition or refresh failed."""


class McpAuthRequired(McpAuthError):
    """The server answered 401 and no ``oauth`` is configured for it."""

    def __init__(self, *, server: str | None = None, requirement: Mapping[str, Any] | None = None):
        self.requirement = dict(requirement or {})
        issuers = [
            s for s in self.requirement.get("authorization_servers", ()) if isinstance(s, str)
        ]
        where = f" by {', '.join(issuers)}" if issuers else ""
        super().__init__(
            f"authorization required{where}",
            server=server,
            hint='add an "oauth" object to this server\'s entry (client credentials, or '
            "flow authorization_code_pkce with a loopback redirect_uri)",
        )


class McpToolError(McpError):
    """A tool, resource or prompt request failed or named something unknown."""


class McpInputRequired(McpError):
    """A call cannot go on until its 2026-07-28 host answers: ``result`` is the input-required
    result to send in its place (the host retries the call with the answer)."""

    def __init__(self, result: Any):
        super().__init__("the call needs the host's answer before it runs")
        self.result = result


class UsageError(RuntimeError):
    """The API was used incorrectly (a programming error, not a domain failure)."""


class CuratorError(LemonSkillsError):
    """A curator pass or rollback could not run (busy scope, unknown run, nothing to undo)."""

    def __init__(self, message: str, *, run_id: str | None = None, hint: str | None = None) -> None:
        self.run_id = run_id
        super().__init__(message, hint=hint)


class RemoteSkillError(LemonSkillsError):
    """A skill from a remote source (an MCP server) failed verification or could not be read;
    its content is never shown."""


class SchemaConversionError(LemonSkillsError):
    """A tool's input schema cannot be expressed in a model provider's schema dialect."""


class ServeError(LemonSkillsError):
    """An HTTP server could not start: the port is taken or out of reach, the host unknown."""


class InvalidValue(LemonSkillsError):
    """A value given to a command is invalid or refused (a bad ``HOST:PORT``, a network bind
    without tokens); the command line exits 2 as for any usage error."""

    exit_code = 2
