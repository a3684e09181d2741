"""The floor bench's workload through Inspect AI's mockllm (issue 25).

N samples, each K model decisions: K - 1 `read_file` calls whose result is
the same text reloop's generated scenarios return (read from a file, so the
two workloads cannot drift), then the answer. The decision is taken from the
conversation (the number of assistant turns so far), as reloop's recording
replays it. Inspect runs the tool loop (`generate` with its default
tool_calls="loop"), counts tokens for its usage figures and writes its eval
log, as reloop runs its loop, counts and writes its report.

    pip install inspect-ai==0.3.285    # Python 3.10 or later
    python benches/inspect/mockllm_replay.py --output-file OUT.txt --scenarios 20 --steps 50 --log-dir DIR

`reloop-bench --python PYTHON` runs it beside reloop and the floor.
"""

import argparse
import sys

from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.model import ModelOutput, get_model
from inspect_ai.solver import generate, use_tools
from inspect_ai.tool import tool

TOOL = "read_file"
TASK = "Read every module."
ANSWER = "Every module is read; nothing to change."


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output-file", required=True, help="the tool result every call returns")
    parser.add_argument("--scenarios", type=int, default=20)
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--log-dir", required=True)
    args = parser.parse_args()
    with open(args.output_file, encoding="utf-8") as file:
        output = file.read()

    @tool(name=TOOL)
    def read_file():
        async def execute(path: str) -> str:
            """Read a file.

            Args:
                path: The file's path.
            """
            return output

        return execute

    def decide(messages, tools, tool_choice, config):
        step = 1 + sum(1 for message in messages if message.role == "assistant")
        if step < args.steps:
            return ModelOutput.for_tool_call("mockllm/model", TOOL, {"path": f"src/module_{step}.rs"}, tool_call_id=f"call_{step}")
        return ModelOutput.from_content("mockllm/model", ANSWER)

    task = Task(
        dataset=[Sample(input=TASK, id=index) for index in range(args.scenarios)],
        solver=[use_tools(read_file()), generate()],
    )
    model = get_model("mockllm/model", custom_outputs=decide)
    [log] = eval(task, model=model, log_dir=args.log_dir, display="none")
    answers = [sample.output.completion for sample in log.samples or []]
    turns = [sum(1 for message in sample.messages if message.role == "assistant") for sample in log.samples or []]
    if log.status != "success" or answers != [ANSWER] * args.scenarios or turns != [args.steps] * args.scenarios:
        print(f"mockllm_replay: status {log.status}, answers {set(answers)}, turns {set(turns)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
