"""SDK equality on the vcr cassettes (issue 10): for every cassette in
`harness/import/tests/fixtures/sessions/vcr-cassettes/`, `reloop import`
writes a neutral v2 recording and a raw one; each is served by
`reloop serve`, and

- raw mode is byte-identical on the wire: every interaction's recorded body
  (a gzip body included) comes back byte for byte, with its status;
- the official SDK (openai, anthropic, google-genai) accumulates the same final object
  from the neutral replay (`--recorded-usage`) as from the recorded bytes
  (served raw, proven identical above): text, thinking, signatures,
  reasoning items, tool calls, ids, stop reason and usage, streamed through
  the SDKs' own stream helpers and not. google-genai has no stream
  helper: a Gemini stream compares as the list of its chunk objects.

The fields a neutral replay cannot reproduce are listed in `NOT_RENDERED`,
each with the reason; everything else must be equal.

    python .ci/sdk_cassettes.py [path/to/reloop]   # or RELOOP_BIN=...; default target/release/reloop
"""

import os
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

if __name__ == "__main__":
    import pytest

    if len(sys.argv) > 1:
        os.environ["RELOOP_BIN"] = sys.argv[1]
    sys.exit(pytest.main([__file__, "-v", "-rxX", "-p", "no:cacheprovider", "-o", "console_output_style=classic"]))

import inspect
import json
import subprocess
import urllib.request

import anthropic
import openai
import pytest
import yaml
from google import genai
from google.genai import types as genai_types

import sdk_conformance as conformance

# Every cassette: the OpenAI and Anthropic ones keep the request `body` as
# vcrpy writes it, the Gemini ones (pydantic-ai's) its `parsed_body`.
CASSETTES = sorted((conformance.ROOT / "harness/import/tests/fixtures/sessions/vcr-cassettes").glob("*/*.yaml"))

# Fields of the final objects that a neutral replay does not reproduce, by
# API, as paths into `model_dump()`; `*` stands for every list element.
# Everything a response carried that reloop does not model (the Responses
# envelope, Chat's `service_tier`, Anthropic's `caller`, `stop_details`,
# `container`, Responses' `phase`, Gemini's per-chunk `usageMetadata`) is
# kept in the recording (`extra`) and sent back, so only what was never in
# the response body is left out.
NOT_RENDERED = {
    "responses": [],
    "chat": [],
    "anthropic": [],
    # The SDK keeps the HTTP response (headers) on every object: not part of the body.
    "gemini": ["sdk_http_response"],
}


def api_of(path: str) -> str:
    if "/models/" in path:
        return "gemini"
    if path.endswith("/chat/completions"):
        return "chat"
    if path.endswith("/responses"):
        return "responses"
    return "anthropic"


def interactions(cassette: pathlib.Path) -> list:
    """(API path, request body, recorded status, recorded body bytes) per
    interaction; the bytes are None where the cassette kept only the parsed
    JSON (`parsed_body`), which has no bytes to compare."""
    out = []
    for interaction in yaml.safe_load(cassette.read_text())["interactions"]:
        request, response = interaction["request"], interaction["response"]
        body = response["body"]["string"] if "body" in response else None
        body = body.encode() if isinstance(body, str) else body
        version = "v1beta" if "/v1beta/" in request["uri"] else "v1"
        if f"/{version}/" in request["uri"]:
            path = f"/{version}/" + request["uri"].split(f"/{version}/", 1)[1]
        else:
            # A provider whose base URL has no version (DeepSeek's
            # `https://api.deepseek.com/chat/completions`): reloop serves
            # its API under `/v1`, where an SDK pointed at it asks.
            path = "/v1/" + request["uri"].split("://", 1)[1].split("/", 1)[1]
        if version == "v1":
            path = path.split("?", 1)[0]
        sent = request["parsed_body"] if "parsed_body" in request else json.loads(request["body"])
        out.append((path, sent, response["status"]["code"], body))
    return out


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    """Each cassette imported once: cassette -> (neutral scenario, raw
    scenario), the skeleton `import` wrote (its faults replay the failed
    calls) and its copy replaying the raw recording."""
    scenarios = {}
    for cassette in CASSETTES:
        out = tmp_path_factory.mktemp(cassette.stem.replace(".", "-"))
        subprocess.run([str(conformance.reloop_bin()), "import", str(cassette), "--out", str(out)], check=True, capture_output=True)
        raw = next(out.glob("*.raw.recording.yaml"))
        neutral = next(p for p in out.glob("*.recording.yaml") if p != raw)
        skeleton = out / neutral.name.replace(".recording.yaml", ".yaml")
        raw_scenario = out / "raw" / skeleton.name
        raw_scenario.parent.mkdir()
        spec = yaml.safe_load(skeleton.read_text())
        spec["recording"] = str(raw)
        raw_scenario.write_text(json.dumps(spec))  # JSON is YAML
        scenarios[cassette] = (skeleton, raw_scenario)
    return scenarios


