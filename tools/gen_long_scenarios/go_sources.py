"""Go sources: the payments monorepo of the investigation."""

from __future__ import annotations

from .randomness import pick


GO_NOUNS = ["Payment", "Charge", "Refund", "Capture", "Authorization", "Merchant", "Customer", "Payout",
            "Dispute", "Webhook", "Settlement", "Invoice", "Token", "Card", "Wallet", "Balance", "Fee",
            "RiskScore", "Transfer", "Mandate", "Subscription", "Receipt", "Statement", "Chargeback"]
GO_VERBS = ["Create", "Get", "List", "Update", "Cancel", "Capture", "Void", "Reconcile", "Validate", "Apply",
            "Schedule", "Retry", "Expire", "Sync", "Backfill", "Resolve", "Reserve", "Release", "Notify", "Score"]
GO_FIELDS = [("ID", "string", "id"), ("MerchantID", "string", "merchant_id"), ("AmountMinor", "int64", "amount_minor"),
             ("Currency", "string", "currency"), ("Status", "Status", "status"), ("CreatedAt", "time.Time", "created_at"),
             ("UpdatedAt", "time.Time", "updated_at"), ("CustomerID", "string", "customer_id"),
             ("Reference", "string", "reference"), ("Metadata", "map[string]string", "metadata"),
             ("Attempt", "int", "attempt"), ("ExpiresAt", "*time.Time", "expires_at"), ("Reason", "string", "reason"),
             ("ProviderRef", "string", "provider_ref"), ("CaptureMethod", "string", "capture_method"),
             ("Description", "string", "description"), ("LiveMode", "bool", "livemode"),
             ("PostingID", "string", "posting_id"), ("FeeMinor", "int64", "fee_minor"), ("Country", "string", "country")]
GO_IMPORTS = {
    "handler": ["context", "encoding/json", "errors", "net/http", "time",
                "github.com/go-chi/chi/v5", "go.uber.org/zap", "github.com/acme/payments/pkg/httpx",
                "github.com/acme/payments/pkg/apierr"],
    "service": ["context", "errors", "fmt", "time", "go.opentelemetry.io/otel", "go.uber.org/zap",
                "github.com/acme/payments/pkg/events", "github.com/acme/payments/pkg/money"],
    "repo": ["context", "database/sql", "errors", "fmt", "time", "github.com/jmoiron/sqlx",
             "github.com/lib/pq", "github.com/acme/payments/pkg/sqlxutil"],
    "middleware": ["context", "net/http", "strings", "time", "go.uber.org/zap",
                   "github.com/acme/payments/pkg/httpx", "github.com/prometheus/client_golang/prometheus"],
    "client": ["bytes", "context", "encoding/json", "fmt", "io", "net/http", "time",
               "github.com/acme/payments/pkg/httpx", "github.com/acme/payments/pkg/retry"],
    "worker": ["context", "errors", "time", "github.com/segmentio/kafka-go", "go.uber.org/zap",
               "github.com/acme/payments/pkg/events"],
}


def go_camel(name: str) -> str:
    return name[0].lower() + name[1:]


def go_snake(name: str) -> str:
    out = ""
    for i, c in enumerate(name):
        if c.isupper() and i:
            out += "_"
        out += c.lower()
    return out


