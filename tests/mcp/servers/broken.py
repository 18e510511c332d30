"""Misbehaving stdio "servers" (no SDK: they never get that far).

``crash``: writes a reason to stderr and exits 3. ``hang``: reads nothing, answers nothing.
``garbage``: writes lines that are not JSON-RPC to stdout and never answers.
"""

from __future__ import annotations

import sys
import time


def main() -> None:
    mode = sys.argv[1]
    if mode == "crash":
        print("fatal: bad configuration (planned crash)", file=sys.stderr, flush=True)
        sys.exit(3)
    if mode == "garbage":
        for i in range(5):
            print(f"hello, I am not JSON {i}", flush=True)
    time.sleep(600)


if __name__ == "__main__":
    main()
