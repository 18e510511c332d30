"""The skills side never pays for the MCP SDK's import."""

from __future__ import annotations

import subprocess
import sys


def test_skills_cli_and_core_do_not_import_the_mcp_sdk():
    code = (
        "import sys, lemon_skills, lemon_skills.tools, lemon_skills.settings, lemon_skills.mcp\n"
        "from lemon_skills.cli import main\n"
        "main(['skill', 'list', '--json'])\n"
        "assert not any(m == 'mcp' or m.startswith('mcp.') for m in sys.modules), 'SDK imported'\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr


def test_mcp_package_exports_are_sorted_and_resolve():
    import lemon_skills.mcp as pkg

    assert pkg.__all__ == sorted(pkg.__all__)
    for name in pkg.__all__:
        assert getattr(pkg, name) is not None