def go_body(rng, kind: str, recv: str, noun: str, verb: str, table: str) -> list[str]:
    """A method body of 8-40 lines for a file of `kind`."""
    n = go_camel(noun)
    lines = []
    if kind in ("service", "client", "worker"):
        lines += [f'ctx, span := otel.Tracer("{table}").Start(ctx, "{noun}.{verb}")', "defer span.End()", ""]
    if kind == "handler":
        lines += [f"var req {verb}{noun}Request",
                  "if err := json.NewDecoder(r.Body).Decode(&req); err != nil {",
                  f'\tapierr.Write(w, http.StatusBadRequest, "invalid_body", err)',
                  "\treturn", "}",
                  "if err := req.Validate(); err != nil {",
                  f'\tapierr.Write(w, http.StatusUnprocessableEntity, "invalid_{go_snake(noun)}", err)',
                  "\treturn", "}",
                  f"merchant := httpx.MerchantFrom(r.Context())",
                  f"out, err := {recv}.svc.{verb}{noun}(r.Context(), merchant, req)",
                  "switch {",
                  "case errors.Is(err, apierr.ErrNotFound):",
                  f'\tapierr.Write(w, http.StatusNotFound, "{go_snake(noun)}_not_found", err)',
                  "\treturn",
                  "case errors.Is(err, apierr.ErrConflict):",
                  f'\tapierr.Write(w, http.StatusConflict, "{go_snake(noun)}_conflict", err)',
                  "\treturn",
                  "case err != nil:",
                  f'\t{recv}.log.Error("{go_snake(verb)} {go_snake(noun)} failed", zap.Error(err), zap.String("merchant", merchant))',
                  '\tapierr.Write(w, http.StatusInternalServerError, "internal", err)',
                  "\treturn", "}",
                  f"httpx.WriteJSON(w, http.Status{'Created' if verb == 'Create' else 'OK'}, out)"]
        return lines
    if kind == "repo":
        cols = pick(rng, [f[2] for f in GO_FIELDS], rng.randint(4, 8))
        if "id" not in cols:
            cols.insert(0, "id")
        if verb in ("Create", "Backfill"):
            placeholders = ", ".join(f"${i + 1}" for i in range(len(cols)))
            lines += [f"const q = `INSERT INTO {table} ({', '.join(cols)})",
                      f"\tVALUES ({placeholders})",
                      f"\tON CONFLICT (id) DO NOTHING`",
                      f"res, err := {recv}.db.ExecContext(ctx, q, " + ", ".join(f"{n}.{f[0]}" for f in GO_FIELDS if f[2] in cols) + ")",
                      "if err != nil {",
                      f'\treturn fmt.Errorf("insert {table}: %w", err)', "}",
                      "if n, _ := res.RowsAffected(); n == 0 {",
                      f"\treturn ErrDuplicate{noun}", "}",
                      "return nil"]
        elif verb in ("List", "Sync", "Reconcile"):
            lines += [f"const q = `SELECT {', '.join(cols)} FROM {table}",
                      "\tWHERE merchant_id = $1 AND created_at >= $2",
                      f"\tORDER BY created_at DESC LIMIT $3`",
                      f"var out []{noun}",
                      f"if err := {recv}.db.SelectContext(ctx, &out, q, merchantID, since, limit); err != nil {{",
                      f'\treturn nil, fmt.Errorf("list {table}: %w", err)', "}",
                      "return out, nil"]
        else:
            lines += [f"const q = `UPDATE {table} SET status = $2, updated_at = now()",
                      f"\tWHERE id = $1 AND status = ANY($3) RETURNING {', '.join(cols)}`",
                      f"var out {noun}",
                      f"err := {recv}.db.GetContext(ctx, &out, q, id, next, pq.Array(allowedFrom))",
                      "if errors.Is(err, sql.ErrNoRows) {",
                      f"\treturn nil, ErrNotFound", "}",
                      "if err != nil {",
                      f'\treturn nil, fmt.Errorf("{go_snake(verb)} {table} %s: %w", id, err)', "}",
                      "return &out, nil"]
        return lines
    if kind == "middleware":
        lines += ["return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {",
                  "\tstart := time.Now()",
                  f"\trw := httpx.NewRecorder(w)",
                  f'\tif v := r.Header.Get("{rng.choice(["X-Merchant-Id", "Authorization", "X-Api-Version", "X-Forwarded-For"])}"); v == "" {{',
                  f'\t\t{recv}.log.Debug("missing header", zap.String("path", r.URL.Path))',
                  "\t}",
                  "\tnext.ServeHTTP(rw, r)",
                  f'\t{go_camel(verb)}Duration.WithLabelValues(r.Method, httpx.Route(r), strconv.Itoa(rw.Status())).Observe(time.Since(start).Seconds())',
                  "})"]
        return lines
    if kind == "client":
        lines += ["body, err := json.Marshal(in)",
                  "if err != nil {",
                  f'\treturn nil, fmt.Errorf("encode {go_snake(noun)}: %w", err)', "}",
                  f'req, err := http.NewRequestWithContext(ctx, http.MethodPost, {recv}.base+"/v1/{table}", bytes.NewReader(body))',
                  "if err != nil {", "\treturn nil, err", "}",
                  'req.Header.Set("Content-Type", "application/json")',
                  f"resp, err := {recv}.retry.Do(ctx, {recv}.http, req)",
                  "if err != nil {",
                  f'\treturn nil, fmt.Errorf("{go_snake(verb)} {go_snake(noun)}: %w", err)', "}",
                  "defer resp.Body.Close()",
                  "if resp.StatusCode >= 300 {",
                  "\tb, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))",
                  f'\treturn nil, &UpstreamError{{Status: resp.StatusCode, Body: string(b), Op: "{go_snake(verb)}"}}', "}",
                  f"var out {noun}",
                  "if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {",
                  "\treturn nil, err", "}",
                  "return &out, nil"]
        return lines
    if kind == "worker":
        lines += ["for {",
                  f"\tmsg, err := {recv}.reader.FetchMessage(ctx)",
                  "\tif errors.Is(err, context.Canceled) {", "\t\treturn nil", "\t}",
                  "\tif err != nil {", "\t\treturn err", "\t}",
                  f"\tvar ev events.{noun}{verb}d",
                  "\tif err := events.Decode(msg.Value, &ev); err != nil {",
                  f'\t\t{recv}.log.Warn("undecodable event", zap.Int64("offset", msg.Offset), zap.Error(err))',
                  "\t\tcontinue", "\t}",
                  f"\tif err := {recv}.handle(ctx, ev); err != nil {{",
                  f'\t\t{recv}.log.Error("handle {go_snake(noun)} event", zap.String("id", ev.ID), zap.Error(err))',
                  f"\t\t{recv}.dlq.Publish(ctx, msg)", "\t}",
                  f"\tif err := {recv}.reader.CommitMessages(ctx, msg); err != nil {{",
                  "\t\treturn err", "\t}", "}"]
        return lines
    # service
    lines += [f"if err := in.Validate(); err != nil {{",
              f'\treturn nil, fmt.Errorf("{go_snake(verb)} {go_snake(noun)}: %w", err)', "}"]
    if rng.random() < 0.6:
        lines += [f"amount, err := money.New(in.AmountMinor, in.Currency)",
                  "if err != nil {", "\treturn nil, err", "}"]
    lines += [f"existing, err := {recv}.repo.Get{noun}(ctx, in.ID)",
              "if err != nil && !errors.Is(err, ErrNotFound) {", "\treturn nil, err", "}",
              "if existing != nil && existing.Status.Terminal() {",
              f'\t{recv}.log.Info("{go_snake(noun)} already final", zap.String("id", existing.ID), zap.Stringer("status", existing.Status))',
              "\treturn existing, nil", "}",
              f"out := &{noun}{{ID: in.ID, MerchantID: in.MerchantID, Status: Status{rng.choice(['Pending', 'Created', 'Scheduled'])}, CreatedAt: {recv}.clock.Now()}}",
              f"if err := {recv}.repo.{rng.choice(['Create', 'Upsert', 'Save'])}{noun}(ctx, out); err != nil {{",
              "\treturn nil, err", "}",
              f"{recv}.events.Publish(ctx, events.{noun}{verb}d{{ID: out.ID, MerchantID: out.MerchantID, At: out.CreatedAt}})",
              "return out, nil"]
    return lines


