"""``lemon mcp gateway``: one MCP server in front of every configured MCP server and the
project's skills, applying lemon's policy (tool search, approvals, pinning, result caps) for
any MCP host. Built from ``McpSource`` (upstreams, policy) and ``lemon mcp serve`` (skills).
"""
