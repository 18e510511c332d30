"""``lemon mcp serve``: serve a directory's skills to any MCP host (see ``server``)."""
