"""`reloop export` read by other tools' own parsers (docs/export.md).

ATIF: every trajectory passes Harbor's own validator (vendored under
.ci/vendor/harbor, see its README), and round-trips: each is imported with
`reloop import`, the imported suite is run, and every run passes and makes
the same tool calls (names and arguments, main agent) as the run exported.

OTLP: the file parses with the official `opentelemetry-proto` package into an
`ExportTraceServiceRequest` (protobuf's JSON mapping refuses unknown fields
and wrong types), every span carries the GenAI attributes of its operation,
and `--otlp-endpoint` delivers the same request to a collector on loopback
(a local OTLP/HTTP receiver that parses what it gets the same way).

Usage: check_export.py RELOOP REPORT OUT (run from the repository root)
"""

import base64
import http.server
import json
import subprocess
import sys
import threading
from pathlib import Path

import pyarrow.parquet as pq
from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

CACHE = {"gen_ai.usage.cache_read.input_tokens", "gen_ai.usage.cache_creation.input_tokens"}
USAGE = {"gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens"}


class Conventions:
    """What every span carries, and each operation's own attributes, under one
    release of the GenAI conventions (`--otel-conventions`); `absent`: the names
    that release does not have."""

    def __init__(self, provider: str, usage: set, absent: set):
        self.common = {"gen_ai.operation.name", provider, "gen_ai.request.model"}
        self.by_operation = {
            "invoke_agent": usage | {"gen_ai.agent.name", "gen_ai.response.finish_reasons"},
            "chat": usage | {"gen_ai.response.finish_reasons"},
            "execute_tool": {"gen_ai.tool.name", "gen_ai.tool.call.id"},
        }
        self.absent = absent


CONVENTIONS = {
    "current": Conventions("gen_ai.provider.name", USAGE | CACHE, {"gen_ai.system"}),
    "v1.36": Conventions("gen_ai.system", USAGE, {"gen_ai.provider.name"} | CACHE),
}


def parse(body: bytes) -> ExportTraceServiceRequest:
    """OTLP/JSON writes trace and span ids in hex where protobuf's JSON
    mapping has base64 (the one difference the OTLP spec makes): ids are
    checked as hex and turned into base64 first, as collectors do."""
    request = json.loads(body)
    for resource in request["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            for span in scope["spans"]:
                for key, size in (("traceId", 16), ("spanId", 8), ("parentSpanId", 8)):
                    if key in span:
                        raw = bytes.fromhex(span[key])
                        assert len(raw) == size and any(raw), f"{key} {span[key]!r}: not {size} hex bytes"
                        span[key] = base64.b64encode(raw).decode()
    return json_format.ParseDict(request, ExportTraceServiceRequest())


def check_otlp(request: ExportTraceServiceRequest, conventions: Conventions) -> dict:
    spans = [span for rs in request.resource_spans for ss in rs.scope_spans for span in ss.spans]
    assert spans, "no spans"
    counts: dict = {}
    findings: set = set()
    for span in spans:
        keys = {a.key for a in span.attributes}
        missing = conventions.common - keys
        assert not missing, f"span {span.name}: missing {missing}"
        stale = conventions.absent & keys
        assert not stale, f"span {span.name}: {stale} are not names of this release"
        op = next(a.value.string_value for a in span.attributes if a.key == "gen_ai.operation.name")
        counts[op] = counts.get(op, 0) + 1
        # A failed model call has no usage nor finish reason: its error.type says why.
        wanted = set() if op == "chat" and "error.type" in keys else conventions.by_operation[op]
        missing = wanted - keys
        assert not missing, f"span {span.name}: missing {missing}"
        assert len(span.trace_id) == 16 and len(span.span_id) == 8, span.name
        assert span.start_time_unix_nano <= span.end_time_unix_nano, span.name
        findings.update(e.name for e in span.events)
    for wanted in ("reloop.compaction", "reloop.cache_break", "reloop.doom_loop"):
        assert wanted in findings, f"no {wanted} event in {sorted(findings)}"
    return counts


class Receiver(http.server.BaseHTTPRequestHandler):
    received: list = []

    def do_POST(self):  # noqa: N802 (the handler's name is http.server's)
        body = self.rfile.read(int(self.headers["Content-Length"]))
        Receiver.received.append((self.path, self.headers.get("Content-Type"), body))
        try:
            parse(body)
        except (json_format.ParseError, AssertionError, ValueError, KeyError) as error:
            self.send_response(400)
            self.end_headers()
            self.wfile.write(str(error).encode())
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, *args):
        pass


