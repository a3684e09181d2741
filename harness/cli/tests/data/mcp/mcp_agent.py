"""A command agent whose tools are those of its MCP servers, which it
starts itself from `mcp.json` in its working directory, in the
`{"mcpServers": {NAME: {"command": ..., "args": [...]}}}` shape Claude Code
and Gemini CLI read. It asks Chat Completions at OPENAI_BASE_URL, calls each
tool the model asks for with `tools/call`, and sends back the result's text.
Its MCP client is the Python standard library speaking the spec's stdio
transport (one JSON-RPC message per line), or with `MCP_CLIENT=sdk` the
official `mcp` SDK's `Client`. The black box of
`harness/cli/tests/integration/mcp.rs` and `tests/external/mcp.rs`."""
import asyncio, json, os, subprocess, sys, urllib.request

PROTOCOL = "2025-06-18"


class LineClient:
    """MCP over stdio with the standard library: a request per line, the
    answer with the same id read back (notifications in between skipped)."""

    def __init__(self, command, args):
        self.process = subprocess.Popen([command, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.next_id = 0

    def send(self, message):
        self.process.stdin.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
        self.process.stdin.flush()

    def request(self, method, params):
        self.next_id += 1
        self.send({"id": self.next_id, "method": method, "params": params})
        for line in self.process.stdout:
            message = json.loads(line)
            if message.get("id") == self.next_id and "method" not in message:
                if "error" in message:
                    raise RuntimeError(message["error"]["message"])
                return message["result"]
        raise RuntimeError(f"the server closed its output before answering {method}")

    async def start(self):
        self.request("initialize", {"protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": {"name": "reloop-mcp-test-agent", "version": "1"}})
        self.send({"method": "notifications/initialized"})
        return [(tool["name"], tool.get("description", ""), tool["inputSchema"]) for tool in self.request("tools/list", {})["tools"]]

    async def call(self, name, arguments):
        result = self.request("tools/call", {"name": name, "arguments": arguments})
        return "".join(block.get("text", "") for block in result["content"]), result.get("isError", False)

    async def close(self):
        self.process.stdin.close()
        self.process.wait(timeout=10)


class SdkClient:
    """The same through the official SDK's high-level `Client`."""

    def __init__(self, command, args):
        from mcp import Client, StdioServerParameters
        self.client = Client(StdioServerParameters(command=command, args=args))

    async def start(self):
        await self.client.__aenter__()
        listing = await self.client.list_tools()
        return [(tool.name, tool.description or "", tool.input_schema) for tool in listing.tools]

    async def call(self, name, arguments):
        result = await self.client.call_tool(name, arguments)
        return "".join(getattr(block, "text", "") for block in result.content), result.is_error

    async def close(self):
        await self.client.__aexit__(None, None, None)


def ask(messages, tools):
    base = os.environ["OPENAI_BASE_URL"].rstrip("/")
    body = json.dumps({"model": "gpt-4.1", "messages": messages, "tools": tools}).encode()
    headers = {"content-type": "application/json", "authorization": "Bearer " + os.environ["OPENAI_API_KEY"]}
    with urllib.request.urlopen(urllib.request.Request(f"{base}/chat/completions", body, headers)) as response:
        return json.load(response)["choices"][0]["message"]


async def main():
    with open("mcp.json") as config:
        servers = json.load(config)["mcpServers"]
    kind = SdkClient if os.environ.get("MCP_CLIENT") == "sdk" else LineClient
    clients, owner, tools = [], {}, []
    for name, server in servers.items():
        client = kind(server["command"], server.get("args", []))
        clients.append(client)
        for tool, description, schema in await client.start():
            owner[tool] = client
            tools.append({"type": "function", "function": {"name": tool, "description": description, "parameters": schema}})
    messages = [{"role": "user", "content": sys.argv[1]}]
    try:
        for _ in range(6):
            reply = ask(messages, tools)
            messages.append({k: v for k, v in reply.items() if v is not None})
            if not reply.get("tool_calls"):
                print(reply["content"])
                return 0
            for call in reply["tool_calls"]:
                try:
                    text, failed = await owner[call["function"]["name"]].call(call["function"]["name"], json.loads(call["function"]["arguments"]))
                except Exception as error:  # the server's JSON-RPC error: the model hears of it, as agents do
                    text, failed = f"error: {error}", True
                messages.append({"role": "tool", "tool_call_id": call["id"], "content": ("[tool error] " if failed else "") + text})
        return "step budget exhausted"
    finally:
        for client in clients:
            await client.close()


sys.exit(asyncio.run(main()))
