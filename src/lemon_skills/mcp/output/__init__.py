"""What comes back from a server, made fit for the model: results as ToolResults, oversized
ones spilled whole to a file, and the tables of `lemon mcp list/status` (report)."""
