"""Misbehaving stdio "servers" (no SDK: they never get that far).

``crash``: writes a reason to stderr and exits 3. ``leak``: the same with credentials in the
lines it writes (what a server's debug output may carry). ``hang``: reads nothing, answers nothing.
``garbage``: writes lines that are not JSON-RPC to stdout and never answers.
"""

from __future__ import annotations

import sys
import time

#: The secrets ``leak`` writes (a bearer token, a GitHub token, a URL's password).
LEAKED = ("sk-live-4f9a8b7c6d5e4f3a2b1c", "ghp_Z9y8X7w6V5u4T3s2R1q0P9o8", "hunter2-pw")


def main() -> None:
    mode = sys.argv[1]
    if mode == "crash":
        print("fatal: bad configuration (planned crash)", file=sys.stderr, flush=True)
        sys.exit(3)
    if mode == "leak":
        print(f"fatal: upstream said 401 to Authorization: Bearer {LEAKED[0]}", file=sys.stderr)
        print(f"retrying with {LEAKED[1]} via https://bot:{LEAKED[2]}@git.example", file=sys.stderr)
        sys.exit(3)
    if mode == "garbage":
        for i in range(5):
            print(f"hello, I am not JSON {i}", flush=True)
    time.sleep(600)


if __name__ == "__main__":
    main()
