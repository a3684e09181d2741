import json, pathlib, sys
from openai import OpenAI  # reads OPENAI_BASE_URL and OPENAI_API_KEY, which reloop sets
client, root = OpenAI(), pathlib.Path.cwd().resolve()  # one tool, a loop until the model answers; cwd: the workspace
tools = [{"type": "function", "function": {"name": "read_file", "parameters": {"type": "object",
          "properties": {"path": {"type": "string"}}, "required": ["path"]}}}]
messages = [{"role": "user", "content": sys.argv[1]}]
for _ in range(8):
    reply = client.chat.completions.create(model="gpt-4.1", messages=messages, tools=tools).choices[0].message
    messages.append(reply.model_dump(exclude_none=True))
    if not reply.tool_calls:
        sys.exit(print(reply.content))
    for call in reply.tool_calls:
        path = (root / json.loads(call.function.arguments)["path"]).resolve()
        ok = path.is_relative_to(root) and path.is_file()  # no path escapes the workspace
        messages.append({"role": "tool", "tool_call_id": call.id, "content": path.read_text() if ok else "error: no such file"})
sys.exit("step budget exhausted")
