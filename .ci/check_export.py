"""`reloop export` read by other tools' own parsers (docs/export.md).

OTLP: the file parses with the official `opentelemetry-proto` package into an
`ExportTraceServiceRequest` (protobuf's JSON mapping refuses unknown fields
and wrong types), every span carries the GenAI attributes of its operation,
and `--otlp-endpoint` delivers the same request to a collector on loopback
(a local OTLP/HTTP receiver that parses what it gets the same way).

Usage: check_export.py RELOOP REPORT OUT
"""

import base64
import http.server
import json
import subprocess
import sys
import threading
from pathlib import Path

from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

COMMON = {"gen_ai.operation.name", "gen_ai.provider.name", "gen_ai.request.model"}
USAGE = {
    "gen_ai.usage.input_tokens",
    "gen_ai.usage.output_tokens",
    "gen_ai.usage.cache_read.input_tokens",
    "gen_ai.usage.cache_creation.input_tokens",
}
BY_OPERATION = {
    "invoke_agent": USAGE | {"gen_ai.agent.name", "gen_ai.response.finish_reasons"},
    "chat": USAGE | {"gen_ai.response.finish_reasons"},
    "execute_tool": {"gen_ai.tool.name", "gen_ai.tool.call.id"},
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


def check_otlp(request: ExportTraceServiceRequest) -> dict:
    spans = [span for rs in request.resource_spans for ss in rs.scope_spans for span in ss.spans]
    assert spans, "no spans"
    counts: dict = {}
    findings: set = set()
    for span in spans:
        keys = {a.key for a in span.attributes}
        missing = COMMON - keys
        assert not missing, f"span {span.name}: missing {missing}"
        op = next(a.value.string_value for a in span.attributes if a.key == "gen_ai.operation.name")
        counts[op] = counts.get(op, 0) + 1
        # A failed model call has no usage nor finish reason: its error.type says why.
        wanted = set() if op == "chat" and "error.type" in keys else BY_OPERATION[op]
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


def main() -> None:
    reloop, report, out = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
    out.mkdir(parents=True, exist_ok=True)
    traces = out / "traces.json"
    subprocess.run([reloop, "export", str(report), "--otlp", str(traces)], check=True, stdout=subprocess.DEVNULL)
    counts = check_otlp(parse(traces.read_bytes()))
    print(f"otlp: {traces} parses as an ExportTraceServiceRequest; spans by operation: {counts}")

    server = http.server.HTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    endpoint = f"http://127.0.0.1:{server.server_address[1]}"
    subprocess.run([reloop, "export", str(report), "--otlp-endpoint", endpoint], check=True, stdout=subprocess.DEVNULL)
    server.shutdown()
    [(path, content_type, body)] = Receiver.received
    assert path == "/v1/traces" and content_type == "application/json", (path, content_type)
    assert parse(body) == parse(traces.read_bytes()), "the collector got another request than the file"
    print(f"otlp: a local OTLP/HTTP receiver got the same {len(body)} bytes at {path}")


if __name__ == "__main__":
    main()
