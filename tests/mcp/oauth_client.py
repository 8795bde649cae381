"""Connects to an OAuth-protected Streamable HTTP MCP server with the official MCP Python SDK's
OAuth client (`mcp` 2.x `OAuthClientProvider`), makes some tool calls, and prints what it saw
as one JSON object on stdout; the OAuth tests of tests/e2e assert on it.

    python oauth_client.py SERVER_URL ACCOUNT CALLS_JSON

SERVER_URL is the MCP endpoint (`http://127.0.0.1:PORT/mcp`), ACCOUNT the name to log in as
at the authorization server (tests/mcp/oauth_server.mjs), CALLS_JSON a JSON list of
`{"name": TOOL, "arguments": {...}}`.

The SDK does the whole dance: the server's 401 and its `WWW-Authenticate`, protected resource
metadata, authorization server metadata, dynamic client registration, the authorization
request (PKCE, `resource`), the token request. The redirect handler below plays the person at
the browser: it follows the authorization server's redirects to its interaction page, logs in
as ACCOUNT, lets consent be granted, and stops at the redirect to
`http://localhost:3030/callback?code=...&state=...` (nothing listens there: the code and state
are handed straight to the SDK's callback handler).

Prints `{"tools": [names], "results": [{"is_error", "structured", "text"}], "access_token":
TOKEN}` with the access token the SDK ended with, or `{"error": REPR}` and exits 1.
"""

from __future__ import annotations

import json
import sys
from typing import Any
from urllib.parse import parse_qs, urljoin, urlsplit

import anyio
import httpx2
from mcp import ClientSession
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider, TokenStorage
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

from client import call_summary

REDIRECT_URI = "http://localhost:3030/callback"
SCOPE = "mcp:tools"
OVERALL_TIMEOUT = 60.0
# Requests the person's browser makes, at most, from the authorization URL to the callback.
MAX_BROWSER_STEPS = 20


class MemoryStorage(TokenStorage):
    """Tokens and the registered client, kept for this process only."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client_info: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client_info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client_info = client_info


class Person:
    """Answers the authorization server's pages as the person at the browser would."""

    def __init__(self, account: str) -> None:
        self.account = account
        self.result: AuthorizationCodeResult | None = None
        self.visited: list[str] = []

    async def redirect_handler(self, authorization_url: str) -> None:
        self.result = None
        # A fresh cookie jar per authorization, as a browser session; redirects by hand.
        async with httpx2.AsyncClient(follow_redirects=False, timeout=30.0) as browser:
            response = await browser.get(authorization_url)
            for _ in range(MAX_BROWSER_STEPS):
                self.visited.append(f"{response.request.method} {response.request.url.copy_with(query=None)}")
                location = response.headers.get("location")
                if response.is_redirect and location:
                    target = urljoin(str(response.url), location)
                    if target.split("?", 1)[0] == REDIRECT_URI:
                        self.result = self._callback_result(target)
                        return
                    response = await browser.get(target)
                    continue
                page = _json_or_none(response)
                if response.status_code == 200 and page is not None and page.get("prompt") == "login":
                    response = await browser.post(
                        urljoin(str(response.url), page["login_action"]), data={"login": self.account}
                    )
                    continue
                raise RuntimeError(
                    f"unexpected answer from the authorization server: {response.status_code} "
                    f"at {response.request.url}: {response.text[:500]}"
                )
        raise RuntimeError(f"no redirect to {REDIRECT_URI} after {MAX_BROWSER_STEPS} requests: {self.visited}")

    @staticmethod
    def _callback_result(url: str) -> AuthorizationCodeResult:
        params = {key: values[0] for key, values in parse_qs(urlsplit(url).query).items()}
        if "code" not in params:
            raise RuntimeError(f"the authorization server redirected back without a code: {params}")
        return AuthorizationCodeResult(code=params["code"], state=params.get("state"), iss=params.get("iss"))

    async def callback_handler(self) -> AuthorizationCodeResult:
        if self.result is None:
            raise RuntimeError("the redirect handler captured no authorization code")
        return self.result


def _json_or_none(response: httpx2.Response) -> dict[str, Any] | None:
    try:
        body = response.json()
    except ValueError:
        return None
    return body if isinstance(body, dict) else None


async def run(server_url: str, account: str, calls: list[dict[str, Any]]) -> dict[str, Any]:
    storage = MemoryStorage()
    person = Person(account)
    auth = OAuthClientProvider(
        server_url=server_url,
        client_metadata=OAuthClientMetadata(
            client_name="toolhost oauth test client",
            redirect_uris=[REDIRECT_URI],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            scope=SCOPE,
        ),
        storage=storage,
        redirect_handler=person.redirect_handler,
        callback_handler=person.callback_handler,
    )
    out: dict[str, Any] = {}
    with anyio.fail_after(OVERALL_TIMEOUT):
        async with httpx2.AsyncClient(auth=auth, timeout=httpx2.Timeout(30.0, read=300.0)) as http_client:
            async with streamable_http_client(server_url, http_client=http_client) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    listed = await session.list_tools()
                    out["tools"] = [tool.name for tool in listed.tools]
                    out["results"] = [
                        call_summary(await session.call_tool(call["name"], call.get("arguments") or {}))
                        for call in calls
                    ]
    out["access_token"] = storage.tokens.access_token if storage.tokens else None
    return out


def main() -> None:
    if len(sys.argv) != 4:
        raise SystemExit(__doc__)
    _, server_url, account, calls_json = sys.argv
    calls = json.loads(calls_json)
    try:
        result = anyio.run(run, server_url, account, calls)
    except BaseException as error:  # noqa: BLE001 - any failure is reported as JSON
        if isinstance(error, (KeyboardInterrupt, SystemExit)):
            raise
        print(json.dumps({"error": repr(error)}))
        sys.stdout.flush()
        sys.exit(1)
    print(json.dumps(result, default=str))


if __name__ == "__main__":
    main()
