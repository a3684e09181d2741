"""A minimal coding agent on the official OpenAI SDK, the black box of
`black_box.rs`: it reads OPENAI_BASE_URL / OPENAI_API_KEY from the
environment like any SDK user, offers one tool (read_file, inside its
working directory) and loops until the model answers without tools."""
import json, pathlib, sys
from openai import OpenAI

client = OpenAI(max_retries=2)
tools = [{"type": "function", "function": {"name": "read_file", "description": "Read a file.",
          "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}}]
messages = [{"role": "system", "content": "You are a coding agent."}, {"role": "user", "content": sys.argv[1]}]
root = pathlib.Path.cwd().resolve()
for _ in range(8):
    reply = client.chat.completions.create(model="gpt-4.1", messages=messages, tools=tools).choices[0].message
    messages.append(reply.model_dump(exclude_none=True))
    if not reply.tool_calls:
        print(reply.content)
        sys.exit(0)
    for call in reply.tool_calls:
        path = (root / json.loads(call.function.arguments)["path"]).resolve()
        inside = path.is_relative_to(root) and path.is_file()
        result = path.read_text() if inside else "error: no such file in the workspace"
        messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
sys.exit("step budget exhausted")
