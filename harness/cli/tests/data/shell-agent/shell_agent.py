"""A minimal command agent with one tool, `shell`, on the Python standard
library alone: it reads OPENAI_BASE_URL like any SDK user, posts Chat
Completions, and runs each command as `SHELL_NAME -c COMMAND`, the shell
found on PATH (`bash` by default, `sh`, or `$SHELL` for `SHELL_NAME=$SHELL`),
as coding agents spawn theirs; `SHELL_NAME=/bin/sh` (or any absolute path)
starts that file, and `SHELL_NAME=shell=True` runs
`subprocess.run(command, shell=True)`, which starts `/bin/sh` by absolute path
as mini-swe-agent does. Each command runs in the folder SHELL_CWD (relative
to its own; its own by default), given SHELL_STDIN on standard input when
set. The command's stdout, stderr and exit status go back to the model as
the tool result. The black box of `harness/cli/tests/integration/tool_side.rs`."""
import json, os, subprocess, sys, urllib.request

base = os.environ["OPENAI_BASE_URL"].rstrip("/")
shell = os.environ.get("SHELL_NAME", "bash")
shell = os.environ["SHELL"] if shell == "$SHELL" else shell
tools = [{"type": "function", "function": {"name": "shell", "description": "Run a shell command.",
          "parameters": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}}}]
messages = [{"role": "user", "content": sys.argv[1]}]

def ask():
    body = json.dumps({"model": "gpt-4.1", "messages": messages, "tools": tools}).encode()
    request = urllib.request.Request(f"{base}/chat/completions", body, {"content-type": "application/json", "authorization": "Bearer " + os.environ["OPENAI_API_KEY"]})
    with urllib.request.urlopen(request) as response:
        return json.load(response)["choices"][0]["message"]

for _ in range(6):
    reply = ask()
    messages.append({k: v for k, v in reply.items() if v is not None})
    if not reply.get("tool_calls"):
        print(reply["content"])
        sys.exit(0)
    for call in reply["tool_calls"]:
        command = json.loads(call["function"]["arguments"])["command"]
        where = {"cwd": os.environ.get("SHELL_CWD"), "input": os.environ.get("SHELL_STDIN")}
        if shell == "shell=True":
            done = subprocess.run(command, shell=True, capture_output=True, text=True, **where)
        else:
            done = subprocess.run([shell, "-c", command], capture_output=True, text=True, **where)
        messages.append({"role": "tool", "tool_call_id": call["id"], "content": f"{done.stdout}{done.stderr}(exit {done.returncode})"})
sys.exit("step budget exhausted")
