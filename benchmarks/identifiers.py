"""Identifiers as real requests carry them, appended to labelled requests (seeded, repeatable).

    python benchmarks/identifiers.py [--seed 30] [-n 12]

Each request gets one of: a ticket id (``#4821``, ``OPS-4821``), a PR number (``PR#482``,
``GH-482``, ``!482``), a port (``:5173``, ``localhost:8080``, ``127.0.0.1:9000``), a version
(``v2.14.3``, ``3.12.1``, ``1.0.0-rc2``), a commit hash (7 to 40 hex digits), a path
(``src/db/0042_init.sql``, ``~/work/app/main.py``) or a URL with an id
(``https://example.test/issues/4821``).
``retrieval_eval.py --identifiers SEED`` and ``tool_eval.py --identifiers SEED`` rank the
bench's requests with them; the tests check that identifiers no document states in a short
field change no answer.
"""

from __future__ import annotations

import argparse
import random
import string
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lemon_skills.search.metrics import Case

_DIRS = ("src", "lib", "app", "pkg", "internal", "services", "scripts", "tests", "migrations")
_FILES = ("main.py", "index.ts", "handler.go", "config.yaml", "schema.sql", "App.tsx", "mod.rs")


def _ticket(rng: random.Random) -> str:
    n = rng.randint(10, 99999)
    prefix = "".join(rng.choices(string.ascii_uppercase, k=rng.randint(2, 5)))
    return rng.choice((f"#{n}", f"{prefix}-{n}", f"({prefix}-{n})", f"#{n},"))


def _pr(rng: random.Random) -> str:
    # "PR" written apart ("the PR #482") is an ordinary word, which a skill may well hold.
    n = rng.randint(1, 9999)
    return rng.choice((f"PR#{n}", f"GH-{n}", f"#{n}", f"!{n}"))


def _port(rng: random.Random) -> str:
    port = rng.choice((3000, 5173, 8000, 8080, 8443, 9000, rng.randint(1024, 65535)))
    host = rng.choice(("", "localhost", "127.0.0.1", "0.0.0.0"))
    return f"{host}:{port}"


def _version(rng: random.Random) -> str:
    major, minor, patch = rng.randint(0, 30), rng.randint(0, 40), rng.randint(0, 20)
    return rng.choice(
        (f"v{major}.{minor}.{patch}", f"{major}.{minor}.{patch}", f"{major}.{minor}")
        + (f"{major}.{minor}.{patch}-rc{rng.randint(1, 5)}",)
    )


def _hash(rng: random.Random) -> str:
    while True:
        h = "".join(rng.choices("0123456789abcdef", k=rng.choice((7, 8, 12, 40))))
        if not h.isalpha():
            return h


def _path(rng: random.Random) -> str:
    parts = rng.sample(_DIRS, rng.randint(1, 3))
    name = rng.choice((*_FILES, f"{rng.randint(1, 9999):04d}_{rng.choice(('init', 'add'))}.sql"))
    root = rng.choice(("", "./", "~/work/", "/srv/"))
    return root + "/".join((*parts, name))


def _url(rng: random.Random) -> str:
    kind = rng.choice(("issues", "pull", "runs", "tickets"))
    return f"https://example.test/{kind}/{rng.randint(1, 99999)}"


KINDS: dict[str, Callable[[random.Random], str]] = {
    "ticket": _ticket,
    "pr": _pr,
    "port": _port,
    "version": _version,
    "hash": _hash,
    "path": _path,
    "url": _url,
}


def identifier(rng: random.Random, kinds: Sequence[str] = tuple(KINDS)) -> str:
    """One identifier of a kind drawn from ``kinds``."""
    return KINDS[rng.choice(list(kinds))](rng)


def appended(
    cases: Sequence[Case], seed: int, kinds: Sequence[str] = tuple(KINDS)
) -> list[tuple[Case, str]]:
    """Each case with one identifier appended to its request, and the identifier."""
    rng = random.Random(seed)
    out = []
    for c in cases:
        ident = identifier(rng, kinds)
        out.append((replace(c, query=f"{c.query} {ident}"), ident))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=30)
    parser.add_argument("-n", type=int, default=12)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    for _ in range(args.n):
        print(identifier(rng))


if __name__ == "__main__":
    main()
