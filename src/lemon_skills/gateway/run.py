"""Serving the gateway over stdio (one host: the process that started it)."""

from __future__ import annotations

from lemon_skills.gateway.server import Gateway, GatewayOptions
from lemon_skills.gateway.stdio import stdio_streams
from lemon_skills.tools.serve.server import serving_process


async def serve_stdio(options: GatewayOptions) -> None:
    """Serve on stdin/stdout until the host hangs up; every upstream server is stopped then."""
    serving_process()
    gateway = Gateway(options)

    async def serve() -> None:
        async with stdio_streams() as (read, write):
            await gateway.server.run(read, write, gateway.init_options())

    await gateway.run(serve)
