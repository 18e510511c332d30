"""Keep message payloads and session ids out of the SDK's client transport logs.

At DEBUG level the SDK's HTTP and SSE transports log every JSON-RPC message they send or
receive in full, which would put tool arguments and a server's sampling request (the prompt
text) into the host's logs, and at INFO they log the ``Mcp-Session-Id``. A filter on those
two loggers rewrites such records to the message's method and id; everything else passes
unchanged. A third filter keeps the stdio transport from printing a traceback for every stray
line a server writes to stdout. Installed once, when the first session opens.

``redact`` is the one rule for secrets in a server's target (a URL's password, a query's
``api_key=``, a ``--token=...`` or ``--token VALUE`` argument) and in the stderr lines a
server's failure is explained with (an ``Authorization: Bearer ...`` header, a token of a
well-known shape): listings, status, errors and these log records all show text through it.
"""

from __future__ import annotations

import functools
import logging
import re
import threading
from collections.abc import Sequence

TRANSPORT_LOGGERS = ("mcp.client.streamable_http", "mcp.client.sse")
STDIO_LOGGER = "mcp.client.stdio"
_PARSE_FAILURE = "Failed to parse JSONRPC message from server"
_PAYLOAD = re.compile(r"^(SSE message|Sending client message|Received server message): (.*)$", re.S)
_METHOD = re.compile(r"\bmethod='([^']*)'")
_ID = re.compile(r"\bid=('[^']*'|\d+)")
_lock = threading.Lock()

_MASK = "***"
#: A name that says its value is a secret (``api_key``, ``X-Token``, ``client_secret``, ...).
_SECRET_NAME = r"[\w.-]*(?:key|token|secret|passw(?:or)?d|pwd|credential|auth|signature)[\w.-]*"
#: ``scheme://user:password@`` (the password) or ``scheme://token@`` (the whole user part).
_USERINFO = re.compile(
    r"(?P<scheme>[a-z][a-z0-9+.-]*://)(?P<user>[^/@\s:]*)(?P<pw>:[^/@\s]*)?@", re.I
)
#: ``name=value`` in a query, an ``--option=value`` or an environment assignment.
_ASSIGNED = re.compile(rf"(?P<name>(?:^|(?<=[?&;\s]))-{{0,2}}{_SECRET_NAME}=)[^&#\s]*", re.I)
#: ``--option value``: the value after an option named like a secret.
_PAIR = re.compile(rf"(?P<opt>(?:^|(?<=\s))--?{_SECRET_NAME}\s+)(?!-)\S+", re.I)
_OPTION = re.compile(rf"--?{_SECRET_NAME}", re.I)
#: ``Authorization: Bearer X``, ``X-Api-Key: X``: a header or log field named like a secret.
_HEADER = re.compile(
    rf"(?P<name>\b{_SECRET_NAME}:\s+)(?:(?:Bearer|Basic|Token|DPoP)\s+)?[^\s,;|]+", re.I
)
#: A credential announced by its scheme, wherever it stands.
_BEARER = re.compile(r"\b(?P<scheme>Bearer|DPoP)\s+[\w.~+/-]{8,}=*")
#: Tokens whose shape gives them away (GitHub, OpenAI-style, Slack, GitLab, AWS key ids).
_KNOWN = re.compile(
    r"\b(?:gh[pousr]_\w{16,}|github_pat_\w{16,}|sk-[\w-]{16,}|xox[abposr]-[\w-]{10,}"
    r"|glpat-[\w-]{16,}|AKIA[0-9A-Z]{16})"
)


def redact(text: str) -> str:
    """``text`` with every secret a target or a log line may carry replaced by ``***``."""
    text = _USERINFO.sub(_userinfo, text)
    text = _ASSIGNED.sub(lambda m: m.group("name") + _MASK, text)
    text = _PAIR.sub(lambda m: m.group("opt") + _MASK, text)
    text = _HEADER.sub(lambda m: m.group("name") + _MASK, text)
    text = _BEARER.sub(lambda m: m.group("scheme") + " " + _MASK, text)
    return _KNOWN.sub(_MASK, text)


def redact_argv(args: Sequence[str]) -> list[str]:
    """``redact`` over a command's arguments, an ``--option VALUE`` pair spanning two."""
    out: list[str] = []
    for arg in args:
        secret_value = bool(out) and _OPTION.fullmatch(out[-1]) is not None
        out.append(_MASK if secret_value and not arg.startswith("-") else redact(arg))
    return out


def _userinfo(found: re.Match[str]) -> str:
    user = found.group("user")
    if found.group("pw") is None:
        return found.group("scheme") + (_MASK + "@" if user else "@")
    return f"{found.group('scheme')}{user}:{_MASK}@"


class RedactPayloads(logging.Filter):
    """Rewrites payload-carrying transport records to ``<what>: <method> id=<id>``."""

    def filter(self, record: logging.LogRecord) -> bool:
        text = record.getMessage()
        clean = redact(text)
        if clean != text:
            record.msg, record.args, text = clean, (), clean
        found = _PAYLOAD.match(text)
        if found is not None:
            method = _METHOD.search(found.group(2))
            ident = _ID.search(found.group(2))
            what = method.group(1) if method else "response"
            suffix = f" id={ident.group(1)}" if ident else ""
            record.msg, record.args = f"{found.group(1)}: {what}{suffix} (payload not logged)", ()
        elif text.startswith("Received session ID"):
            record.msg, record.args = "Received session ID (not logged)", ()
        return True


class QuietParseFailures(logging.Filter):
    """Turns the stdio transport's traceback for every stdout line that is not JSON-RPC into
    one DEBUG line: a server's stray prints are counted and shown in its status, and must not
    fill the host's stderr with tracebacks."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.msg != _PARSE_FAILURE:
            return True
        record.levelno, record.levelname = logging.DEBUG, "DEBUG"
        record.exc_info = record.exc_text = None
        record.msg = f"{_PARSE_FAILURE} (a stdout line that is not JSON-RPC; status counts them)"
        return logging.getLogger(record.name).isEnabledFor(logging.DEBUG)


def install() -> None:
    """Attach the filters to the SDK's transport loggers (idempotent, thread-safe)."""
    with _lock:
        _install_once()


@functools.cache
def _install_once() -> None:
    for name in TRANSPORT_LOGGERS:
        logging.getLogger(name).addFilter(RedactPayloads())
    logging.getLogger(STDIO_LOGGER).addFilter(QuietParseFailures())
