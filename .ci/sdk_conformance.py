"""SDK conformance: the official `openai`, `anthropic` and `google-genai`
Python SDKs talk to `reloop serve` as they would to the real APIs and see
exactly what the recordings in `.ci/conformance/` hold.

Covered, each against a fresh session: OpenAI Chat Completions and
Responses, Anthropic Messages, Google Gemini (generate, stream, a function
call round trip, a 429 raised as the SDK's ClientError), streamed (through the SDKs' own stream helpers
and their final-object accumulation) and not; a text turn and a tool-call
turn; both API-key headers; the model list; a divergence surfacing as the
SDK's BadRequestError; every error the server raises itself (404 for an
unknown session or route, 405, 413, 431, 503 past the session cap) raising
the SDK's typed error with the server's message.

Runs a built binary, builds nothing:

    python .ci/sdk_conformance.py [path/to/reloop]   # or RELOOP_BIN=...; default target/release/reloop
"""

import contextlib
import json
import os
import pathlib
import sys

if __name__ == "__main__":
    # Before the SDK imports below, so that pytest loads its plugins first.
    import pytest

    if len(sys.argv) > 1:
        os.environ["RELOOP_BIN"] = sys.argv[1]
    sys.exit(pytest.main([__file__, "-v", "-rxX", "-p", "no:cacheprovider", "-o", "console_output_style=classic"]))

import re
import selectors
import subprocess
import tempfile
import time
import typing

import anthropic
import openai
import pydantic
from google import genai
from google.genai import errors as genai_errors
from google.genai import types as genai_types
import pytest
from anthropic.types import Message, ModelInfo, RawMessageStreamEvent
from openai.types import Model as OpenaiModel
from openai.types.chat import ChatCompletion, ChatCompletionChunk
from openai.types.responses import Response, ResponseStreamEvent

ROOT = pathlib.Path(__file__).resolve().parent.parent
RECORDINGS = ROOT / ".ci" / "conformance"

# What `.ci/conformance/*.yaml` hold.
TEXT = "The capital of France is Paris. It has been the seat of government since 987, with brief interruptions."
TOOL_PREAMBLE = "Let me check the forecast."
TOOL_CALL_ID = "call_weather_1"
TOOL_NAME = "get_weather"
TOOL_ARGUMENTS = {
    "location": {"city": "Zürich", "country": "CH"},
    "days": 3,
    "units": "celsius",
    "include": ["temperature", "precipitation"],
    "hourly": False,
}

TEXT_PROMPT = "What is the capital of France?"
TOOL_PROMPT = "Will it rain in Zürich in the next three days?"
WEATHER_SCHEMA = {
    "type": "object",
    "properties": {
        "location": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "country": {"type": "string"}},
            "required": ["city", "country"],
        },
        "days": {"type": "integer"},
        "units": {"type": "string", "enum": ["celsius", "fahrenheit"]},
        "include": {"type": "array", "items": {"type": "string"}},
        "hourly": {"type": "boolean"},
    },
    "required": ["location"],
}
WEATHER_DESCRIPTION = "Weather forecast for a city."
CHAT_TOOLS = [{"type": "function", "function": {"name": TOOL_NAME, "description": WEATHER_DESCRIPTION, "parameters": WEATHER_SCHEMA}}]
RESPONSES_TOOLS = [{"type": "function", "name": TOOL_NAME, "description": WEATHER_DESCRIPTION, "parameters": WEATHER_SCHEMA, "strict": False}]
ANTHROPIC_TOOLS = [{"name": TOOL_NAME, "description": WEATHER_DESCRIPTION, "input_schema": WEATHER_SCHEMA}]

OPENAI_MODEL = "gpt-4o-2024-08-06"
ANTHROPIC_MODEL = "claude-haiku-4-5-20251001"
MAX_TOKENS = 1024

GEMINI_MODEL = "gemini-2.5-flash"
GEMINI_TOOLS = [
    genai_types.Tool(
        function_declarations=[
            genai_types.FunctionDeclaration(name=TOOL_NAME, description=WEATHER_DESCRIPTION, parameters_json_schema=WEATHER_SCHEMA)
        ]
    )
]
WEATHER_RESULT = "70% chance of rain on Thursday"
ROUNDTRIP_ANSWER = "Yes: rain is likely on Thursday, so take an umbrella."

