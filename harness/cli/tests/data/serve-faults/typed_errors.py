"""The official SDKs against `reloop serve --scenario faults.yaml` at
sys.argv[1]: without retries each fault is raised as the SDK's typed error;
with retries the SDK gets through. Prints one line per check."""
import sys
import anthropic, openai

base = sys.argv[1]
def chat(session, retries, content):
    client = openai.OpenAI(base_url=f"{base}/s/{session}/v1", api_key="sk-test", max_retries=retries)
    return client.chat.completions.create(model="gpt-4.1", messages=[{"role": "user", "content": content}]).choices[0].message.content
def message(session, retries, content):
    client = anthropic.Anthropic(base_url=f"{base}/s/{session}", api_key="sk-test", max_retries=retries)
    return client.messages.create(model="reloop-replay", max_tokens=100, messages=[{"role": "user", "content": content}]).content[0].text
def expect(error, call):
    try:
        call()
    except error as raised:
        print("raised", type(raised).__name__, getattr(raised, "code", None) or "")
        return
    sys.exit(f"expected {error.__name__}")

expect(openai.RateLimitError, lambda: chat("bare", 0, "one"))
print("answered", chat("bare", 0, "one"))
expect(anthropic.OverloadedError, lambda: message("bare", 0, "two"))
print("answered", message("bare", 0, "two"))
expect(openai.BadRequestError, lambda: chat("bare", 0, "three"))
print("answered", chat("bare", 0, "three"))
print("retried", chat("retrying", 2, "one"), message("retrying", 2, "two"))
