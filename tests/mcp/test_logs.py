from __future__ import annotations

import logging
import sys

from lemon_skills.mcp.session import logs

#: What the SDK's stdio transport logs for a stdout line that is not JSON-RPC.
SDK_PARSE_FAILURE = "Failed to parse JSONRPC message from server"


def _record(msg, *args, name="mcp.client.streamable_http", level=logging.DEBUG):
    return logging.LogRecord(name, level, __file__, 1, msg, args, None)


def test_message_payloads_are_reduced_to_method_and_id():
    record = _record(
        "Sending client message: %s",
        "root=JSONRPCRequest(method='tools/call', params={'arguments': {'password': 'x'}}, id=7)",
    )
    assert logs.RedactPayloads().filter(record)
    assert record.getMessage() == "Sending client message: tools/call id=7 (payload not logged)"


def test_responses_without_a_method_are_named_response():
    record = _record(
        "Received server message: %s", "JSONRPCResponse(id='a1', result={'secret': 1})"
    )
    logs.RedactPayloads().filter(record)
    assert record.getMessage() == "Received server message: response id='a1' (payload not logged)"


def test_session_ids_are_not_logged_and_other_records_pass_unchanged():
    session = _record("Received session ID: %s", "abc-123", level=logging.INFO)
    logs.RedactPayloads().filter(session)
    assert "abc-123" not in session.getMessage()
    other = _record("Connected to %s", "https://x/mcp")
    assert logs.RedactPayloads().filter(other)
    assert other.getMessage() == "Connected to https://x/mcp"


def test_stdout_parse_failures_become_one_debug_line_without_traceback():
    try:
        raise ValueError("not json")
    except ValueError:
        exc_info = sys.exc_info()
    record = logging.LogRecord(
        logs.STDIO_LOGGER, logging.ERROR, __file__, 1, SDK_PARSE_FAILURE, (), exc_info
    )
    logger = logging.getLogger(logs.STDIO_LOGGER)
    previous = logger.level
    logger.setLevel(logging.WARNING)
    try:
        assert logs.QuietParseFailures().filter(record) is False
        logger.setLevel(logging.DEBUG)
        assert logs.QuietParseFailures().filter(record) is True
    finally:
        logger.setLevel(previous)
    assert (record.levelno, record.exc_info) == (logging.DEBUG, None)
    assert "status counts them" in record.getMessage()
