"""MCP servers as a tool source: OAuth, sampling policy and the client layer built on the SDK."""
