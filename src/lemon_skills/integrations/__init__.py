"""lemon's skills and MCP tools inside agent frameworks.

The framework-neutral core is ``turn`` (``Lemon``: one agent's skills block, tools and MCP
connections, per request), ``policy`` (whether an MCP call waits for approval, and running it
once approved) and ``results`` (a tool result in the parts every framework has: text, images,
an error flag). Each framework's adapter is one module beside them (``pydantic_ai``,
``openai_agents``, ...) that imports its framework only when it is itself imported; nothing in
``lemon_skills`` imports an adapter.
"""
