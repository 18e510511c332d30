"""Pure text checks shared by the skill audit and the MCP layer: invisible characters,
look-alike names, risky-instruction patterns and the token estimate of a text."""
