"""Installing an adapter's framework costs nothing to hosts that do not use it."""

from __future__ import annotations

import subprocess
import sys

FRAMEWORKS = ("langchain", "langchain_core", "langgraph", "anthropic")


def test_importing_lemon_imports_no_framework():
    code = (
        "import sys, lemon_skills, lemon_skills.integrations, lemon_skills.integrations.turn\n"
        f"print(sorted({{m.split('.')[0] for m in sys.modules}} & set({FRAMEWORKS!r})))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
