"""Child process for the usage concurrency tests: ``python usage_worker.py MODE ARG N``.

Modes: ``loads`` records N loads into the sidecar ARG; ``loop`` records loads forever;
``hang`` blocks inside the atomic write (after the temp file is written, before the rename);
``read_skill`` calls the read_skill tool N times with cwd ARG.
"""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

from lemon_skills.skills.usage.store import UsageStore

LOAD = {"result": "ok", "key": "shared", "view": "full", "source": "global"}


def main() -> None:
    mode, arg, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    if mode == "read_skill":
        from lemon_skills.tools import ToolContext, read_skill

        for i in range(n):
            r = read_skill.call(
                {"key": "shared"}, ToolContext(cwd=arg, tool_call_id=f"{os.getpid()}-{i}")
            )
            assert not r.is_error, r.text
        return
    store = UsageStore(Path(arg))
    if mode == "loads":
        for _ in range(n):
            store.record_load(LOAD)
    elif mode == "loop":
        while True:
            store.record_load(LOAD)
    elif mode == "hang":
        real_replace = os.replace

        def replace(src: str, dst: str) -> None:
            if str(dst) == arg:
                print("in-write", flush=True)
                threading.Event().wait()  # the parent kills us here
            real_replace(src, dst)

        os.replace = replace  # type: ignore[assignment]
        store.record_load(LOAD)


if __name__ == "__main__":
    main()
