"""What servers are configured: the entry records (``entries``), parsing and validation of
``mcp.json`` shapes (``parse``) and the per-directory merge of project, global and programmatic
config (``resolve``)."""
