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


@pytest.mark.reloop("../../recordings/one-shot-answer.yaml")
def test_code_that_builds_its_client_from_the_environment_replays_unchanged():
    """Issue 43: every test had to pass `reloop.openai_base_url` to its
    client; the marker alone now points the SDKs' variables at the replay."""
    reply = openai.OpenAI().chat.completions.create(model="gpt-4o-mini", messages=QUESTION)
    assert "into_iter()" in reply.choices[0].message.content
    assert os.environ["OPENAI_API_KEY"] == "sk-reloop-replay"
    assert os.environ["ANTHROPIC_BASE_URL"] + "/v1" == os.environ["OPENAI_BASE_URL"]


def test_the_variables_are_restored_after_a_marked_test_and_env_false_keeps_them(pytester):
    pytester.makepyfile(
        f"""
        import os, openai, pytest

        @pytest.mark.reloop({str(ONE_SHOT)!r})
        def test_marked():
            assert os.environ["OPENAI_API_KEY"] == "sk-reloop-replay"
            openai.OpenAI().chat.completions.create(model="gpt-4o-mini", messages=[{{"role": "user", "content": "q"}}])

        @pytest.mark.reloop({str(ONE_SHOT)!r}, env=False)
        def test_marked_without_env(reloop):
            assert os.environ["OPENAI_API_KEY"] == "sk-users-own"
            assert "OPENAI_BASE_URL" not in os.environ

        def test_after():
            assert os.environ["OPENAI_API_KEY"] == "sk-users-own"
            assert "OPENAI_BASE_URL" not in os.environ
        """
    )
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("OPENAI_API_KEY", "sk-users-own")
        patch.delenv("OPENAI_BASE_URL", raising=False)
        result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=3)


def _local_upstream(recording=ONE_SHOT):
    """`reloop serve` of `recording`, standing in for a provider: the
    process and the base URL of its session."""
    upstream = subprocess.Popen(
        [reloop_binary(), "serve", "--recording", str(recording), "--port", "0", "--quiet"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    address = upstream.stdout.readline().rsplit(" on ", 1)[1].strip()
    return upstream, f"{address}/s/{recording.name.split('.')[0]}"


def _record_through_upstream(pytester, mode, key, upstream_recording=ONE_SHOT):
    """Runs the test file under `--reloop-record-mode=MODE` against a local
    upstream serving `upstream_recording`, with the real key `key` in the
    environment; the run must pass. The upstream is stopped afterwards."""
    upstream, address = _local_upstream(upstream_recording)
    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("OPENAI_API_KEY", key)
            recorded = pytester.runpytest_subprocess("-p", "no:cacheprovider", f"--reloop-record-mode={mode}", f"--reloop-upstream={address}")
        recorded.assert_outcomes(passed=1)
    finally:
        upstream.terminate()
        upstream.wait()


ANSWER_TEST = """
import openai, pytest

@pytest.mark.reloop("recordings/answer.yaml")
def test_answer():
    reply = openai.OpenAI(max_retries=0).chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "iter or into_iter?"}])
    assert "into_iter()" in reply.choices[0].message.content
"""


def test_record_mode_once_records_what_is_missing_then_replays_it(pytester):
    """vcrpy's `once`: a test whose recording does not exist records it (the
    real key, from the environment, reaches the upstream and no file); the
    next run replays it, the upstream gone. `none` never records."""
    pytester.makepyfile(ANSWER_TEST)
    recording = pytester.path / "recordings" / "answer.yaml"
    missing = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--reloop-record-mode=none")
    assert missing.ret != 0 and not recording.exists()
    _record_through_upstream(pytester, "once", "sk-secret-do-not-keep-7")
    text = recording.read_text()
    assert "format: reloop.recording/v2" in text and "sk-secret-do-not-keep-7" not in text, text
    before = recording.stat().st_mtime_ns
    replayed = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--reloop-record-mode=once", "--reloop-upstream=http://127.0.0.1:9")
    replayed.assert_outcomes(passed=1)
    assert recording.stat().st_mtime_ns == before, "once: an existing recording is replayed, not recorded again"


TWO_QUESTIONS_TEST = """
import openai, pytest

@pytest.mark.reloop("recordings/answer.yaml")
def test_two_questions():
    client = openai.OpenAI(max_retries=0)
    first = client.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "first?"}])
    assert first.choices[0].message.content == "The old answer."
    second = client.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "second?"}])
    assert second.choices[0].message.content == "A live answer."
"""


def test_record_mode_new_episodes_replays_what_is_recorded_and_records_the_rest(pytester):
    """vcrpy's `new_episodes`: a recording that holds the test's first call
    replays it, and the call it lacks goes to the upstream; the recording is
    rewritten with both (no key in it), and the next run replays both with
    the upstream gone. Under `none` the call it lacks fails the test."""
    pytester.makepyfile(TWO_QUESTIONS_TEST)
    recording = pytester.path / "recordings" / "answer.yaml"
    recording.parent.mkdir()
    recording.write_text("format: reloop.recording/v2\nexchanges:\n  - parts: [ { type: text, text: The old answer. } ]\n")
    assert pytester.runpytest_subprocess("-p", "no:cacheprovider", "--reloop-record-mode=none").ret != 0, "the recording lacks the second call"
    live = pytester.path / "live.yaml"
    live.write_text("format: reloop.recording/v2\nexchanges:\n  - parts: [ { type: text, text: A live answer. } ]\n")
    _record_through_upstream(pytester, "new_episodes", "sk-secret-do-not-keep-8", live)
    text = recording.read_text()
    assert "The old answer." in text and "A live answer." in text and "sk-secret-do-not-keep-8" not in text, text
    replayed = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--reloop-record-mode=none")
    replayed.assert_outcomes(passed=1)


def test_each_xdist_worker_replays_its_tests_afresh(pytester):
    pytest.importorskip("xdist")
    body = f"""
import openai, pytest

@pytest.mark.reloop({str(ONE_SHOT)!r})
@pytest.mark.parametrize("n", range(4))
def test_answer(n):
    reply = openai.OpenAI(max_retries=0).chat.completions.create(model="gpt-4o-mini", messages=[{{"role": "user", "content": "q"}}])
    assert "into_iter()" in reply.choices[0].message.content
"""
    pytester.makepyfile(body)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-n", "2")
    result.assert_outcomes(passed=4)
