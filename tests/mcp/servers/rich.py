"""The smoke fixture server with more to offer (SDK server API, stdio).

On top of the smoke fixture's echo, fail, fixture://status ("Status") and brief: tools pid,
image, structured, embedded, link, getenv, cwd, sleep, ask (sampling); the resource
fixture://secret ("Secret"); the prompt other. ``--garbage N`` first writes N lines that are not
JSON-RPC to stdout; ``--name`` sets the server name.
"""

from __future__ import annotations

import argparse
import base64
import os
import sys
import time
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.resolve import Resolve, Sample
from mcp.types import (
    CallToolResult,
    CreateMessageResult,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    SamplingMessage,
    TextContent,
    TextResourceContents,
)

from lemon_skills.selftest.fixtures import server as fixture_server

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * 16).decode()


def _ask_model(question: str) -> Sample:
    message = SamplingMessage(role="user", content=TextContent(type="text", text=question))
    return Sample([message], max_tokens=16)


def build(name: str = "Rich Fixture") -> MCPServer[Any]:
    server = fixture_server.build(name=name, version="2.0.0")
    # What a server says about itself at initialize; tool search ranks by it too.
    server._lowlevel_server.instructions = "A fixture for weather lookups and echoes."

    @server.tool()
    def pid() -> int:
        """The server's process id."""
        return os.getpid()

    @server.tool()
    def image() -> CallToolResult:
        """A tiny PNG image."""
        return CallToolResult(content=[ImageContent(type="image", data=PNG, mime_type="image/png")])

    @server.tool()
    def structured(city: str) -> dict[str, Any]:
        """Structured weather for a city."""
        return {"city": city, "celsius": 21}

    @server.tool()
    def embedded() -> CallToolResult:
        """An embedded text resource."""
        res = TextResourceContents(uri="fixture://note", mime_type="text/plain", text="note body")
        return CallToolResult(content=[EmbeddedResource(type="resource", resource=res)])

    @server.tool()
    def link() -> CallToolResult:
        """A resource link."""
        return CallToolResult(
            content=[ResourceLink(type="resource_link", uri="fixture://status", name="Status")]
        )

    @server.tool()
    def getenv(name: str) -> str:
        """An environment variable of the server process (``<unset>`` when unset)."""
        return os.environ.get(name, "<unset>")

    @server.tool()
    def cwd() -> str:
        """The server's working directory."""
        return os.getcwd()

    @server.tool()
    def sleep(seconds: float) -> str:
        """Sleep, then answer."""
        time.sleep(seconds)
        return "slept"

    @server.tool()
    def ask(question: str, answer: Annotated[CreateMessageResult, Resolve(_ask_model)]) -> str:
        """Ask the client's model (sampling) and report its answer."""
        text = getattr(answer.content, "text", "")
        return f"model said: {text}"

    @server.resource("fixture://secret", name="Secret", mime_type="text/plain")
    def secret() -> str:
        return "secret:42"

    @server.prompt(name="other", description="Another prompt")
    def other() -> str:
        return "Other."

    return server


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--garbage", type=int, default=0)
    parser.add_argument("--name", default="Rich Fixture")
    opts = parser.parse_args()
    for i in range(opts.garbage):
        sys.stdout.write(f"this is not json-rpc {i}\n")
    sys.stdout.flush()
    build(opts.name).run()


if __name__ == "__main__":
    main()