def go_file(rng, path: str, kind: str, nouns: list[str]) -> tuple[str, dict]:
    pkg = path.split("/")[-2].replace("-", "")
    imports = sorted(pick(rng, GO_IMPORTS[kind], rng.randint(4, len(GO_IMPORTS[kind]))))
    std = [i for i in imports if "." not in i.split("/")[0]]
    ext = [i for i in imports if "." in i.split("/")[0]]
    lines = [f"// Copyright 2024 Acme Payments, Inc. All rights reserved.", "", f"package {pkg}", "", "import ("]
    lines += [f'\t"{i}"' for i in std] + ([""] if std and ext else []) + [f'\t"{i}"' for i in ext] + [")", ""]
    recv_type = {"handler": "Handler", "service": "Service", "repo": "Repo", "middleware": "Middleware",
                 "client": "Client", "worker": "Consumer"}[kind]
    main = nouns[0]
    type_name = f"{main}{recv_type}"
    recv = type_name[0].lower()
    facts = {"path": path, "kind": kind, "types": [], "funcs": [], "tables": [], "lines": 0, "imports": imports}
    for noun in nouns:
        fields = pick(rng, GO_FIELDS, rng.randint(5, 10))
        lines.append(f"// {noun} is the {go_snake(noun).replace('_', ' ')} as stored and exposed by this service.")
        lines.append(f"type {noun} struct {{")
        width = max(len(f[0]) for f in fields)
        for name, typ, col in fields:
            lines.append(f'\t{name.ljust(width)} {typ.ljust(17)} `json:"{col}" db:"{col}"`')
        lines.append("}")
        lines.append("")
        facts["types"].append(noun)
    deps = {"handler": ["svc Service", "log *zap.Logger"], "service": ["repo Repository", "events events.Publisher", "clock Clock", "log *zap.Logger"],
            "repo": ["db *sqlx.DB"], "middleware": ["log *zap.Logger", "next http.Handler"],
            "client": ["base string", "http *http.Client", "retry *retry.Policy"], "worker": ["reader *kafka.Reader", "dlq events.Publisher", "log *zap.Logger"]}[kind]
    lines.append(f"// {type_name} wires the {kind} layer for {', '.join(go_snake(n).replace('_', ' ') for n in nouns)}.")
    lines.append(f"type {type_name} struct {{")
    lines += ["\t" + d for d in deps]
    lines += ["}", "", f"// New{type_name} returns a ready {type_name}.",
              f"func New{type_name}({', '.join(deps)}) *{type_name} {{",
              f"\treturn &{type_name}{{{', '.join(d.split()[0] + ': ' + d.split()[0] for d in deps)}}}", "}", ""]
    for noun in nouns:
        table = go_snake(noun) + "s"
        facts["tables"].append(table)
        for verb in pick(rng, GO_VERBS, rng.randint(2, 4)):
            name = {"middleware": f"{verb}{noun}Middleware", "worker": f"Run{verb}{noun}"}.get(kind, f"{verb}{noun}")
            if kind == "handler":
                sig = f"func ({recv} *{type_name}) {name}(w http.ResponseWriter, r *http.Request)"
            elif kind == "middleware":
                sig = f"func ({recv} *{type_name}) {name}(next http.Handler) http.Handler"
            elif kind == "worker":
                sig = f"func ({recv} *{type_name}) {name}(ctx context.Context) error"
            elif kind == "repo" and verb in ("Create", "Backfill"):
                sig = f"func ({recv} *{type_name}) {name}(ctx context.Context, {go_camel(noun)} *{noun}) error"
            elif kind == "repo" and verb in ("List", "Sync", "Reconcile"):
                sig = f"func ({recv} *{type_name}) {name}(ctx context.Context, merchantID string, since time.Time, limit int) ([]{noun}, error)"
            elif kind == "repo":
                sig = f"func ({recv} *{type_name}) {name}(ctx context.Context, id string, next Status, allowedFrom []Status) (*{noun}, error)"
            else:
                sig = f"func ({recv} *{type_name}) {name}(ctx context.Context, in {verb}{noun}Input) (*{noun}, error)"
            doc = rng.choice([f"// {name} {go_snake(verb).replace('_', ' ')}s a {go_snake(noun).replace('_', ' ')}.",
                              f"// {name} is called by the {rng.choice(['public API', 'dashboard', 'reconciliation job', 'webhook fan-out'])}; it must stay idempotent per id.",
                              f"// {name} handles {verb.lower()} for {go_snake(noun).replace('_', ' ')}s. See ADR-{rng.randint(10, 60):03d}."])
            lines.append(doc)
            lines.append(sig + " {")
            lines += ["\t" + b if b else "" for b in go_body(rng, kind, recv, noun, verb, table)]
            lines.append("}")
            lines.append("")
            facts["funcs"].append(name)
    facts["lines"] = len(lines)
    return "\n".join(lines), facts
