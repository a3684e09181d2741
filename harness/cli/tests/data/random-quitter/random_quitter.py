"""A black-box agent that gives up at random, for `run --repeat` (issue 45).

It speaks the OpenAI Chat Completions API with the standard library only:
one request to the mock, then the answer on stdout. Before that, with
probability 1/2 (drawn from the OS's randomness, so every process differs),
it gives up and exits 1. Over 20 trials all pass or all fail with
probability 2 * 2**-20, about 2 in a million.
"""
import json, os, random, sys, urllib.request

if random.SystemRandom().random() < 0.5:
    sys.exit("giving up")
request = urllib.request.Request(
    os.environ["OPENAI_BASE_URL"].rstrip("/") + "/chat/completions",
    data=json.dumps({"model": "gpt-4.1", "messages": [{"role": "user", "content": sys.argv[1]}]}).encode(),
    headers={"content-type": "application/json", "authorization": "Bearer " + os.environ["OPENAI_API_KEY"]},
)
with urllib.request.urlopen(request) as response:
    print(json.load(response)["choices"][0]["message"]["content"])
