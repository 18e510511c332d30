"""A server with one destructive tool that leaves a trace: ``drop_table(table)`` appends a line
to ``$MARKER_FILE`` each time it really runs; ``count_rows(table)`` is read-only."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations


def build() -> MCPServer[Any]:
    server: MCPServer[Any] = MCPServer(name="Marker Fixture", log_level="WARNING")

    @server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True))
    def drop_table(table: str) -> str:
        """Drop a database table and every row in it."""
        with Path(os.environ["MARKER_FILE"]).open("a", encoding="utf-8") as fh:
            fh.write(f"dropped {table}\n")
        return f"dropped {table}"

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def count_rows(table: str) -> str:
        """Count the rows of a database table."""
        return f"{table}: 3 rows"

    return server


if __name__ == "__main__":
    build().run()