def executed_calls(report: Path) -> dict:
    """The main agent's executed tool calls per scenario: (tool, arguments)."""
    events = pq.read_table(report / "events.parquet", columns=["scenario", "seq", "kind", "payload"]).to_pylist()
    calls: dict = {}
    depth: dict = {}
    for event in sorted(events, key=lambda e: (e["scenario"], e["seq"])):
        scenario, kind = event["scenario"], event["kind"]
        calls.setdefault(scenario, [])
        if kind == "sub_agent_started":
            depth[scenario] = depth.get(scenario, 0) + 1
        elif kind == "sub_agent_finished":
            depth[scenario] -= 1
        elif kind == "tool_start" and depth.get(scenario, 0) == 0:
            payload = json.loads(event["payload"])
            calls[scenario].append((payload["tool"], canonical(payload["arguments"])))
    return calls


def canonical(arguments: str) -> str:
    """Arguments as JSON with sorted keys when they parse, else as they are."""
    try:
        return json.dumps(json.loads(arguments), sort_keys=True)
    except ValueError:
        return arguments


def check_atif(reloop: str, report: Path, out: Path) -> None:
    sys.path.insert(0, str(Path(".ci/vendor/harbor").resolve()))
    from harbor.utils.trajectory_validator import TrajectoryValidator

    atif = out / "atif"
    subprocess.run([reloop, "export", str(report), "--atif", str(atif)], check=True, stdout=subprocess.DEVNULL)
    files = sorted(atif.glob("*.json"))
    assert files, "no trajectories"
    for file in files:
        validator = TrajectoryValidator()
        assert validator.validate(file), f"{file}: {validator.get_errors()}"
    print(f"atif: {len(files)} trajectories pass Harbor's validator (harbor 0.26.0)")
    # The import fixtures Harbor's converters wrote (their import and replay
    # are the Rust import tests' and the imported suite's).
    for file in sorted(Path("harness/import/tests/fixtures/sessions/atif").glob("*.json")):
        validator = TrajectoryValidator()
        assert validator.validate(file), f"{file}: {validator.get_errors()}"

    # A run whose every model call failed has no agent step: its import is
    # a session of one failed call, which the converter cannot replay yet
    # (it adds an answer before the failure); such runs are validated above
    # and left out of the round trip, counted.
    answered = [f for f in files if any(step["source"] == "agent" for step in json.loads(f.read_text())["steps"])]
    imported = out / "atif-imported"
    for file in answered:
        subprocess.run([reloop, "import", str(file), "--out", str(imported), "--force"], check=True, stdout=subprocess.DEVNULL)
    replayed = out / "atif-replayed"
    run = subprocess.run([reloop, "run", str(imported), "--out", str(replayed)], capture_output=True, text=True)
    assert run.returncode == 0, f"the imported trajectories do not all pass:\n{run.stdout[-3000:]}"
    source = {}
    for info in imported.glob("*.import.json"):
        record = json.loads(info.read_text())
        source[record["name"]] = record["source"].removeprefix("atif:").removesuffix(".json")
    before, after = executed_calls(report), executed_calls(replayed)
    exported = {json.loads(f.read_text())["session_id"]: f for f in answered}
    checked = 0
    for name, calls in after.items():
        original = source[name]
        assert original in exported, f"{name}: imported from an unknown trajectory {original}"
        assert calls == before.get(original, []), f"{name}: replayed {calls[:5]}, exported run made {before.get(original, [])[:5]}"
        checked += bool(calls)
    assert len(after) == len(answered), (len(after), len(answered))
    print(
        f"atif: round trip: {len(after)} imported trajectories replayed and passed, {checked} with the same tool calls as exported"
        f" ({len(files) - len(answered)} without an answered model call left out)"
    )


def main() -> None:
    reloop, report, out = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
    out.mkdir(parents=True, exist_ok=True)
    traces = out / "traces.json"
    for release, conventions in CONVENTIONS.items():
        named = out / f"traces.{release}.json"
        subprocess.run([reloop, "export", str(report), "--otlp", str(named), "--otel-conventions", release], check=True, stdout=subprocess.DEVNULL)
        counts = check_otlp(parse(named.read_bytes()), conventions)
        print(f"otlp: {named} ({release} conventions) parses as an ExportTraceServiceRequest; spans by operation: {counts}")
    subprocess.run([reloop, "export", str(report), "--otlp", str(traces)], check=True, stdout=subprocess.DEVNULL)
    assert traces.read_bytes() == (out / "traces.current.json").read_bytes(), "the default is not the current conventions"

    server = http.server.HTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    endpoint = f"http://127.0.0.1:{server.server_address[1]}"
    subprocess.run([reloop, "export", str(report), "--otlp-endpoint", endpoint], check=True, stdout=subprocess.DEVNULL)
    server.shutdown()
    [(path, content_type, body)] = Receiver.received
    assert path == "/v1/traces" and content_type == "application/json", (path, content_type)
    assert parse(body) == parse(traces.read_bytes()), "the collector got another request than the file"
    print(f"otlp: a local OTLP/HTTP receiver got the same {len(body)} bytes at {path}")
    check_atif(reloop, report, out)


if __name__ == "__main__":
    main()
