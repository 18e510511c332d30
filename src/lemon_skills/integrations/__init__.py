"""lemon's skills, MCP tools and approval policy inside agent frameworks, one module each.

Each module imports its framework, so import it only with that framework installed
(``pip install 'lemon-skills[langchain]'``, ``[anthropic]``...); ``import lemon_skills``
imports none of them.
"""
