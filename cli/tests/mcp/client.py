"""The tests' MCP client: the official Python SDK's ClientSession, run through a plan.

The plan comes as JSON on stdin: how to reach the server (`stdio`: command, args, env;
or `http`: url, headers), how the person answers confirmations (`elicitation`: accept,
decline, cancel, or late: yes, but only once the server's audit log (`late`: its path and
how many lines it had before this run) has a line more, the server having given up on the
answer; absent, the client declares no elicitation), and the steps (`list`, or `call` a tool with arguments). What each step
returned is printed as JSON on stdout, with the confirmations asked for. A call the SDK
itself refuses (a result that does not match the tool's output schema, a protocol
error) is printed as the exception, so that a test sees it.
"""

import asyncio
import json
import os
import sys

import mcp.types as types
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamablehttp_client


def result(r):
    return {
        "isError": bool(r.isError),
        "structured": r.structuredContent,
        "text": [c.text for c in r.content if c.type == "text"],
    }


def tool(t):
    return {
        "name": t.name,
        "description": t.description,
        "annotations": t.annotations.model_dump(exclude_none=True) if t.annotations else None,
        "inputSchema": t.inputSchema,
        "outputSchema": t.outputSchema,
    }


async def steps(plan, session):
    out = []
    for step in plan["steps"]:
        try:
            if step["do"] == "list":
                out.append([tool(t) for t in (await session.list_tools()).tools])
            else:
                out.append(result(await session.call_tool(step["tool"], step.get("args", {}))))
        except Exception as e:  # noqa: BLE001 - the test reads what went wrong
            out.append({"exception": repr(e)})
    return out


async def main():
    plan = json.load(sys.stdin)
    answer = plan.get("elicitation")
    asked = []

    def audit_lines():
        try:
            with open(plan["late"]["audit"], encoding="utf-8") as f:
                return f.read().count("\n")
        except FileNotFoundError:
            return 0

    async def elicit(context, params):
        asked.append(params.message)
        if answer == "late":
            # This SDK answers a server's request inside its receive loop: an answer that
            # never comes would hold the call's result back too. A yes after the server
            # wrote down its refusal is the person who answered too late.
            for _ in range(15_000):
                if audit_lines() > plan["late"]["lines"]:
                    break
                await asyncio.sleep(0.02)
            else:
                # Five minutes without the server giving up: a failure, not a hang.
                print("the server never gave up on its question", file=sys.stderr)
                os._exit(3)
            return types.ElicitResult(action="accept", content={})
        content = {} if answer == "accept" else None
        return types.ElicitResult(action=answer, content=content)

    if "http" in plan:
        transport = streamablehttp_client(plan["http"]["url"], headers=plan["http"].get("headers"))
    else:
        s = plan["stdio"]
        transport = stdio_client(
            StdioServerParameters(command=s["command"], args=s["args"], env=s["env"])
        )
    async with transport as streams:
        async with ClientSession(
            streams[0], streams[1], elicitation_callback=elicit if answer else None
        ) as session:
            init = await session.initialize()
            out = await steps(plan, session)
    json.dump({"protocol": init.protocolVersion, "steps": out, "asked": asked}, sys.stdout)


asyncio.run(main())
