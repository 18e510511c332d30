"""One MCP server's connection over its life: opening it (connect, factories), keeping it
(manager, handle, runtime, the sync bridge in _loop), timing its requests (deadline) and what
it says on stderr (errlog, logs)."""