# No SDK may pick a key, base URL or proxy from the environment.
for name in [n for n in os.environ if n.startswith(("OPENAI_", "ANTHROPIC_", "GEMINI_", "GOOGLE_"))]:
    del os.environ[name]
os.environ["NO_PROXY"] = ",".join(filter(None, [os.environ.get("NO_PROXY"), "127.0.0.1", "localhost"]))


# --- the server -------------------------------------------------------------


def reloop_bin() -> pathlib.Path:
    path = pathlib.Path(os.environ.get("RELOOP_BIN", "target/release/reloop"))
    return path if path.is_absolute() else ROOT / path


@contextlib.contextmanager
def serving(*flags: str, recording: pathlib.Path | None = RECORDINGS):
    """`reloop serve --recording RECORDING FLAGS` (no `--recording` when
    `recording` is None, for `--scenario`) on an ephemeral port: yields
    `http://127.0.0.1:PORT`; killed at the end, however the tests end, and
    its log printed."""
    binary = reloop_bin()
    if not binary.is_file():
        raise RuntimeError(f"{binary} is missing: build it first (cargo build --release -p reloop) or set RELOOP_BIN")
    log = tempfile.TemporaryFile(mode="w+")
    process = subprocess.Popen(
        [str(binary), "serve", *(["--recording", str(recording)] if recording else []), "--port", "0", *flags],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=log,
        text=True,
    )
    try:
        yield read_address(process)
    finally:
        process.kill()
        process.wait(timeout=10)
        log.seek(0)
        print("\n--- reloop serve " + " ".join(flags) + ", stderr ---\n" + log.read(), end="")
        log.close()


@pytest.fixture(scope="session")
def server():
    """The server most tests share."""
    with serving() as address:
        yield address


def read_address(process: subprocess.Popen, timeout: float = 20.0) -> str:
    """The address from serve's first stdout line, `... on http://127.0.0.1:PORT`."""
    selector = selectors.DefaultSelector()
    selector.register(process.stdout, selectors.EVENT_READ)
    deadline = time.monotonic() + timeout
    seen = []
    while time.monotonic() < deadline:
        if not selector.select(timeout=deadline - time.monotonic()):
            break
        line = process.stdout.readline()
        if not line:
            break
        seen.append(line)
        match = re.search(r" on (http://127\.0\.0\.1:\d+)\s*$", line)
        if match:
            return match.group(1)
    raise RuntimeError(f"reloop serve printed no address (exit code {process.poll()}): {''.join(seen)!r}")


