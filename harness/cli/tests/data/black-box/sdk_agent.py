"""A minimal coding agent on the official OpenAI SDK, the black box of
`black_box.rs`: it reads OPENAI_BASE_URL / OPENAI_API_KEY from the
environment like any SDK user, offers one tool (read_file, inside its
working directory) and loops until the model answers without tools.
Like Codex, it refuses a call of a tool it lacks ("unsupported call");
like Claude Code, it answers a context-length error by asking for a
summary (tools declared) and resending the task, the summary and the
last turn. With RENAME_CALLS=1 it gives every call an id of its own, new
on each run, as clients of APIs without call ids do."""
import json, os, pathlib, sys, uuid
from openai import OpenAI, BadRequestError

client = OpenAI(max_retries=2)
tools = [{"type": "function", "function": {"name": "read_file", "description": "Read a file.",
          "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}}]
messages = [{"role": "system", "content": "You are a coding agent."}, {"role": "user", "content": sys.argv[1]}]
root = pathlib.Path.cwd().resolve()

def ask(history):
    return client.chat.completions.create(model="gpt-4.1", messages=history, tools=tools).choices[0].message

def run(call):
    if call.function.name != "read_file":
        return f"unsupported call: {call.function.name}"
    path = (root / json.loads(call.function.arguments)["path"]).resolve()
    return path.read_text() if path.is_relative_to(root) and path.is_file() else "error: no such file in the workspace"

for _ in range(8):
    try:
        reply = ask(messages)
    except BadRequestError as error:
        if error.code != "context_length_exceeded":
            raise
        summary = ask(messages + [{"role": "user", "content": "Summarize the conversation so far."}]).content
        last = max(i for i, m in enumerate(messages) if m["role"] == "assistant")
        messages = messages[:2] + [{"role": "user", "content": f"Summary: {summary}"}] + messages[last:]
        reply = ask(messages)
    for call in reply.tool_calls or [] if os.environ.get("RENAME_CALLS") else []:
        call.id = f"call_{uuid.uuid4().hex}"
    messages.append(reply.model_dump(exclude_none=True))
    if not reply.tool_calls:
        print(reply.content)
        sys.exit(0)
    for call in reply.tool_calls:
        messages.append({"role": "tool", "tool_call_id": call.id, "content": run(call)})
sys.exit("step budget exhausted")
