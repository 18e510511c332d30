"""Where OAuth traffic may go, when the URLs come from the server being authorised against.

A protected MCP server names its resource-metadata document; that names authorization
servers, whose metadata names the token and registration endpoints. All of those URLs come
from the other side, so a hostile or compromised server could point the client at a cloud
metadata service (``169.254.169.254``) or at an admin port on the agent's own machine and
read the answer back through an error message. A discovered URL is therefore followed only
when its host is no more internal than the MCP server's own host: a public server may send us
to public hosts only, a server on the local network to local or public ones, a server on
loopback anywhere but link-local. Plain http is accepted only towards a non-public host the
server's own zone allows. The host of an issuer the operator configured is trusted as given.

Names are resolved before the check; a name that resolves to several addresses is judged by
its most internal one. (The HTTP client resolves again when it connects, so a rebinding DNS
server could still race the check; addresses that are never legitimate for OAuth, link-local
and reserved ones, are refused whatever the server's zone.)
"""

from __future__ import annotations

import ipaddress
import socket
from typing import Literal
from urllib.parse import urlsplit

import anyio

from lemon_skills.errors import McpAuthError

Zone = Literal["public", "private", "loopback", "forbidden"]
_DEPTH: dict[Zone, int] = {"public": 0, "private": 1, "loopback": 2, "forbidden": 3}
_Address = ipaddress.IPv4Address | ipaddress.IPv6Address


def address_zone(ip: _Address) -> Zone:
    """How internal one address is."""
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if ip.is_loopback:
        return "loopback"
    if ip.is_link_local or ip.is_multicast or ip.is_unspecified or ip.is_reserved:
        return "forbidden"
    return "public" if ip.is_global else "private"


def literal_zone(host: str) -> Zone | None:
    """The zone of ``host`` when it is an IP literal or a loopback name, else None."""
    name = host.strip("[]").rstrip(".").lower()
    if name == "localhost" or name.endswith(".localhost"):
        return "loopback"
    try:
        return address_zone(ipaddress.ip_address(name))
    except ValueError:
        return None


def deepest(zones: list[Zone]) -> Zone:
    """The most internal of ``zones`` (public when there are none)."""
    return max(zones, key=_DEPTH.__getitem__, default="public")


def refusal(url: str, target: Zone, server: Zone) -> str | None:
    """Why ``url`` (host in zone ``target``) may not be followed for a server in ``server``."""
    parts = urlsplit(url)
    host = parts.hostname or "?"
    if parts.scheme not in ("http", "https"):
        return f"{url} is not an http(s) URL"
    if target == "forbidden":
        return f"{host} is a link-local or reserved address"
    if _DEPTH[target] > _DEPTH[server]:
        return f"{host} is a {target} address and the MCP server is not"
    if parts.scheme == "http" and target == "public":
        return f"{url} must use https"
    return None


async def resolve_zone(host: str) -> Zone:
    """The zone of ``host``, resolving names (an unresolvable name fails later, on connect)."""
    known = literal_zone(host)
    if known is not None:
        return known
    try:
        infos = await anyio.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except OSError:
        return "public"
    zones: list[Zone] = []
    for info in infos:
        try:
            zones.append(address_zone(ipaddress.ip_address(str(info[4][0]).split("%")[0])))
        except ValueError:
            continue
    return deepest(zones)


class UrlGuard:
    """Checks the discovered URLs of one MCP server's OAuth flow (zones cached per host)."""

    def __init__(self, server_url: str, *, server: str, trusted: str | None = None) -> None:
        self.server_url = server_url
        self.server = server
        self._trusted_host = urlsplit(trusted).hostname if trusted else None
        self._zones: dict[str, Zone] = {}

    async def reason(self, url: str) -> str | None:
        """Why ``url`` may not be fetched, or None when it may."""
        host = urlsplit(url).hostname or ""
        if host and host == self._trusted_host:
            return None
        server_host = urlsplit(self.server_url).hostname or ""
        return refusal(url, await self._zone(host), await self._zone(server_host))

    async def check(self, url: str) -> None:
        """Return when ``url`` may be fetched.

        Raises:
            McpAuthError: it points somewhere the server may not send us.
        """
        reason = await self.reason(url)
        if reason is not None:
            raise McpAuthError(
                f"refused to follow an OAuth URL the server advertised: {reason}",
                server=self.server,
                hint="a server may only point OAuth discovery at hosts no more internal than "
                "its own; configure `oauth.issuer` to trust an authorization server explicitly",
            )

    async def _zone(self, host: str) -> Zone:
        zone = self._zones.get(host)
        if zone is None:
            zone = self._zones[host] = await resolve_zone(host)
        return zone
