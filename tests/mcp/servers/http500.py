"""An HTTP endpoint that answers every request with 500 (a broken Streamable HTTP server)."""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route


async def fail(request: Request) -> PlainTextResponse:
    return PlainTextResponse("internal error (planned)", status_code=500)


app = Starlette(routes=[Route("/mcp", fail, methods=["GET", "POST", "DELETE"])])
