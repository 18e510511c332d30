"""Skills an agent writes: the rules a new or edited skill must meet and the operations
(create, edit, patch, delete, files) behind the ``skill_manage`` tool."""