def session_of(scenario: pathlib.Path) -> str:
    return yaml.safe_load(scenario.read_text())["name"]


def post_raw(base: str, path: str, body: dict) -> tuple:
    """The status and the undecoded body bytes of a plain POST."""
    headers = {"content-type": "application/json", "anthropic-version": "2023-06-01", "x-api-key": "sk-cassette"}
    request = urllib.request.Request(base + path, data=json.dumps(body).encode(), headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


# Raw replay still checks each request against the recording; these would
# diverge before their bytes are sent. None today: a client that names its
# results with its own call ids (pydantic-ai's Gemini) is matched by the
# calls' names and arguments (issue 32's stable ids).
RAW_NOT_EQUAL: dict[str, str] = {}


def cases(not_equal):
    """Every cassette as a test case; a strict xfail where `not_equal` names
    why it differs, so a fix shows as a failure to be taken off the list."""
    for cassette in CASSETTES:
        reason = not_equal.get(cassette.stem)
        marks = [pytest.mark.xfail(reason=reason, strict=True)] if reason else []
        yield pytest.param(cassette, id=cassette.stem, marks=marks)


@pytest.mark.parametrize("cassette", list(cases(RAW_NOT_EQUAL)))
def test_raw_replay_is_byte_identical(imported, cassette):
    _, raw = imported[cassette]
    with conformance.serving("--raw", "--scenario", str(raw), recording=None) as server:
        base = f"{server}/s/{session_of(raw)}/r/bytes"
        previous = None
        for index, (path, body, status, recorded) in enumerate(interactions(cassette)):
            # A request identical to the one before is its retry and gets the
            # same exchange again (docs/recording-format.md, Retries).
            expected = previous[1:] if previous and previous[0] == body else (status, recorded)
            answered = post_raw(base, path, body)
            if expected[1] is None:
                answered = (answered[0], None)
            assert answered == expected, f"interaction {index} ({path}): not byte for byte"
            previous = (body, *expected)


def call(method, body: dict):
    """`method(**body)`, fields its signature lacks passed as `extra_body`."""
    known = inspect.signature(method).parameters
    kwargs = {key: value for key, value in body.items() if key in known}
    extra = {key: value for key, value in body.items() if key not in known}
    return method(**kwargs, extra_body=extra or None)


def gemini_objects(base: str, path: str, body: dict):
    """google-genai's objects for a Gemini request at `path`: the whole
    response, or the list of a stream's chunks."""
    model, method = path.split("/models/", 1)[1].split("?", 1)[0].split(":")
    client = genai.Client(api_key="cassette-gemini-key", http_options=genai_types.HttpOptions(base_url=base, timeout=30_000))
    config = dict(body.get("generationConfig", {}))
    config.update({key: body[key] for key in ("systemInstruction", "tools", "toolConfig") if key in body})
    config = genai_types.GenerateContentConfig.model_validate(config)
    config.automatic_function_calling = genai_types.AutomaticFunctionCallingConfig(disable=True)
    contents = [genai_types.Content.model_validate(content) for content in body["contents"]]
    if method == "streamGenerateContent":
        return [chunk.model_dump(mode="json") for chunk in client.models.generate_content_stream(model=model, contents=contents, config=config)]
    return client.models.generate_content(model=model, contents=contents, config=config).model_dump(mode="json")


def final_object(api: str, base: str, body: dict, path: str = ""):
    """What the SDK accumulates for `body`: its stream helper's final object, or the whole response."""
    if api == "gemini":
        return gemini_objects(base, path, body)
    stream = body.get("stream", False)
    kwargs = {key: value for key, value in body.items() if key != "stream"}
    if api == "anthropic":
        client = anthropic.Anthropic(base_url=base, api_key="sk-ant-cassette", max_retries=0, timeout=30)
        if stream:
            with call(client.messages.stream, kwargs) as events:
                return events.get_final_message().model_dump(mode="json")
        return call(client.messages.create, body).model_dump(mode="json")
    client = openai.OpenAI(base_url=base + "/v1", api_key="sk-cassette", max_retries=0, timeout=30)
    if api == "chat":
        if stream:
            with call(client.chat.completions.stream, kwargs) as events:
                return events.get_final_completion().model_dump(mode="json")
        return call(client.chat.completions.create, body).model_dump(mode="json")
    if stream:
        with call(client.responses.stream, kwargs) as events:
            return events.get_final_response().model_dump(mode="json")
    return call(client.responses.create, body).model_dump(mode="json")


def without(value, path: list):
    """`value` with the field at `path` (`*`: every element) removed."""
    if not path:
        return value
    head, rest = path[0], path[1:]
    if head == "*" and isinstance(value, list):
        return [without(item, rest) for item in value]
    if isinstance(value, dict) and head in value:
        value = dict(value)
        if rest:
            value[head] = without(value[head], rest)
        else:
            del value[head]
    return value


def differences(left, right, at: str = "") -> list:
    """The paths where `left` and `right` differ, with both values."""
    if isinstance(left, dict) and isinstance(right, dict):
        return [d for key in sorted(set(left) | set(right)) for d in differences(left.get(key), right.get(key), f"{at}.{key}")]
    if isinstance(left, list) and isinstance(right, list) and len(left) == len(right):
        return [d for i, (l, r) in enumerate(zip(left, right)) for d in differences(l, r, f"{at}[{i}]")]
    return [] if left == right else [f"{at or '.'}: {left!r:.120} != {right!r:.120}"]


def comparable(api: str, final):
    if isinstance(final, list):
        return [comparable(api, chunk) for chunk in final]
    for field in NOT_RENDERED[api]:
        final = without(final, field.split("."))
    return final


# What still differs, each a strict xfail so a fix shows as a failure to be
# taken off the list.
# None today: the OpenRouter cassette, which repeats `role` and the call's
# id in every chunk, is replayed in its recorded chunk layout
# (docs/recording-format.md, `extra.chunks`).
NOT_EQUAL: dict[str, str] = {}


@pytest.mark.parametrize("cassette", list(cases(NOT_EQUAL)))
def test_neutral_replay_gives_the_sdk_the_recorded_objects(imported, cassette):
    neutral, raw = imported[cassette]
    recorded_flags, neutral_flags = ("--raw", "--scenario", str(raw)), ("--recorded-usage", "--scenario", str(neutral))
    with conformance.serving(*recorded_flags, recording=None) as recorded_server, conformance.serving(*neutral_flags, recording=None) as neutral_server:
        for index, (path, body, _, _) in enumerate(interactions(cassette)):
            api = api_of(path)
            recorded = comparable(api, outcome(api, f"{recorded_server}/s/{session_of(raw)}/r/sdk", body, path))
            replayed = comparable(api, outcome(api, f"{neutral_server}/s/{session_of(neutral)}/r/sdk", body, path))
            assert replayed == recorded, f"interaction {index} ({path}) differs at {differences(replayed, recorded)}"


def outcome(api: str, base: str, body: dict, path: str):
    """The SDK's final object, or the error it raised for a failed call
    (its type, status and parsed body), which the replay must raise alike."""
    try:
        return final_object(api, base, body, path)
    except (openai.APIStatusError, anthropic.APIStatusError) as error:
        return {"error": type(error).__name__, "status": error.status_code, "body": error.body}
    except genai.errors.APIError as error:
        return {"error": type(error).__name__, "status": error.code, "body": error.details}


def usage_chunks(body: bytes) -> int:
    """How many chunks of a recorded Chat stream carry a usage object."""
    chunks = (line[len(b"data: ") :] for line in body.splitlines() if line.startswith(b"data: {"))
    return sum(isinstance(json.loads(chunk).get("usage"), dict) for chunk in chunks)


def streams_without_usage():
    """Each Chat stream interaction recorded without a usage chunk."""
    for cassette in CASSETTES:
        for index, (path, body, _, recorded) in enumerate(interactions(cassette)):
            if api_of(path) == "chat" and body.get("stream") and recorded is not None and usage_chunks(recorded) == 0:
                yield pytest.param(cassette, index, id=f"{cassette.stem}-{index}")


@pytest.mark.parametrize("cassette,index", list(streams_without_usage()))
def test_a_stream_recorded_without_usage_is_served_without_it_when_the_client_asks(imported, cassette, index):
    """Issue 43: the recording is what the provider sent; a client asking
    for usage (`stream_options.include_usage`) of a stream recorded without
    it gets none, as from the recorded bytes, not the mock's count."""
    neutral, raw = imported[cassette]
    path, body, _, _ = interactions(cassette)[index]
    asking = {**body, "stream_options": {"include_usage": True}}
    recorded_flags, neutral_flags = ("--raw", "--scenario", str(raw)), ("--recorded-usage", "--scenario", str(neutral))
    with conformance.serving(*recorded_flags, recording=None) as recorded_server, conformance.serving(*neutral_flags, recording=None) as neutral_server:
        recorded = final_object("chat", f"{recorded_server}/s/{session_of(raw)}/r/usage", asking, path)
        replayed = final_object("chat", f"{neutral_server}/s/{session_of(neutral)}/r/usage", asking, path)
    assert recorded["usage"] is None
    assert replayed["usage"] is None, f"usage made up: {replayed['usage']}"