def openai_client(server: str, session: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{server}/s/{session}/v1", api_key="sk-conformance", max_retries=0, timeout=30)


def anthropic_client(server: str, session: str, **auth) -> anthropic.Anthropic:
    auth = auth or {"api_key": "sk-ant-conformance"}
    return anthropic.Anthropic(base_url=f"{server}/s/{session}", max_retries=0, timeout=30, **auth)


def assert_recorded_call(name: str, call_id: str, arguments) -> None:
    assert name == TOOL_NAME
    assert call_id == TOOL_CALL_ID
    if isinstance(arguments, str):
        arguments = json.loads(arguments)
    assert arguments == TOOL_ARGUMENTS


# --- OpenAI Chat Completions ------------------------------------------------


def assert_chat_usage(usage) -> None:
    assert usage is not None, "no usage"
    assert usage.prompt_tokens > 0 and usage.completion_tokens > 0, usage
    assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens, usage


def test_chat_text(server):
    completion = openai_client(server, "text.chat").chat.completions.create(
        model=OPENAI_MODEL, messages=[{"role": "user", "content": TEXT_PROMPT}]
    )
    assert completion.object == "chat.completion"
    assert completion.model == OPENAI_MODEL
    choice = completion.choices[0]
    assert choice.message.role == "assistant"
    assert choice.message.content == TEXT
    assert not choice.message.tool_calls
    assert choice.finish_reason == "stop"
    assert_chat_usage(completion.usage)
    assert completion._request_id == "req_reloop_text.chat_00000"


def test_chat_text_stream(server):
    deltas = []
    with openai_client(server, "text.chat-stream").chat.completions.stream(
        model=OPENAI_MODEL,
        messages=[{"role": "user", "content": TEXT_PROMPT}],
        stream_options={"include_usage": True},
    ) as stream:
        for event in stream:
            if event.type == "content.delta":
                deltas.append(event.delta)
        completion = stream.get_final_completion()
    assert len(deltas) > 1, "streamed in pieces"
    assert "".join(deltas) == TEXT
    assert completion.model == OPENAI_MODEL
    assert completion.choices[0].message.content == TEXT
    assert completion.choices[0].finish_reason == "stop"
    assert_chat_usage(completion.usage)


def test_chat_tool_call(server):
    completion = openai_client(server, "tool.chat").chat.completions.create(
        model=OPENAI_MODEL, messages=[{"role": "user", "content": TOOL_PROMPT}], tools=CHAT_TOOLS
    )
    choice = completion.choices[0]
    assert choice.finish_reason == "tool_calls"
    assert choice.message.content == TOOL_PREAMBLE
    [call] = choice.message.tool_calls
    assert call.type == "function"
    assert_recorded_call(call.function.name, call.id, call.function.arguments)
    assert_chat_usage(completion.usage)


def test_chat_tool_call_stream(server):
    argument_deltas = []
    with openai_client(server, "tool.chat-stream").chat.completions.stream(
        model=OPENAI_MODEL,
        messages=[{"role": "user", "content": TOOL_PROMPT}],
        tools=CHAT_TOOLS,
        stream_options={"include_usage": True},
    ) as stream:
        for event in stream:
            if event.type == "tool_calls.function.arguments.delta":
                argument_deltas.append(event.arguments_delta)
        completion = stream.get_final_completion()
    assert len(argument_deltas) > 1, "arguments streamed in pieces"
    choice = completion.choices[0]
    assert choice.finish_reason == "tool_calls"
    assert choice.message.content == TOOL_PREAMBLE
    [call] = choice.message.tool_calls
    assert_recorded_call(call.function.name, call.id, call.function.arguments)
    assert_chat_usage(completion.usage)


def test_chat_stream_without_include_usage_has_no_usage(server):
    # The real API sends usage in a stream only when asked to.
    chunks = list(
        openai_client(server, "text.chat-stream-no-usage").chat.completions.create(
            model=OPENAI_MODEL, messages=[{"role": "user", "content": TEXT_PROMPT}], stream=True
        )
    )
    assert all(chunk.usage is None for chunk in chunks)
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == TEXT


# --- OpenAI Responses -------------------------------------------------------


def assert_responses_usage(usage) -> None:
    assert usage is not None, "no usage"
    assert usage.input_tokens > 0 and usage.output_tokens > 0, usage
    assert usage.total_tokens == usage.input_tokens + usage.output_tokens, usage


def assert_responses_tool_call(response) -> None:
    assert response.status == "completed"
    assert response.output_text == TOOL_PREAMBLE
    [call] = [item for item in response.output if item.type == "function_call"]
    assert_recorded_call(call.name, call.call_id, call.arguments)
    assert_responses_usage(response.usage)


def test_responses_text(server):
    response = openai_client(server, "text.responses").responses.create(model=OPENAI_MODEL, input=TEXT_PROMPT)
    assert response.object == "response"
    assert response.model == OPENAI_MODEL
    assert response.status == "completed"
    assert response.incomplete_details is None
    assert response.output_text == TEXT
    assert [item.type for item in response.output] == ["message"]
    assert_responses_usage(response.usage)


def test_responses_text_stream(server):
    deltas = []
    with openai_client(server, "text.responses-stream").responses.stream(model=OPENAI_MODEL, input=TEXT_PROMPT) as stream:
        for event in stream:
            if event.type == "response.output_text.delta":
                deltas.append(event.delta)
        response = stream.get_final_response()
    assert len(deltas) > 1, "streamed in pieces"
    assert "".join(deltas) == TEXT
    assert response.model == OPENAI_MODEL
    assert response.status == "completed"
    assert response.output_text == TEXT
    assert_responses_usage(response.usage)


def test_responses_tool_call(server):
    response = openai_client(server, "tool.responses").responses.create(
        model=OPENAI_MODEL, input=TOOL_PROMPT, tools=RESPONSES_TOOLS
    )
    assert_responses_tool_call(response)


def test_responses_tool_call_stream(server):
    argument_deltas = []
    with openai_client(server, "tool.responses-stream").responses.stream(
        model=OPENAI_MODEL, input=TOOL_PROMPT, tools=RESPONSES_TOOLS
    ) as stream:
        for event in stream:
            if event.type == "response.function_call_arguments.delta":
                argument_deltas.append(event.delta)
        response = stream.get_final_response()
    assert len(argument_deltas) > 1, "arguments streamed in pieces"
    assert_responses_tool_call(response)


# --- Anthropic Messages -----------------------------------------------------


def assert_anthropic_usage(usage) -> None:
    assert usage.input_tokens > 0 and usage.output_tokens > 0, usage


def assert_anthropic_tool_call(message) -> None:
    assert message.stop_reason == "tool_use"
    assert [block.type for block in message.content] == ["text", "tool_use"]
    assert message.content[0].text == TOOL_PREAMBLE
    call = message.content[1]
    assert_recorded_call(call.name, call.id, call.input)
    assert_anthropic_usage(message.usage)


def test_anthropic_text(server):
    message = anthropic_client(server, "text.messages").messages.create(
        model=ANTHROPIC_MODEL, max_tokens=MAX_TOKENS, messages=[{"role": "user", "content": TEXT_PROMPT}]
    )
    assert message.type == "message" and message.role == "assistant"
    assert message.model == ANTHROPIC_MODEL
    assert [block.type for block in message.content] == ["text"]
    assert message.content[0].text == TEXT
    assert message.stop_reason == "end_turn"
    assert message.stop_sequence is None
    assert_anthropic_usage(message.usage)
    assert message._request_id == "req_reloop_text.messages_00000"


def test_anthropic_text_stream(server):
    with anthropic_client(server, "text.messages-stream").messages.stream(
        model=ANTHROPIC_MODEL, max_tokens=MAX_TOKENS, messages=[{"role": "user", "content": TEXT_PROMPT}]
    ) as stream:
        deltas = list(stream.text_stream)
        message = stream.get_final_message()
    assert len(deltas) > 1, "streamed in pieces"
    assert "".join(deltas) == TEXT
    assert message.model == ANTHROPIC_MODEL
    assert message.content[0].text == TEXT
    assert message.stop_reason == "end_turn"
    assert_anthropic_usage(message.usage)


def test_anthropic_tool_call(server):
    message = anthropic_client(server, "tool.messages").messages.create(
        model=ANTHROPIC_MODEL, max_tokens=MAX_TOKENS, messages=[{"role": "user", "content": TOOL_PROMPT}], tools=ANTHROPIC_TOOLS
    )
    assert_anthropic_tool_call(message)


def test_anthropic_tool_call_stream(server):
    json_deltas = []
    with anthropic_client(server, "tool.messages-stream").messages.stream(
        model=ANTHROPIC_MODEL, max_tokens=MAX_TOKENS, messages=[{"role": "user", "content": TOOL_PROMPT}], tools=ANTHROPIC_TOOLS
    ) as stream:
        for event in stream:
            if event.type == "input_json":
                json_deltas.append(event.partial_json)
        message = stream.get_final_message()
    assert len([d for d in json_deltas if d]) > 1, "input streamed in pieces"
    assert_anthropic_tool_call(message)



# Long enough for claude-haiku-4-5's 4,096-token minimum cacheable prefix.
CACHED_SYSTEM = " ".join(f"House rule {n}: read before you edit, test before you answer." for n in range(600))


def cached_request(client, *, breakpoints: int = 1, stream: bool = False):
    system = [{"type": "text", "text": CACHED_SYSTEM, "cache_control": {"type": "ephemeral"}}]
    content = [{"type": "text", "text": TEXT_PROMPT, "cache_control": {"type": "ephemeral"}} for _ in range(breakpoints - 1)]
    messages = [{"role": "user", "content": content or TEXT_PROMPT}]
    args = dict(model=ANTHROPIC_MODEL, max_tokens=MAX_TOKENS, system=system, messages=messages)
    if stream:
        with client.messages.stream(**args) as events:
            return events.get_final_message()
    return client.messages.create(**args)


@pytest.mark.parametrize("stream", [False, True])
def test_anthropic_prompt_cache_usage(server, stream):
    """A breakpoint on a long system prompt: the first call writes it, the
    same call again (a retry, so the same recorded answer) reads it, in the
    usage fields the SDK exposes, streamed or not."""
    client = anthropic_client(server, f"text.messages-cache-{stream}")
    first = cached_request(client, stream=stream)
    assert first.usage.cache_creation_input_tokens >= 4096, first.usage
    assert first.usage.cache_read_input_tokens == 0, first.usage
    again = cached_request(client, stream=stream)
    assert again.usage.cache_read_input_tokens == first.usage.cache_creation_input_tokens, again.usage
    assert again.usage.cache_creation_input_tokens == 0, again.usage
    assert again.usage.input_tokens == first.usage.input_tokens, "only the uncached tail counts as input"


def test_anthropic_more_than_four_breakpoints_is_refused(server):
    with pytest.raises(anthropic.BadRequestError) as refused:
        cached_request(anthropic_client(server, "text.messages-cache-5"), breakpoints=5)
    assert refused.value.status_code == 400
    assert "A maximum of 4 blocks with cache_control may be provided. Found 5." in str(refused.value)

# --- Google Gemini ------------------------------------------------------------


def gemini_client(server: str, session: str) -> genai.Client:
    options = genai_types.HttpOptions(base_url=f"{server}/s/{session}", timeout=30_000)
    return genai.Client(api_key="conformance-gemini-key", http_options=options)


def assert_gemini_usage(usage) -> None:
    assert usage is not None, "no usage"
    assert usage.prompt_token_count > 0 and usage.candidates_token_count > 0, usage
    assert usage.total_token_count == usage.prompt_token_count + usage.candidates_token_count, usage


def gemini_config(**extra) -> genai_types.GenerateContentConfig:
    # The SDK would call Python functions itself; these are declarations only.
    no_auto = genai_types.AutomaticFunctionCallingConfig(disable=True)
    return genai_types.GenerateContentConfig(tools=GEMINI_TOOLS, automatic_function_calling=no_auto, **extra)


def test_gemini_text(server):
    client = gemini_client(server, "text.gemini")  # kept: the SDK closes its connection with the client
    response = client.models.generate_content(model=GEMINI_MODEL, contents=TEXT_PROMPT)
    assert response.text == TEXT
    assert response.model_version == GEMINI_MODEL
    assert response.candidates[0].finish_reason == genai_types.FinishReason.STOP
    assert response.candidates[0].content.role == "model"
    assert_gemini_usage(response.usage_metadata)


def test_gemini_text_stream(server):
    client = gemini_client(server, "text.gemini-stream")
    chunks = list(client.models.generate_content_stream(model=GEMINI_MODEL, contents=TEXT_PROMPT))
    assert len(chunks) > 1, "streamed in pieces"
    assert "".join(chunk.text or "" for chunk in chunks) == TEXT
    assert chunks[-1].candidates[0].finish_reason == genai_types.FinishReason.STOP
    assert all(chunk.candidates[0].finish_reason is None for chunk in chunks[:-1])
    assert_gemini_usage(chunks[-1].usage_metadata)


@pytest.mark.parametrize("stream", [False, True])
def test_gemini_function_call_round_trip(server, stream):
    """The model calls the declared function; its result goes back as a
    functionResponse (by name, as the SDK sends it), and the answer the
    second exchange holds comes only if the server read that result."""
    client = gemini_client(server, f"roundtrip.gemini-{stream}")
    ask = genai_types.Content(role="user", parts=[genai_types.Part.from_text(text=TOOL_PROMPT)])

    def generate(contents):
        if not stream:
            return client.models.generate_content(model=GEMINI_MODEL, contents=contents, config=gemini_config())
        chunks = list(client.models.generate_content_stream(model=GEMINI_MODEL, contents=contents, config=gemini_config()))
        assert chunks[-1].candidates[0].finish_reason == genai_types.FinishReason.STOP
        parts = [part for chunk in chunks for part in chunk.candidates[0].content.parts]
        return genai_types.GenerateContentResponse(
            candidates=[genai_types.Candidate(content=genai_types.Content(role="model", parts=parts))],
            usage_metadata=chunks[-1].usage_metadata,
        )

    first = generate([ask])
    [call] = first.function_calls
    assert_recorded_call(call.name, call.id, call.args)
    assert_gemini_usage(first.usage_metadata)
    result = genai_types.Part.from_function_response(name=TOOL_NAME, response={"output": WEATHER_RESULT})
    second = generate([ask, first.candidates[0].content, genai_types.Content(role="user", parts=[result])])
    assert second.text == ROUNDTRIP_ANSWER
    assert not second.function_calls


def test_gemini_rate_limit_is_the_sdks_client_error(tmp_path):
    """A 429 fault reaches the SDK as Google sends it: ClientError with
    code 429 and status RESOURCE_EXHAUSTED."""
    scenario = tmp_path / "rate-limited.yaml"
    scenario.write_text(
        "name: rate-limited\n"
        "model: gemini-2.5-flash\n"
        "task: What is the capital of France?\n"
        f"recording: {RECORDINGS / 'text.yaml'}\n"
        "faults:\n"
        "  - { exchange: 0, http: { status: 429 } }\n"
    )
    with serving("--scenario", str(scenario), recording=None) as address:
        client = gemini_client(address, "limited")
        with pytest.raises(genai_errors.ClientError) as raised:
            client.models.generate_content(model=GEMINI_MODEL, contents=TEXT_PROMPT)
        assert raised.value.code == 429
        assert raised.value.status == "RESOURCE_EXHAUSTED"
        # The retry the SDK's caller makes is answered.
        assert client.models.generate_content(model=GEMINI_MODEL, contents=TEXT_PROMPT).text == TEXT


def test_gemini_count_tokens(server):
    client = gemini_client(server, "text.gemini-count")
    counted = client.models.count_tokens(model=GEMINI_MODEL, contents=TEXT_PROMPT)
    assert counted.total_tokens > 0


# --- every body and event against the SDKs' own types --------------------
#
# The SDKs build their objects without validation, so a missing field only
# shows when a program reads it. Here every raw body and stream event is
# validated against the SDK's pydantic type, which marks what the API always
# sends as required.


def event_types(union) -> dict:
    """`type` literal -> model class, for a union of stream events."""
    members = typing.get_args(union)
    if typing.get_origin(union) is typing.Annotated:
        members = typing.get_args(members[0])
    return {typing.get_args(m.model_fields["type"].annotation)[0]: m for m in members}


RESPONSES_EVENTS = event_types(ResponseStreamEvent)
ANTHROPIC_EVENTS = event_types(RawMessageStreamEvent)


class TypeMismatch(AssertionError):
    """A body or event the SDK's own type rejects."""


def validate(kind, data) -> None:
    try:
        kind.model_validate(data)
    except pydantic.ValidationError as e:
        missing = [".".join(map(str, error["loc"])) + f" ({error['type']})" for error in e.errors()]
        raise TypeMismatch(f"{kind.__name__} from {json.dumps(data)[:200]}...: {missing}") from None


def sse_data(lines) -> list:
    return [json.loads(line[6:]) for line in lines if line.startswith("data: ") and line != "data: [DONE]"]


def validate_events(events, classes) -> None:
    for event in events:
        if event["type"] == "ping" and classes is ANTHROPIC_EVENTS:
            assert event == {"type": "ping"}  # the SDK skips pings
            continue
        validate(classes[event["type"]], event)


def raw_chat(server, stream):
    api = openai_client(server, f"tool.raw-chat-{stream}").chat.completions.with_streaming_response
    extra = {"stream": True, "stream_options": {"include_usage": True}} if stream else {}
    with api.create(model=OPENAI_MODEL, messages=[{"role": "user", "content": TOOL_PROMPT}], tools=CHAT_TOOLS, **extra) as raw:
        if stream:
            for chunk in sse_data(raw.iter_lines()):
                validate(ChatCompletionChunk, chunk)
        else:
            validate(ChatCompletion, raw.json())


def raw_responses(server, stream):
    api = openai_client(server, f"tool.raw-responses-{stream}").responses.with_streaming_response
    with api.create(model=OPENAI_MODEL, input=TOOL_PROMPT, tools=RESPONSES_TOOLS, stream=stream) as raw:
        if stream:
            validate_events(sse_data(raw.iter_lines()), RESPONSES_EVENTS)
        else:
            validate(Response, raw.json())


def raw_messages(server, stream):
    api = anthropic_client(server, f"tool.raw-messages-{stream}").messages.with_streaming_response
    with api.create(
        model=ANTHROPIC_MODEL, max_tokens=MAX_TOKENS, messages=[{"role": "user", "content": TOOL_PROMPT}], tools=ANTHROPIC_TOOLS, stream=stream
    ) as raw:
        if stream:
            validate_events(sse_data(raw.iter_lines()), ANTHROPIC_EVENTS)
        else:
            validate(Message, raw.json())


def raw_openai_models(server, _):
    for model in openai_client(server, "text.raw-models").models.with_raw_response.list().http_response.json()["data"]:
        validate(OpenaiModel, model)


def raw_anthropic_models(server, _):
    body = anthropic_client(server, "text.raw-models").models.with_raw_response.list().http_response.json()
    if not isinstance(body.get("has_more"), bool):
        raise TypeMismatch(f"no `has_more` in {body}")
    for model in body["data"]:
        validate(ModelInfo, model)


@pytest.mark.parametrize(
    "check, stream",
    [
        (raw_chat, False),
        (raw_chat, True),
        (raw_responses, False),
        (raw_responses, True),
        (raw_messages, False),
        (raw_messages, True),
        (raw_openai_models, None),
        (raw_anthropic_models, None),
    ],
    ids=["chat", "chat-stream", "responses", "responses-stream", "messages", "messages-stream", "openai-models", "anthropic-models"],
)
def test_raw_bodies_match_the_sdk_types(server, check, stream):
    check(server, stream)


# --- keys, models, errors ---------------------------------------------------


@pytest.mark.parametrize(
    "auth", [{"api_key": "sk-ant-conformance"}, {"auth_token": "bearer-conformance"}], ids=["x-api-key", "bearer"]
)
def test_both_key_headers_are_accepted(server, auth):
    # The Anthropic SDK sends `api_key` as `x-api-key` and `auth_token` as
    # `Authorization: Bearer`; the OpenAI SDK (every test above) sends Bearer.
    client = anthropic_client(server, f"text.key-{next(iter(auth))}", **auth)
    message = client.messages.create(model=ANTHROPIC_MODEL, max_tokens=MAX_TOKENS, messages=[{"role": "user", "content": TEXT_PROMPT}])
    assert message.content[0].text == TEXT


def test_openai_models_list(server):
    models = list(openai_client(server, "text.models").models.list())
    assert models, "at least one model"
    assert all(model.object == "model" and model.id for model in models)


def exhaust(client_call):
    """Calls once (the recording's only exchange), then again: the second
    call is past the recording's end."""
    client_call(0)
    with pytest.raises(Exception) as raised:
        client_call(1)
    return raised.value


def assert_divergence(error, kind) -> None:
    assert isinstance(error, kind), f"{type(error).__name__}: {error}"
    assert error.status_code == 400
    assert "reloop" in str(error) and "divergence" in str(error), str(error)
    assert "recording_exhausted" in str(error), str(error)


def follow_up(turn: int):
    messages = [{"role": "user", "content": TEXT_PROMPT}]
    if turn:
        messages += [{"role": "assistant", "content": TEXT}, {"role": "user", "content": "And of Italy?"}]
    return messages


def test_exhausted_recording_is_an_openai_bad_request(server):
    chat = openai_client(server, "text.exhausted-chat").chat.completions
    error = exhaust(lambda turn: chat.create(model=OPENAI_MODEL, messages=follow_up(turn)))
    assert_divergence(error, openai.BadRequestError)
    assert error.type == "reloop_divergence" and error.code == "recording_exhausted"

    responses = openai_client(server, "text.exhausted-responses").responses
    error = exhaust(lambda turn: responses.create(model=OPENAI_MODEL, input=follow_up(turn), stream=bool(turn)))
    assert_divergence(error, openai.BadRequestError)


def test_exhausted_recording_is_an_anthropic_bad_request(server):
    messages = anthropic_client(server, "text.exhausted-messages").messages

    def call(turn):
        if turn:
            with messages.stream(model=ANTHROPIC_MODEL, max_tokens=MAX_TOKENS, messages=follow_up(turn)) as stream:
                return stream.get_final_message()
        return messages.create(model=ANTHROPIC_MODEL, max_tokens=MAX_TOKENS, messages=follow_up(turn))

    error = exhaust(call)
    assert_divergence(error, anthropic.BadRequestError)
    assert error.body["error"]["type"] == "reloop_divergence"


# --- errors the server raises itself -------------------------------------------
# Each must carry the API's JSON error body so the SDK raises its typed
# error with the message, not a bare APIStatusError over an empty body.


def openai_error_body(error) -> dict:
    """The OpenAI SDK keeps the `error` object of the body."""
    assert isinstance(error.body, dict), f"{type(error).__name__} without a JSON body: {error.body!r}"
    assert isinstance(error.body.get("message"), str) and isinstance(error.body.get("type"), str), error.body
    return error.body


def anthropic_error_body(error) -> dict:
    """The Anthropic SDK keeps the whole body."""
    assert isinstance(error.body, dict), f"{type(error).__name__} without a JSON body: {error.body!r}"
    assert error.body.get("type") == "error", error.body
    assert isinstance(error.body["error"].get("type"), str) and isinstance(error.body["error"].get("message"), str), error.body
    return error.body["error"]

def assert_typed_errors(cases, body_of) -> None:
    """Each call raises the SDK's typed error with the status and the server's message."""
    for status, kind, call in cases:
        error = raised(call)
        assert isinstance(error, kind), f"{status}: {type(error).__name__}: {error}"
        assert error.status_code == status, f"{status}: {error}"
        body = body_of(error)
        assert body["message"] in str(error), f"{status}: the SDK shows the message: {error}"



def raised(call):
    with pytest.raises(Exception) as caught:
        call()
    return caught.value


BIG_TEXT = "a" * (3 * 1024 * 1024)
BIG_HEADER = {"x-padding": "a" * (40 * 1024)}


def test_openai_sdk_raises_typed_errors_for_every_server_error(server):
    client = openai_client(server, "text.errors-openai")

    def chat(session="text.errors-openai", content=TEXT_PROMPT, **extra):
        return openai_client(server, session).chat.completions.create(model=OPENAI_MODEL, messages=[{"role": "user", "content": content}], **extra)

    cases = [
        (404, openai.NotFoundError, lambda: chat(session="nobody")),
        (404, openai.NotFoundError, lambda: client.get("/no/such/route", cast_to=object)),
        (405, openai.APIStatusError, lambda: client.get("/chat/completions", cast_to=object)),
        (413, openai.APIStatusError, lambda: chat(content=BIG_TEXT)),
        (431, openai.APIStatusError, lambda: chat(extra_headers=BIG_HEADER)),
    ]
    assert_typed_errors(cases, openai_error_body)


def test_anthropic_sdk_raises_typed_errors_for_every_server_error(server):
    client = anthropic_client(server, "text.errors-anthropic")

    def create(session="text.errors-anthropic", content=TEXT_PROMPT, **extra):
        return anthropic_client(server, session).messages.create(
            model=ANTHROPIC_MODEL, max_tokens=MAX_TOKENS, messages=[{"role": "user", "content": content}], **extra
        )

    too_large = getattr(anthropic, "RequestTooLargeError", anthropic.APIStatusError)
    cases = [
        (404, anthropic.NotFoundError, lambda: create(session="nobody")),
        (404, anthropic.NotFoundError, lambda: client.get("/v1/no/such/route", cast_to=object)),
        (405, anthropic.APIStatusError, lambda: client.get("/v1/messages", cast_to=object)),
        (413, too_large, lambda: create(content=BIG_TEXT)),
        (431, anthropic.APIStatusError, lambda: create(extra_headers=BIG_HEADER)),
    ]
    assert_typed_errors(cases, anthropic_error_body)


@pytest.fixture(scope="module")
def one_session_server():
    """A second `reloop serve` allowing one live session, for the 503."""
    with serving("--max-sessions", "1") as address:
        yield address


def test_too_many_sessions_is_a_typed_server_error(one_session_server):
    server = one_session_server
    prompt = [{"role": "user", "content": TEXT_PROMPT}]
    openai_client(server, "text.first").chat.completions.create(model=OPENAI_MODEL, messages=prompt)
    error = raised(lambda: openai_client(server, "text.second").chat.completions.create(model=OPENAI_MODEL, messages=prompt))
    assert isinstance(error, openai.InternalServerError) and error.status_code == 503, f"{type(error).__name__}: {error}"
    assert "too many live sessions" in openai_error_body(error)["message"]
    error = raised(lambda: anthropic_client(server, "text.third").messages.create(model=ANTHROPIC_MODEL, max_tokens=MAX_TOKENS, messages=prompt))
    assert isinstance(error, anthropic.InternalServerError) and error.status_code == 503, f"{type(error).__name__}: {error}"
    assert "too many live sessions" in anthropic_error_body(error)["message"]
