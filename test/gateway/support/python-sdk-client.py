# The Python MCP SDK 2.x client (package `mcp`, pinned in test/support/python-requirements.txt)
# against one gateway URL: connect in the given mode, list the tools, call one, and print what
# the client says it negotiated as one JSON line. A failure to connect or call is printed the
# same way ({"error": ...}) so the test can assert on it.
#
# usage: python python-sdk-client.py URL API_KEY MODE TOOL
#   MODE is what Client(mode=...) takes: "auto" (the default: probe server/discover, fall back
#   to initialize), "legacy" (initialize handshake only) or a modern version ("2026-07-28").
import asyncio
import json
import sys

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client


async def main(url: str, key: str, mode: str, tool: str) -> dict:
    async with httpx2.AsyncClient(headers={"X-API-Key": key}, timeout=30) as http:
        async with Client(streamable_http_client(url, http_client=http), mode=mode) as client:
            listed = await client.list_tools()
            result = await client.call_tool(tool, {})
            info = client.server_info
            return {
                "protocolVersion": client.protocol_version,
                "serverInfo": None if info is None else {"name": info.name, "version": info.version},
                "tools": [t.name for t in listed.tools],
                "isError": result.is_error,
                "structured": result.structured_content,
            }


def describe(error: BaseException) -> dict:
    # anyio task groups wrap the real failure; the innermost one is what the client hit.
    while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
        error = error.exceptions[0]
    described = {"error": type(error).__name__, "message": str(error)[:500]}
    code = getattr(getattr(error, "error", None), "code", None)
    if code is not None:
        described["code"] = code
    return described


if __name__ == "__main__":
    url, key, mode, tool = sys.argv[1:5]
    try:
        outcome = asyncio.run(main(url, key, mode, tool))
    except BaseException as error:  # noqa: BLE001 - reported to the test, not swallowed
        outcome = describe(error)
    print(json.dumps(outcome))
