"""reloop's pytest plugin through the official OpenAI and Anthropic SDKs.

Run from the repository root with the wheel installed (its `reloop` on
PATH, or RELOOP_BIN naming the binary):

    pytest python/tests
"""

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import openai
import pytest

REPO = Path(__file__).resolve().parents[2]
ONE_SHOT = REPO / "recordings" / "one-shot-answer.yaml"
CASSETTE = REPO / "harness/import/tests/fixtures/sessions/vcr-cassettes/openai-chat/simonw-llm__test_tool_use_basic.yaml"
QUESTION = [{"role": "user", "content": "iter() or into_iter()?"}]
# The cassette's tool, as its recorded request declared it: a request with no
# tools is never answered with a recorded tool call (docs/cli.md, `serve`).
MULTIPLY = [
    {
        "type": "function",
        "function": {
            "name": "multiply",
            "description": "Multiply two numbers.",
            "parameters": {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a", "b"]},
        },
    }
]


def reloop_binary() -> str:
    binary = os.environ.get("RELOOP_BIN") or shutil.which("reloop")
    assert binary, "reloop is on PATH (pip install the wheel) or named by RELOOP_BIN"
    return binary


@pytest.mark.reloop("../../recordings/one-shot-answer.yaml")
def test_the_openai_sdk_replays_a_recording(reloop):
    client = openai.OpenAI(base_url=reloop.openai_base_url, api_key="sk-test")
    reply = client.chat.completions.create(model="gpt-4o-mini", messages=QUESTION)
    assert "into_iter()" in reply.choices[0].message.content
    assert reply.usage.prompt_tokens > 0, "the server counts the prompt (o200k)"


@pytest.mark.reloop("../../recordings/one-shot-answer.yaml")
def test_the_anthropic_sdk_streams_the_same_recording(reloop):
    # Imported here: it takes about 2.5 s of CPU, which the first test, timed
    # by CI from `pip install` to a passing OpenAI replay, need not pay.
    import anthropic

    client = anthropic.Anthropic(base_url=reloop.anthropic_base_url, api_key="sk-ant-test")
    with client.messages.stream(model="claude-sonnet-4-5", max_tokens=1024, messages=QUESTION) as stream:
        text = "".join(stream.text_stream)
    assert "iter_mut()" in text


@pytest.mark.reloop("../../recordings/one-shot-answer.yaml")
def test_each_test_gets_a_fresh_replay(reloop):
    """The first request of this test is answered from the recording's
    start, though other tests replayed the same recording before."""
    client = openai.OpenAI(base_url=reloop.openai_base_url, api_key="sk-test")
    reply = client.chat.completions.create(model="gpt-4o-mini", messages=QUESTION)
    assert reply.choices[0].finish_reason == "stop"
    assert "/r/" in reloop.openai_base_url


@pytest.mark.reloop("../../recordings/one-shot-answer.yaml", faults=[{"exchange": 0, "http": {"status": 429, "headers": {"retry-after": "0"}}}])
def test_a_marker_fault_reaches_the_sdk_as_its_typed_error(reloop):
    client = openai.OpenAI(base_url=reloop.openai_base_url, api_key="sk-test", max_retries=0)
    with pytest.raises(openai.RateLimitError):
        client.chat.completions.create(model="gpt-4o-mini", messages=QUESTION)
    # The fault fires once; the retry gets the recorded answer.
    reply = client.chat.completions.create(model="gpt-4o-mini", messages=QUESTION)
    assert "into_iter()" in reply.choices[0].message.content


@pytest.mark.reloop(scenario="../../scenarios/one-shot-answer.yaml")
def test_a_scenario_marker_replays_its_recording(reloop):
    client = openai.OpenAI(base_url=reloop.openai_base_url, api_key="sk-test")
    reply = client.chat.completions.create(model="gpt-4o-mini", messages=QUESTION)
    assert "&Entry" in reply.choices[0].message.content


@pytest.mark.reloop("../../harness/import/tests/fixtures/sessions/vcr-cassettes/openai-chat/simonw-llm__test_tool_use_basic.yaml")
def test_a_vcrpy_cassette_is_replayed_directly(reloop):
    client = openai.OpenAI(base_url=reloop.openai_base_url, api_key="sk-test")
    reply = client.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "What is 1231 * 2331?"}], tools=MULTIPLY)
    (call,) = reply.choices[0].message.tool_calls
    assert (call.function.name, json.loads(call.function.arguments)) == ("multiply", {"a": 1231, "b": 2331}), call


def test_a_request_the_recording_did_not_expect_fails_the_test_with_the_divergence(pytester):
    pytester.makepyfile(
        f"""
        import openai, pytest

        @pytest.mark.reloop({str(ONE_SHOT)!r})
        def test_two_questions(reloop):
            client = openai.OpenAI(base_url=reloop.openai_base_url, api_key="sk-test", max_retries=0)
            client.chat.completions.create(model="gpt-4o-mini", messages=[{{"role": "user", "content": "first"}}])
            try:  # the code under test swallows the error: the test must fail all the same
                client.chat.completions.create(model="gpt-4o-mini", messages=[{{"role": "user", "content": "a second, unrecorded question"}}])
            except openai.BadRequestError:
                pass
        """
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    output = result.stdout.str()
    assert "the code under test sent a request the recording did not expect" in output, output
    assert re.search(r"divergence at request 1 \(recording_exhausted\)", output), output
    assert "expected: no further request" in output, output
    assert "a second, unrecorded question" in output, output


def test_record_then_replay_against_a_local_upstream(pytester, tmp_path):
    """`--reloop-record` writes the marker's recording through `reloop
    record` (no key kept); the next plain run replays it."""
    upstream = subprocess.Popen(
        [reloop_binary(), "serve", "--recording", str(ONE_SHOT), "--port", "0", "--quiet"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        address = upstream.stdout.readline().rsplit(" on ", 1)[1].strip()
        pytester.makepyfile(
            """
            import openai, pytest

            @pytest.mark.reloop("recordings/answer.yaml")
            def test_answer(reloop):
                client = openai.OpenAI(base_url=reloop.openai_base_url, api_key="sk-secret-do-not-keep-42", max_retries=0)
                reply = client.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "iter or into_iter?"}])
                assert "into_iter()" in reply.choices[0].message.content
            """
        )
        recorded = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--reloop-record", f"--reloop-upstream={address}/s/one-shot-answer")
        recorded.assert_outcomes(passed=1)
    finally:
        upstream.terminate()
        upstream.wait()
    recording = pytester.path / "recordings" / "answer.yaml"
    text = recording.read_text()
    assert "format: reloop.recording/v2" in text, text
    assert "sk-secret-do-not-keep-42" not in text, text
    # The header is named only in the `redacted:` list, never kept with a value.
    assert not re.search(r"^\s+authorization:", text, re.MULTILINE | re.IGNORECASE), text
    assert "- header:authorization" in text, text
    # The upstream is gone: the plain run is served from the file written.
    replayed = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    replayed.assert_outcomes(passed=1)
