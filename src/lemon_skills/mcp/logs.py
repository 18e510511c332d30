"""Keep message payloads and session ids out of the SDK's client transport logs.

At DEBUG level the SDK's HTTP and SSE transports log every JSON-RPC message they send or
receive in full, which would put tool arguments and a server's sampling request (the prompt
text) into the host's logs, and at INFO they log the ``Mcp-Session-Id``. A filter on those
two loggers rewrites such records to the message's method and id; everything else passes
unchanged. A third filter keeps the stdio transport from printing a traceback for every stray
line a server writes to stdout. Installed once, when the first session opens.
"""

from __future__ import annotations

import functools
import logging
import re
import threading

TRANSPORT_LOGGERS = ("mcp.client.streamable_http", "mcp.client.sse")
STDIO_LOGGER = "mcp.client.stdio"
_PARSE_FAILURE = "Failed to parse JSONRPC message from server"
_PAYLOAD = re.compile(r"^(SSE message|Sending client message|Received server message): (.*)$", re.S)
_METHOD = re.compile(r"\bmethod='([^']*)'")
_ID = re.compile(r"\bid=('[^']*'|\d+)")
_lock = threading.Lock()


class RedactPayloads(logging.Filter):
    """Rewrites payload-carrying transport records to ``<what>: <method> id=<id>``."""

    def filter(self, record: logging.LogRecord) -> bool:
        text = record.getMessage()
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
