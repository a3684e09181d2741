"""Scenario 1: a large codebase investigation (duplicate charges)."""

from __future__ import annotations

from .go_sources import GO_FIELDS, GO_NOUNS, GO_VERBS, go_body, go_file, go_snake
from .randomness import hexid, pick, ts, uuid
from .session import Ledger, Session


GO_SERVICES = {
    "gateway": ["Payment", "Merchant", "Token"],
    "payments": ["Payment", "Capture", "Refund", "Authorization"],
    "ledger": ["Transfer", "Balance", "Statement", "Settlement"],
    "risk": ["RiskScore", "Customer", "Card"],
    "webhooks": ["Webhook", "Receipt", "Dispute"],
    "payouts": ["Payout", "Fee", "Mandate"],
    "billing": ["Invoice", "Subscription", "Chargeback"],
}
GO_KINDS = ["handler", "service", "repo", "client", "worker", "middleware"]

HYPOTHESES = [
    ("H1", "the mobile SDK rotates the Idempotency-Key between retries"),
    ("H2", "something between the gateway and payments drops the header on retried requests"),
    ("H3", "the payments idempotency store loses keys (TTL, eviction, key format)"),
    ("H4", "the ledger double-posts because each attempt mints a new posting id"),
    ("H5", "webhook or reconciliation retries create the second charge downstream"),
]


def s1_readme(rng) -> str:
    return """# payments-platform

Monorepo for Acme's payment stack. Go 1.22, one module per service, shared
packages under `pkg/`.

| service | owns | talks to |
|---|---|---|
| `services/gateway` | public API (`api.acme.com`), auth, rate limits, idempotency-key validation | payments, risk, billing |
| `services/payments` | payment intents, authorizations, captures, refunds | ledger, risk, PSP adapters |
| `services/ledger` | double-entry postings, balances, statements | postgres `ledger` |
| `services/risk` | scoring, velocity checks, 3DS decisions | redis `risk`, feature store |
| `services/webhooks` | merchant webhook fan-out with retries | kafka `payments.events` |
| `services/payouts` | payouts, fees, mandates | ledger, bank rails |
| `services/billing` | invoices and subscriptions for merchants | payments, ledger |

Shared packages:

- `pkg/httpx`     request helpers, upstream request construction, JSON writers
- `pkg/retry`     retry policy for upstream HTTP calls (timeouts, 502/503/504)
- `pkg/idempotency` key validation shared by gateway and payments
- `pkg/events`    event envelopes and the kafka publisher
- `pkg/money`     minor-unit arithmetic, currency tables
- `pkg/apierr`    the public error model

## Idempotency

See `docs/adr/ADR-031-idempotency.md`. Clients send `Idempotency-Key` on
every mutating request; the gateway validates it and the payments service
deduplicates on `(merchant, key)` for 24 hours.

## Running locally

    make dev-up          # postgres, redis, kafka, localstack
    make run SVC=gateway
    go test ./...        # unit tests; `make it` for integration tests

On-call runbooks live in `docs/runbooks/`. Dashboards: `grafana/payments-*`.
"""


def s1_adr() -> str:
    return """# ADR-031: Idempotency keys for mutating requests

Status: accepted (2023-06-12), amended 2024-02-02

## Context

Mobile clients on flaky networks retry `POST /v2/payments` after timeouts.
Before this ADR, a retry after a timeout that had in fact succeeded created a
second payment intent and, once captured, a second charge.

## Decision

1. Every mutating public endpoint accepts an `Idempotency-Key` header
   (1-255 printable ASCII characters; SDKs send a UUIDv4 per logical
   operation and reuse it for every retry of that operation).
2. The gateway validates the header (`pkg/idempotency.Validate`) and forwards
   it **unchanged** to the owning service, on the first attempt and on every
   retry the gateway itself performs.
3. The payments service stores `(merchant_id, key) -> response` in redis
   `idem` for 24 hours. A repeated key with the same request fingerprint
   replays the stored response; a different fingerprint is a 422
   `idempotency_key_reused`.
4. Requests without a key are accepted (legacy integrations) but are not
   deduplicated. The payments service logs them at debug level.

## Consequences

- Internal services must never invent keys on behalf of the client.
- Any component that rebuilds an HTTP request (proxies, retry helpers) must
  copy the `Idempotency-Key` header. There is a contract test in
  `services/gateway/internal/proxy/proxy_test.go`.
"""


def s1_gateway_idem_mw(rng) -> str:
    return """// Copyright 2024 Acme Payments, Inc. All rights reserved.

package middleware

import (
	"context"
	"net/http"

	"go.uber.org/zap"

	"github.com/acme/payments/pkg/apierr"
	"github.com/acme/payments/pkg/idempotency"
)

type idemKey struct{}

// IdempotencyKeyFrom returns the validated key stored by Idempotency, if any.
func IdempotencyKeyFrom(ctx context.Context) (string, bool) {
	key, ok := ctx.Value(idemKey{}).(string)
	return key, ok
}

// Idempotency validates the Idempotency-Key header of mutating requests and
// stores it in the request context. It does not deduplicate: that is the
// owning service's job (ADR-031).
func Idempotency(log *zap.Logger) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodGet || r.Method == http.MethodHead {
				next.ServeHTTP(w, r)
				return
			}
			key := r.Header.Get(idempotency.Header)
			if key == "" {
				idempotencyMissing.WithLabelValues(routeOf(r)).Inc()
				next.ServeHTTP(w, r)
				return
			}
			if err := idempotency.Validate(key); err != nil {
				apierr.Write(w, http.StatusBadRequest, "invalid_idempotency_key", err)
				return
			}
			log.Debug("idempotency key accepted", zap.String("route", routeOf(r)), zap.Int("len", len(key)))
			ctx := context.WithValue(r.Context(), idemKey{}, key)
			next.ServeHTTP(w, r.WithContext(ctx))
		})
	}
}
"""


def s1_gateway_proxy(rng) -> str:
    return """// Copyright 2024 Acme Payments, Inc. All rights reserved.

package proxy

import (
	"context"
	"io"
	"net/http"
	"time"

	"go.uber.org/zap"

	"github.com/acme/payments/pkg/httpx"
	"github.com/acme/payments/pkg/retry"
)

// Payments forwards payment requests to the payments service.
type Payments struct {
	base  string
	http  *http.Client
	retry *retry.Policy
	log   *zap.Logger
}

// NewPayments returns the proxy. The retry policy retries timeouts and
// 502/503/504 up to 3 times with jittered backoff (see pkg/retry).
func NewPayments(base string, client *http.Client, log *zap.Logger) *Payments {
	return &Payments{
		base:  base,
		http:  client,
		retry: retry.NewPolicy(retry.Config{Attempts: 3, Base: 150 * time.Millisecond, RetryPOST: true}),
		log:   log,
	}
}

// CreatePayment forwards POST /v2/payments. The upstream call has its own
// 8 s budget; the public request may be retried by the client on top.
func (p *Payments) CreatePayment(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 8*time.Second)
	defer cancel()
	up, err := httpx.CloneForUpstream(ctx, r, p.base+"/internal/v2/payments")
	if err != nil {
		httpx.WriteError(w, http.StatusBadRequest, err)
		return
	}
	resp, err := p.retry.Do(ctx, p.http, up)
	if err != nil {
		p.log.Warn("payments upstream failed", zap.Error(err), zap.String("request_id", httpx.RequestID(r)))
		httpx.WriteError(w, http.StatusBadGateway, err)
		return
	}
	defer resp.Body.Close()
	httpx.CopyHeaders(w.Header(), resp.Header)
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, resp.Body)
}
"""


def s1_retry(rng) -> str:
    return """// Copyright 2024 Acme Payments, Inc. All rights reserved.

// Package retry retries upstream HTTP calls that failed in ways a second
// attempt may fix: timeouts, connection resets and 502/503/504.
package retry

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand"
	"net"
	"net/http"
	"time"

	"github.com/acme/payments/pkg/httpx"
)

// Config of a Policy.
type Config struct {
	Attempts  int
	Base      time.Duration
	Max       time.Duration
	RetryPOST bool // POSTs are retried only when the caller opts in (idempotent upstreams)
}

// Policy retries requests.
type Policy struct{ cfg Config }

// NewPolicy returns a policy with defaults filled in.
func NewPolicy(cfg Config) *Policy {
	if cfg.Attempts == 0 {
		cfg.Attempts = 3
	}
	if cfg.Max == 0 {
		cfg.Max = 2 * time.Second
	}
	return &Policy{cfg: cfg}
}

// Do sends req, retrying retryable failures. The body is buffered once so
// every attempt can resend it; each attempt gets a fresh request built with
// httpx.CloneForUpstream so per-attempt headers (traceparent) are new.
func (p *Policy) Do(ctx context.Context, c *http.Client, req *http.Request) (*http.Response, error) {
	body, err := bufferBody(req)
	if err != nil {
		return nil, err
	}
	var lastErr error
	for attempt := 0; attempt < p.cfg.Attempts; attempt++ {
		if attempt > 0 {
			if err := sleep(ctx, p.backoff(attempt)); err != nil {
				return nil, err
			}
		}
		try := req
		if attempt > 0 {
			try, err = httpx.CloneForUpstream(ctx, req, req.URL.String())
			if err != nil {
				return nil, err
			}
		}
		try.Body = io.NopCloser(bytes.NewReader(body))
		resp, err := c.Do(try)
		if err == nil && !retryableStatus(resp.StatusCode) {
			return resp, nil
		}
		if err == nil {
			lastErr = &StatusError{Code: resp.StatusCode}
			resp.Body.Close()
		} else {
			lastErr = err
		}
		if !p.retryable(req, err) {
			return nil, lastErr
		}
	}
	return nil, lastErr
}

func (p *Policy) retryable(req *http.Request, err error) bool {
	if req.Method == http.MethodPost && !p.cfg.RetryPOST {
		return false
	}
	var ne net.Error
	return err == nil || errors.As(err, &ne) && ne.Timeout() || errors.Is(err, io.ErrUnexpectedEOF)
}

func (p *Policy) backoff(attempt int) time.Duration {
	d := p.cfg.Base << attempt
	if d > p.cfg.Max {
		d = p.cfg.Max
	}
	return d/2 + time.Duration(rand.Int63n(int64(d/2)+1))
}

func retryableStatus(code int) bool { return code == 502 || code == 503 || code == 504 }
"""


def s1_clone(rng) -> str:
    return """// Copyright 2024 Acme Payments, Inc. All rights reserved.

package httpx

import (
	"context"
	"net/http"
	"strings"
)

// forwardedHeaders are the only client headers passed to internal upstreams.
// Everything else is dropped so that internal services never see cookies,
// client hints or hop-by-hop headers (SEC-412).
var forwardedHeaders = []string{
	"Accept",
	"Accept-Language",
	"Authorization",
	"Content-Type",
	"Traceparent",
	"Tracestate",
	"User-Agent",
	"X-Acme-Merchant-Id",
	"X-Request-Id",
}

// CloneForUpstream builds a request for url with the method, body and the
// allowlisted headers of r, plus the gateway's own X-Forwarded-* headers.
func CloneForUpstream(ctx context.Context, r *http.Request, url string) (*http.Request, error) {
	out, err := http.NewRequestWithContext(ctx, r.Method, url, r.Body)
	if err != nil {
		return nil, err
	}
	for _, name := range forwardedHeaders {
		if v := r.Header.Values(name); len(v) > 0 {
			out.Header[http.CanonicalHeaderKey(name)] = append([]string(nil), v...)
		}
	}
	out.Header.Set("X-Forwarded-For", clientIP(r))
	out.Header.Set("X-Forwarded-Proto", scheme(r))
	out.ContentLength = r.ContentLength
	return out, nil
}

func clientIP(r *http.Request) string {
	if xff := r.Header.Get("X-Forwarded-For"); xff != "" {
		return strings.TrimSpace(strings.Split(xff, ",")[0])
	}
	host, _, _ := strings.Cut(r.RemoteAddr, ":")
	return host
}

func scheme(r *http.Request) string {
	if r.TLS != nil {
		return "https"
	}
	return "http"
}
"""


def s1_clone_test(rng) -> str:
    return """// Copyright 2024 Acme Payments, Inc. All rights reserved.

package httpx

import (
	"context"
	"net/http/httptest"
	"testing"
)

func TestCloneForUpstreamKeepsAllowlistedHeaders(t *testing.T) {
	r := httptest.NewRequest("POST", "https://api.acme.test/v2/payments", nil)
	r.Header.Set("Authorization", "Bearer sk_test_123")
	r.Header.Set("X-Request-Id", "req_1")
	r.Header.Set("Cookie", "session=abc")
	out, err := CloneForUpstream(context.Background(), r, "http://payments:8080/internal/v2/payments")
	if err != nil {
		t.Fatal(err)
	}
	if got := out.Header.Get("Authorization"); got != "Bearer sk_test_123" {
		t.Errorf("Authorization = %q", got)
	}
	if got := out.Header.Get("X-Request-Id"); got != "req_1" {
		t.Errorf("X-Request-Id = %q", got)
	}
	if got := out.Header.Get("Cookie"); got != "" {
		t.Errorf("Cookie leaked upstream: %q", got)
	}
}

func TestCloneForUpstreamSetsForwardedHeaders(t *testing.T) {
	r := httptest.NewRequest("GET", "https://api.acme.test/v2/payments/pi_1", nil)
	r.RemoteAddr = "203.0.113.9:51234"
	out, _ := CloneForUpstream(context.Background(), r, "http://payments:8080/internal/v2/payments/pi_1")
	if got := out.Header.Get("X-Forwarded-For"); got != "203.0.113.9" {
		t.Errorf("X-Forwarded-For = %q", got)
	}
}
"""


def s1_create_payment(rng) -> str:
    return """// Copyright 2024 Acme Payments, Inc. All rights reserved.

package handler

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/google/uuid"
	"go.uber.org/zap"

	"github.com/acme/payments/pkg/apierr"
	"github.com/acme/payments/pkg/httpx"
	"github.com/acme/payments/services/payments/internal/idempotency"
	"github.com/acme/payments/services/payments/internal/service"
)

// CreatePayment handles POST /internal/v2/payments (proxied by the gateway).
func (h *PaymentHandler) CreatePayment(w http.ResponseWriter, r *http.Request) {
	merchant := httpx.MerchantFrom(r.Context())
	key := r.Header.Get("Idempotency-Key")
	if key == "" {
		// Legacy integrations send no key. Give the request one anyway so the
		// rest of the pipeline (store, events, ledger posting ids) can rely
		// on it being set.
		key = "gen_" + uuid.NewString()
		h.log.Debug("no idempotency key, generated one", zap.String("merchant", merchant), zap.String("key", key))
	}
	var req service.CreatePaymentInput
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		apierr.Write(w, http.StatusBadRequest, "invalid_body", err)
		return
	}
	fp := idempotency.Fingerprint(r.Method, r.URL.Path, req)
	if stored, err := h.idem.Begin(r.Context(), merchant, key, fp); err != nil {
		switch {
		case errors.Is(err, idempotency.ErrInProgress):
			apierr.Write(w, http.StatusConflict, "idempotency_request_in_progress", err)
		case errors.Is(err, idempotency.ErrFingerprintMismatch):
			apierr.Write(w, http.StatusUnprocessableEntity, "idempotency_key_reused", err)
		default:
			apierr.Write(w, http.StatusInternalServerError, "internal", err)
		}
		return
	} else if stored != nil {
		h.replays.Inc()
		httpx.WriteRaw(w, stored.Status, stored.Body)
		return
	}
	req.IdempotencyKey = key
	out, err := h.svc.CreatePayment(r.Context(), merchant, req)
	status, body := h.render(out, err)
	h.idem.Finish(r.Context(), merchant, key, status, body)
	httpx.WriteRaw(w, status, body)
}
"""


def s1_idem_store(rng) -> str:
    return """// Copyright 2024 Acme Payments, Inc. All rights reserved.

package idempotency

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// TTL of a stored response (ADR-031).
const TTL = 24 * time.Hour

var (
	ErrInProgress          = errors.New("a request with this key is in progress")
	ErrFingerprintMismatch = errors.New("key reused with a different request")
)

// Stored is a finished response kept for replays.
type Stored struct {
	Fingerprint string `json:"fp"`
	Status      int    `json:"status"`
	Body        []byte `json:"body"`
	Done        bool   `json:"done"`
}

// Store keeps responses by (merchant, key) in redis.
type Store struct{ rdb *redis.Client }

func redisKey(merchant, key string) string { return fmt.Sprintf("idem:%s:%s", merchant, key) }

// Begin claims (merchant, key) or returns the stored response of an earlier
// request with the same key.
func (s *Store) Begin(ctx context.Context, merchant, key, fp string) (*Stored, error) {
	claim, _ := json.Marshal(Stored{Fingerprint: fp})
	ok, err := s.rdb.SetNX(ctx, redisKey(merchant, key), claim, TTL).Result()
	if err != nil {
		return nil, err
	}
	if ok {
		return nil, nil
	}
	raw, err := s.rdb.Get(ctx, redisKey(merchant, key)).Bytes()
	if err != nil {
		return nil, err
	}
	var prev Stored
	if err := json.Unmarshal(raw, &prev); err != nil {
		return nil, err
	}
	switch {
	case prev.Fingerprint != fp:
		return nil, ErrFingerprintMismatch
	case !prev.Done:
		return nil, ErrInProgress
	}
	return &prev, nil
}

// Finish stores the response for replays, keeping the original TTL.
func (s *Store) Finish(ctx context.Context, merchant, key string, status int, body []byte) {
	done, _ := json.Marshal(Stored{Status: status, Body: body, Done: true})
	s.rdb.Set(ctx, redisKey(merchant, key), done, redis.KeepTTL)
}
"""


def s1_git_log_httpx(rng) -> str:
    authors = ["dana.k", "mo.osei", "r.varga", "lena.p", "tomasz.w", "priya.s"]
    lines = []
    subjects = [
        "httpx: WriteRaw for replayed responses",
        "httpx: MerchantFrom reads X-Acme-Merchant-Id set by auth",
        "httpx: forward only allowlisted headers upstream (SEC-412)",
        "httpx: CopyHeaders skips hop-by-hop headers",
        "retry: clone the request per attempt so traceparent is fresh",
        "retry: opt-in RetryPOST for idempotent upstreams",
        "httpx: JSON writer sets Cache-Control: no-store",
        "retry: jittered backoff, cap at 2s",
        "httpx: RequestID helper",
        "httpx: initial import from gateway/internal/util",
    ]
    days = [3, 9, 16, 16, 23, 37, 52, 70, 88, 130]
    for subject, day in zip(subjects, days):
        sha = "4f1c2ab" if "SEC-412" in subject else ("9d03e51" if "per attempt" in subject else hexid(rng, 7))
        lines.append(f"{sha} {subject} ({day} days ago, {rng.choice(authors)})")
    return "\n".join(lines) + "\n"


def s1_git_show(rng) -> str:
    return """commit 4f1c2ab8e07d5c3a9b61f0e2d4c7a8b9e3f10a52
Author: Lena Petrova <lena.p@acme.example>
Date:   Tue Feb 25 16:41:09 2025 +0100

    httpx: forward only allowlisted headers upstream (SEC-412)

    The pentest found that client cookies and `X-Debug-*` headers reached
    internal services. Build upstream requests from an allowlist instead of
    copying every header.

    Reviewed-by: r.varga

diff --git a/pkg/httpx/clone.go b/pkg/httpx/clone.go
index 61c0a9e..b7d2f44 100644
--- a/pkg/httpx/clone.go
+++ b/pkg/httpx/clone.go
@@ -8,18 +8,39 @@ import (
 	"strings"
 )

-// CloneForUpstream builds a request for url with the method, body and headers
-// of r, plus the gateway's own X-Forwarded-* headers.
+// forwardedHeaders are the only client headers passed to internal upstreams.
+// Everything else is dropped so that internal services never see cookies,
+// client hints or hop-by-hop headers (SEC-412).
+var forwardedHeaders = []string{
+	"Accept",
+	"Accept-Language",
+	"Authorization",
+	"Content-Type",
+	"Traceparent",
+	"Tracestate",
+	"User-Agent",
+	"X-Acme-Merchant-Id",
+	"X-Request-Id",
+}
+
+// CloneForUpstream builds a request for url with the method, body and the
+// allowlisted headers of r, plus the gateway's own X-Forwarded-* headers.
 func CloneForUpstream(ctx context.Context, r *http.Request, url string) (*http.Request, error) {
 	out, err := http.NewRequestWithContext(ctx, r.Method, url, r.Body)
 	if err != nil {
 		return nil, err
 	}
-	out.Header = r.Header.Clone()
-	removeHopByHop(out.Header)
+	for _, name := range forwardedHeaders {
+		if v := r.Header.Values(name); len(v) > 0 {
+			out.Header[http.CanonicalHeaderKey(name)] = append([]string(nil), v...)
+		}
+	}
 	out.Header.Set("X-Forwarded-For", clientIP(r))
 	out.Header.Set("X-Forwarded-Proto", scheme(r))
 	out.ContentLength = r.ContentLength
 	return out, nil
 }
diff --git a/pkg/httpx/clone_test.go b/pkg/httpx/clone_test.go
index 0c1d2e3..5a6b7c8 100644
--- a/pkg/httpx/clone_test.go
+++ b/pkg/httpx/clone_test.go
@@ -10,6 +10,7 @@ func TestCloneForUpstreamKeepsAllowlistedHeaders(t *testing.T) {
 	r := httptest.NewRequest("POST", "https://api.acme.test/v2/payments", nil)
 	r.Header.Set("Authorization", "Bearer sk_test_123")
 	r.Header.Set("X-Request-Id", "req_1")
+	r.Header.Set("Cookie", "session=abc")
 	out, err := CloneForUpstream(context.Background(), r, "http://payments:8080/internal/v2/payments")
 	if err != nil {
 		t.Fatal(err)
@@ -20,4 +21,7 @@ func TestCloneForUpstreamKeepsAllowlistedHeaders(t *testing.T) {
 	if got := out.Header.Get("X-Request-Id"); got != "req_1" {
 		t.Errorf("X-Request-Id = %q", got)
 	}
+	if got := out.Header.Get("Cookie"); got != "" {
+		t.Errorf("Cookie leaked upstream: %q", got)
+	}
 }
"""


def s1_logs_gateway(rng, key: str) -> str:
    lines = []
    t = 13 * 3600 + 12 * 60 + 4.113
    pods = [f"gateway-7b9f{hexid(rng, 4)}-{hexid(rng, 5)}" for _ in range(3)]
    for i in range(36):
        t += rng.uniform(0.05, 2.5)
        rid = "req_" + hexid(rng, 20)
        k = key if i in (14, 15, 16) else uuid(rng)
        attempt = {14: 0, 15: 1, 16: 0}.get(i, 0)
        if i == 15:
            lines.append(f'{ts(t)} {pods[1]} WARN proxy/payments.go:47 payments upstream attempt failed attempt=0 err="context deadline exceeded (Client.Timeout exceeded while awaiting headers)" upstream=payments:8080 idempotency_key={key} request_id={rid}')
            lines.append(f'{ts(t + 0.213)} {pods[1]} INFO retry/retry.go:71 retrying upstream request attempt=1 backoff=212ms method=POST url=http://payments:8080/internal/v2/payments')
            lines.append(f'{ts(t + 0.541)} {pods[1]} INFO access.go:33 POST /v2/payments status=201 dur=8.402s merchant=mch_4TQ9 idempotency_key={key} request_id={rid} upstream_attempts=2')
            continue
        if i == 16:
            lines.append(f'{ts(t + 9.2)} {pods[0]} INFO access.go:33 POST /v2/payments status=201 dur=0.611s merchant=mch_4TQ9 idempotency_key={key} request_id={rid} upstream_attempts=1 user_agent="AcmeSDK-iOS/5.12.1"')
            continue
        route = rng.choice(["POST /v2/payments", "GET /v2/payments/pi_" + hexid(rng, 14), "POST /v2/refunds", "POST /v2/payments/pi_" + hexid(rng, 14) + "/capture", "GET /v2/balance"])
        status = rng.choice([200, 200, 201, 201, 200, 402, 201])
        key_field = f" idempotency_key={k}" if route.startswith("POST") else ""
        lines.append(f'{ts(t)} {rng.choice(pods)} INFO access.go:33 {route} status={status} dur={rng.uniform(0.04, 1.2):.3f}s merchant=mch_{hexid(rng, 4).upper()}{key_field} request_id={rid} upstream_attempts=1')
    return "\n".join(lines) + "\n"


def s1_logs_payments(rng, key: str) -> str:
    lines = []
    t = 13 * 3600 + 12 * 60 + 4.9
    pods = [f"payments-api-5c7d{hexid(rng, 4)}-{hexid(rng, 5)}" for _ in range(4)]
    gen1, gen2 = "gen_" + uuid(rng), "gen_" + uuid(rng)
    pi1, pi2 = "pi_" + hexid(rng, 14), "pi_" + hexid(rng, 14)
    for i in range(34):
        t += rng.uniform(0.05, 1.9)
        if i == 12:
            lines.append(f'{ts(t)} {pods[2]} INFO handler/create_payment.go:31 idempotency claimed merchant=mch_4TQ9 key={key} fp=sha256:{hexid(rng, 16)}')
            lines.append(f'{ts(t + 7.95)} {pods[2]} INFO service/payment.go:88 payment intent created id={pi1} merchant=mch_4TQ9 amount_minor=4599 currency=EUR key={key}')
            continue
        if i == 13:
            lines.append(f'{ts(t)} {pods[0]} DEBUG handler/create_payment.go:27 no idempotency key, generated one merchant=mch_4TQ9 key={gen1}')
            lines.append(f'{ts(t + 0.31)} {pods[0]} INFO service/payment.go:88 payment intent created id={pi2} merchant=mch_4TQ9 amount_minor=4599 currency=EUR key={gen1}')
            continue
        if i == 14:
            lines.append(f'{ts(t + 9.0)} {pods[3]} INFO handler/create_payment.go:48 idempotent replay merchant=mch_4TQ9 key={key} status=201')
            continue
        if i == 20:
            lines.append(f'{ts(t)} {pods[1]} DEBUG handler/create_payment.go:27 no idempotency key, generated one merchant=mch_{hexid(rng, 4).upper()} key={gen2}')
            continue
        action = rng.choice(["payment intent created", "capture succeeded", "refund created", "authorization approved", "authorization declined reason=insufficient_funds"])
        lines.append(f'{ts(t)} {rng.choice(pods)} INFO service/payment.go:{rng.randint(60, 140)} {action} id=pi_{hexid(rng, 14)} merchant=mch_{hexid(rng, 4).upper()} amount_minor={rng.randint(100, 90000)} currency={rng.choice(["EUR", "USD", "GBP", "PLN"])} key={uuid(rng)}')
    return "\n".join(lines) + "\n", pi1, pi2, gen1


def s1_go_test_httpx() -> str:
    return """=== RUN   TestCloneForUpstreamKeepsAllowlistedHeaders
--- PASS: TestCloneForUpstreamKeepsAllowlistedHeaders (0.00s)
=== RUN   TestCloneForUpstreamSetsForwardedHeaders
--- PASS: TestCloneForUpstreamSetsForwardedHeaders (0.00s)
=== RUN   TestCopyHeadersSkipsHopByHop
--- PASS: TestCopyHeadersSkipsHopByHop (0.00s)
=== RUN   TestWriteJSONNoStore
--- PASS: TestWriteJSONNoStore (0.00s)
PASS
ok  	github.com/acme/payments/pkg/httpx	0.014s
=== RUN   TestPolicyRetriesTimeouts
--- PASS: TestPolicyRetriesTimeouts (0.31s)
=== RUN   TestPolicyDoesNotRetryPOSTByDefault
--- PASS: TestPolicyDoesNotRetryPOSTByDefault (0.00s)
=== RUN   TestPolicyResendsBody
--- PASS: TestPolicyResendsBody (0.16s)
PASS
ok  	github.com/acme/payments/pkg/retry	0.493s
"""


def s1_proxy_test_missing() -> str:
    return "open services/gateway/internal/proxy/proxy_test.go: no such file or directory"


def go_grep(rng, files: list[tuple[str, dict]], pattern: str, n: int) -> str:
    """ripgrep output: `n` header accesses spread over `files`."""
    templates = [
        ("r.Header.Get(\"{h}\")", ["X-Request-Id", "Authorization", "X-Acme-Merchant-Id", "Traceparent", "Accept-Language", "Content-Type"], [""]),
        ("req.Header.Set(\"{h}\", {v})", ["Content-Type", "Accept", "X-Request-Id", "User-Agent"], ['"application/json"', "reqID", "ua", "contentType"]),
        ("w.Header().Set(\"{h}\", {v})", ["Content-Type", "Cache-Control", "Retry-After", "X-Request-Id"], ['"application/json"', '"no-store"', "strconv.Itoa(secs)", "id"]),
        ("resp.Header.Get(\"{h}\")", ["Retry-After", "Content-Type", "X-Ratelimit-Remaining"], [""]),
        ("out.Header.Del(\"{h}\")", ["Cookie", "Connection", "Upgrade", "Te"], [""]),
        ("if v := r.Header.Get(\"{h}\"); v != \"\" {{", ["X-Api-Version", "X-Forwarded-For", "X-Acme-Merchant-Id"], [""]),
        ("for _, v := range r.Header.Values(\"{h}\") {{", ["Accept", "X-Forwarded-For", "Via"], [""]),
    ]
    lines = []
    for _ in range(n):
        path, facts = rng.choice(files)
        line = rng.randint(12, max(13, facts["lines"]))
        template, headers, values = rng.choice(templates)
        code = template.format(h=rng.choice(headers), v=rng.choice(values))
        lines.append((path, line, f"{path}:{line}:\t{code}"))
    lines.sort()
    return "\n".join(l for _, _, l in lines) + "\n"


def go_openapi_gen(rng, kb: int) -> str:
    """A generated OpenAPI client of about `kb` kilobytes."""
    out = ["// Package api provides primitives to interact with the openapi HTTP API.",
           "//",
           "// Code generated by github.com/deepmap/oapi-codegen/v2 version v2.1.0 DO NOT EDIT.",
           "package api", "", "import (", '\t"bytes"', '\t"context"', '\t"encoding/json"', '\t"fmt"', '\t"io"',
           '\t"net/http"', '\t"net/url"', '\t"strings"', "", '\t"github.com/oapi-codegen/runtime"', ")", ""]
    size = sum(len(x) + 1 for x in out)
    i = 0
    while size < kb * 1024:
        noun = GO_NOUNS[i % len(GO_NOUNS)]
        verb = GO_VERBS[(i * 7) % len(GO_VERBS)]
        op = f"{verb}{noun}{'' if i < len(GO_NOUNS) else i // len(GO_NOUNS)}"
        fields = pick(rng, GO_FIELDS, rng.randint(4, 9))
        block_lines = [f"// {op}Params defines parameters for {op}.", f"type {op}Params struct {{"]
        for name, typ, col in fields:
            block_lines.append(f'\t// {name} {rng.choice(["filters by", "is", "sets", "limits to"])} {col.replace("_", " ")}.')
            block_lines.append(f'\t{name} *{typ.lstrip("*")} `form:"{col},omitempty" json:"{col},omitempty"`')
        block_lines += ["}", "",
                        f"// {op}JSONRequestBody defines body for {op} for application/json ContentType.",
                        f"type {op}JSONRequestBody = {noun}Input", "",
                        f"// New{op}Request generates requests for {op}",
                        f"func New{op}Request(server string, params *{op}Params, body io.Reader) (*http.Request, error) {{",
                        "\tvar err error", "", "\tserverURL, err := url.Parse(server)", "\tif err != nil {", "\t\treturn nil, err", "\t}", "",
                        f'\toperationPath := fmt.Sprintf("/v2/{go_snake(noun)}s")',
                        "\tif operationPath[0] == '/' {", '\t\toperationPath = "." + operationPath', "\t}", "",
                        "\tqueryURL, err := serverURL.Parse(operationPath)", "\tif err != nil {", "\t\treturn nil, err", "\t}", "",
                        "\tif params != nil {", "\t\tqueryValues := queryURL.Query()"]
        for name, typ, col in fields[:3]:
            block_lines += [f"\t\tif params.{name} != nil {{",
                            f'\t\t\tif queryFrag, err := runtime.StyleParamWithLocation("form", true, "{col}", runtime.ParamLocationQuery, *params.{name}); err != nil {{',
                            "\t\t\t\treturn nil, err", "\t\t\t} else if parsed, err := url.ParseQuery(queryFrag); err != nil {",
                            "\t\t\t\treturn nil, err", "\t\t\t} else {", "\t\t\t\tfor k, v := range parsed {",
                            "\t\t\t\t\tfor _, v2 := range v {", "\t\t\t\t\t\tqueryValues.Add(k, v2)", "\t\t\t\t\t}", "\t\t\t\t}", "\t\t\t}", "\t\t}"]
        block_lines += ["\t\tqueryURL.RawQuery = queryValues.Encode()", "\t}", "",
                        f'\treq, err := http.NewRequest("{rng.choice(["POST", "GET", "PATCH"])}", queryURL.String(), body)',
                        "\tif err != nil {", "\t\treturn nil, err", "\t}", "", "\treturn req, nil", "}", ""]
        out += block_lines
        size += sum(len(x) + 1 for x in block_lines)
        i += 1
    return "\n".join(out) + "\n"


def go_git_log_patch(rng, kb: int, files: list[str]) -> str:
    """`git log -p` of recent commits, about `kb` kilobytes."""
    out = []
    size = 0
    authors = [("Dana Kowalski", "dana.k"), ("Mo Osei", "mo.osei"), ("Réka Varga", "r.varga"), ("Tomasz Wiśniewski", "tomasz.w"), ("Priya Shah", "priya.s")]
    day = 3
    while size < kb * 1024:
        name, handle = rng.choice(authors)
        path = rng.choice(files)
        noun, verb = rng.choice(GO_NOUNS), rng.choice(GO_VERBS)
        subject = rng.choice([f"{path.split('/')[1]}: {verb.lower()} {go_snake(noun).replace('_', ' ')}s in batches",
                              f"{path.split('/')[1]}: log {go_snake(noun)} ids on {verb.lower()} failures",
                              f"{path.split('/')[1]}: add metrics for {go_snake(verb)}",
                              f"chore: bump deps in {path.split('/')[1]}",
                              f"fix({path.split('/')[1]}): handle nil {noun} in {verb}{noun}"])
        lines = [f"commit {hexid(rng, 40)}", f"Author: {name} <{handle}@acme.example>",
                 f"Date:   {rng.choice(['Mon', 'Tue', 'Wed', 'Thu', 'Fri'])} {rng.choice(['Feb', 'Mar'])} {rng.randint(1, 28)} {rng.randint(9, 18):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d} 2025 +0100",
                 "", f"    {subject}", "", f"diff --git a/{path} b/{path}", f"index {hexid(rng, 7)}..{hexid(rng, 7)} 100644",
                 f"--- a/{path}", f"+++ b/{path}"]
        for _ in range(rng.randint(1, 4)):
            start = rng.randint(10, 300)
            lines.append(f"@@ -{start},{rng.randint(6, 14)} +{start},{rng.randint(6, 16)} @@ func (s *{noun}Service) {verb}{noun}(ctx context.Context, in {verb}{noun}Input) (*{noun}, error) {{")
            body = go_body(rng, rng.choice(["service", "repo", "client"]), "s", noun, verb, go_snake(noun) + "s")
            cut = rng.randint(0, max(0, len(body) - 8))
            for j, b in enumerate(body[cut:cut + rng.randint(6, 12)]):
                mark = " " if j % 4 else rng.choice(["-", "+", " "])
                lines.append(f"{mark}\t{b}")
            lines.append(f"+\t{rng.choice(['s', 'r', 'c'])}.log.Debug(\"{go_snake(verb)} {go_snake(noun)}\", zap.String(\"id\", in.ID))")
        lines.append("")
        out += lines
        size += sum(len(x) + 1 for x in lines)
        day += 1
    return "\n".join(out) + "\n"


def go_test_output(rng, pkgs: list[str]) -> str:
    lines = []
    for pkg in pkgs:
        names = [f"Test{rng.choice(GO_VERBS)}{rng.choice(GO_NOUNS)}{rng.choice(['', 'Rejects', 'Idempotent', 'Concurrent', 'NotFound', 'Validation'])}" for _ in range(rng.randint(3, 7))]
        for name in names:
            lines.append(f"=== RUN   {name}")
            lines.append(f"--- PASS: {name} ({rng.uniform(0, 0.4):.2f}s)")
        lines.append("PASS")
        lines.append(f"ok  \tgithub.com/acme/payments/{pkg}\t{rng.uniform(0.01, 2.5):.3f}s")
    return "\n".join(lines) + "\n"


def go_test_file(rng, path: str, facts: dict) -> tuple[str, dict]:
    """Table-driven tests for the functions of a generated file."""
    pkg = path.split("/")[-2]
    lines = ["// Copyright 2024 Acme Payments, Inc. All rights reserved.", "", f"package {pkg}", "", "import (",
             '\t"context"', '\t"errors"', '\t"testing"', '\t"time"', "", '\t"github.com/stretchr/testify/require"', ")", ""]
    tests = []
    for func in facts["funcs"]:
        noun = next((t for t in facts["types"] if t in func), facts["types"][0])
        name = f"Test{func}"
        tests.append(name)
        cases = []
        for _ in range(rng.randint(2, 5)):
            case = rng.choice(["happy path", "not found", "already final", "invalid currency", "zero amount",
                               "conflicting status", "merchant mismatch", "expired", "duplicate id", "context cancelled"])
            want = {"happy path": "nil", "not found": "ErrNotFound", "already final": "nil", "invalid currency": "ErrValidation",
                    "zero amount": "ErrValidation", "conflicting status": "ErrConflict", "merchant mismatch": "ErrNotFound",
                    "expired": "ErrExpired", "duplicate id": f"ErrDuplicate{noun}", "context cancelled": "context.Canceled"}[case]
            cases.append(f'\t\t{{name: "{case}", in: {noun}{{ID: "{go_snake(noun)[:3]}_{hexid(rng, 10)}", MerchantID: "mch_{hexid(rng, 4).upper()}", AmountMinor: {rng.choice([0, 100, 4599, 125000])}, Currency: "{rng.choice(["EUR", "USD", "XXX", "GBP"])}"}}, wantErr: {want}}},')
        lines += [f"func {name}(t *testing.T) {{", "\tt.Parallel()", "\tcases := []struct {", "\t\tname    string",
                  f"\t\tin      {noun}", "\t\twantErr error", "\t}{"] + cases + ["\t}", "\tfor _, tc := range cases {",
                  "\t\tt.Run(tc.name, func(t *testing.T) {", "\t\t\tctx, cancel := context.WithTimeout(context.Background(), time.Second)",
                  "\t\t\tdefer cancel()", "\t\t\tsut := newFixture(t)",
                  f"\t\t\t_, err := sut.{func}(ctx, tc.in)" if facts["kind"] != "handler" else f"\t\t\terr := sut.call{func}(ctx, tc.in)",
                  "\t\t\trequire.True(t, errors.Is(err, tc.wantErr), \"got %v\", err)", "\t\t})", "\t}", "}", ""]
    return "\n".join(lines), {"kind": "testfile", "path": path, "tests": tests, "lines": len(lines)}


def go_list_dir(rng, path: str, entries: list[str]) -> str:
    out = []
    for e in entries:
        if e.endswith("/"):
            out.append(f"drwxr-xr-x  {rng.randint(2, 14):>2} dev dev   4096 Mar 11 {rng.randint(9, 18):02d}:{rng.randint(0, 59):02d} {e}")
        else:
            out.append(f"-rw-r--r--   1 dev dev {rng.randint(400, 24000):>6} Mar {rng.randint(1, 12):>2} {rng.randint(9, 18):02d}:{rng.randint(0, 59):02d} {e}")
    return f"{path}:\ntotal {len(entries) * 8}\n" + "\n".join(out) + "\n"


def s1_observe(rng, facts: dict) -> str:
    """What the assistant makes of a generated Go file."""
    kind = facts["kind"]
    if kind in ("listdir", "grep", "gitlog", "gotest", "testfile"):
        return s1_observe_other(rng, facts)
    path = facts["path"]
    funcs = ", ".join(f"`{f}`" for f in facts["funcs"][:5])
    more = f" and {len(facts['funcs']) - 5} more" if len(facts["funcs"]) > 5 else ""
    types = ", ".join(f"`{t}`" for t in facts["types"])
    tables = ", ".join(f"`{t}`" for t in facts["tables"])
    svc = path.split("/")[1]
    options = {
        "handler": [
            f"`{path}` is an ordinary chi handler file ({facts['lines']} lines): {funcs}{more} decode JSON, validate and delegate to the service, mapping `ErrNotFound`/`ErrConflict` to 404/409 and everything else to 500. None of them reads `Idempotency-Key`; in {svc} the header is not touched at the HTTP layer at all.",
            f"The {svc} handlers in `{path}` ({funcs}{more}) follow the house pattern: decode, `Validate()`, call the service, write JSON. The only header they look at is the merchant id via `httpx.MerchantFrom`. Nothing idempotency-related here.",
        ],
        "service": [
            f"`{path}` holds the {svc} service logic for {types}. {funcs}{more} validate the input, load the existing record and return early when its status is terminal. That guard is keyed on the resource id, not on a client key, so it would only catch a retry that reused the same id, which a fresh POST never does.",
            f"In `{path}` the service methods ({funcs}{more}) publish an event after every write. The early return on `Status.Terminal()` is the only duplicate guard; it protects state transitions, not creation, so it cannot stop a second create.",
        ],
        "repo": [
            f"`{path}` is the persistence layer for {tables}. Inserts use `ON CONFLICT (id) DO NOTHING` and report a duplicate only when the id repeats; ids are generated upstream per request, so two creates for the same logical payment would both insert.",
            f"The repository in `{path}` ({funcs}{more}) is plain sqlx against {tables}; updates are guarded with `status = ANY($3)`. Deduplication at this layer is by primary key only.",
        ],
        "client": [
            f"`{path}` is {svc}'s upstream client: {funcs}{more} marshal the input, build a POST and send it through `retry.Do`. So every upstream call here inherits whatever `pkg/retry` does to the request on a second attempt.",
            f"Another client that goes through `pkg/retry` (`{path}`: {funcs}{more}). It sets only `Content-Type` itself and relies on the retry policy to resend the body.",
        ],
        "worker": [
            f"`{path}` is a Kafka consumer ({funcs}{more}): fetch, decode, handle, then commit. At-least-once delivery, failures go to the DLQ. It consumes events after the fact, so it could duplicate side effects but not create a second payment intent.",
            f"The consumer in `{path}` commits offsets only after `handle` returns, so a crash between the two replays the event. Its handlers ({funcs}{more}) act on existing records; they do not call the create path.",
        ],
        "middleware": [
            f"`{path}` contains {svc} middleware ({funcs}{more}): timing and metrics around `next.ServeHTTP`, plus a debug log for a missing header. It passes the request through unchanged.",
            f"Metrics middleware in `{path}`: it records a duration histogram per route and status and never rewrites the request.",
        ],
    }
    detail = []
    internal = [i.split("/")[-1] for i in facts["imports"] if "acme/payments" in i]
    if internal:
        detail.append(rng.choice([
            f"Internal dependencies: {', '.join('`pkg/' + i + '`' for i in internal)}.",
            f"It pulls in {', '.join('`' + i + '`' for i in internal)} from our own packages, nothing unusual.",
            f"Of our shared packages it only uses {', '.join('`' + i + '`' for i in internal)}.",
        ]))
    if "retry" in internal:
        detail.append("Because it imports `pkg/retry`, its POSTs can be sent more than once; worth remembering when I get to the retry code.")
    if facts["tables"] and kind in ("repo", "service"):
        detail.append(rng.choice([
            f"Tables touched: {tables}. None has a column for a client-supplied key.",
            f"The SQL only ever filters by id and merchant on {tables}; there is no unique constraint that would stop a second create for the same customer action.",
            f"{tables.capitalize()} are keyed by server-generated ids, so uniqueness is per attempt, not per customer action.",
        ]))
    if len(facts["funcs"]) >= 6:
        detail.append(f"{len(facts['funcs'])} methods in {facts['lines']} lines; a lot of surface, but all of it follows the same pattern.")
    return " ".join([rng.choice(options[kind])] + detail)


def s1_observe_other(rng, facts: dict) -> str:
    kind = facts["kind"]
    if kind == "listdir":
        names = ", ".join(f"`{e}`" for e in facts["entries"][:6])
        return rng.choice([
            f"`{facts['path']}` has the usual layout: {names}. I'll go through them in that order.",
            f"The listing of `{facts['path']}` shows {len(facts['entries'])} entries ({names}); nothing outside the standard layers.",
        ])
    if kind == "grep":
        files = sorted({m.split(':')[0] for m in facts["matches"]})
        return rng.choice([
            f"`{facts['pattern']}` appears {len(facts['matches'])} times in {len(files)} files ({', '.join('`' + f + '`' for f in files[:4])}{' …' if len(files) > 4 else ''}). All call sites pass the request through unchanged.",
            f"{len(facts['matches'])} matches for `{facts['pattern']}`, spread over {len(files)} files. None of them builds a request by hand; they all go through the shared helpers.",
            f"The search for `{facts['pattern']}` gives {len(facts['matches'])} hits. The interesting ones are in {', '.join('`' + f + '`' for f in files[:3])}; the rest are tests and mocks.",
        ])
    if kind == "gitlog":
        return rng.choice([
            f"History of `{facts['path']}`: {facts['count']} commits in the window, mostly {facts['theme']}. Nothing that touches headers or retries.",
            f"The last {facts['count']} commits on `{facts['path']}` are {facts['theme']}; the two-week window has nothing about idempotency or request building.",
        ])
    if kind == "testfile":
        return rng.choice([
            f"`{facts['path']}` has {len(facts['tests'])} table-driven tests ({', '.join('`' + t + '`' for t in facts['tests'][:3])}…). They call the service directly, so the HTTP path and any retry in front of it are never exercised.",
            f"The tests in `{facts['path']}` cover validation and status transitions with a fake repository; nothing sends the same request twice, and no test sets an `Idempotency-Key`.",
        ])
    if kind == "gotest":
        return rng.choice([
            f"Tests for `{facts['path']}` pass ({facts['count']} tests). Useful as a baseline, but none of them exercises a retried POST end to end.",
            f"All {facts['count']} tests in `{facts['path']}` pass, so whatever is wrong is not covered by the unit tests of this package.",
        ])
    return ""


def s1_reflect(rng, facts: dict, ledger: Ledger) -> str:
    svc = facts.get("path", "services/x").split("/")[1] if facts.get("path", "").startswith("services/") else "this area"
    options = [
        f"Thinking about what this means for the request path: a duplicate charge needs two payment intents, and only the payments create path makes intents. So anything in {svc} matters only if it can cause payments to see the same customer action twice without recognising it.",
        f"What I'm looking for in each file is one of three things: code that re-sends a request, code that rebuilds a request (and may drop headers), or code that invents identifiers. {svc.capitalize()} has none of those so far.",
        f"H2 is still my favourite ({ledger.status['H2']}): the reports mention timeouts, and a timeout is exactly when some layer would retry. But I have not yet seen a retry that changes the request, so I keep an open mind about H3 ({ledger.status['H3']}).",
        f"It is worth being systematic here. The incident started about two weeks ago, so the cause is likely a change in that window; the files in {svc} would only matter if something in them changed recently, which the history will tell me.",
        "One thing I keep in mind: the SDKs (iOS and Android) set the key per logical operation according to the grep, so if they were at fault every retry would carry a new key. Production logs can settle that later; first I want the server-side picture complete.",
        f"The ledger dedupes postings by posting id, and posting ids come from the intent, so if payments creates two intents the ledger will post twice. H4 ({ledger.status['H4']}) would then be a symptom rather than the cause.",
        "Nothing in this file is specific to mobile clients, which fits: the reports are from the app only because the app is the client that retries after timeouts; the web checkout does not retry.",
    ]
    return rng.choice(options)


def s1_intent(rng, tool: str, args: dict, why: str | None) -> str:
    target = args.get("path") or args.get("command") or args.get("pattern")
    if why:
        return why
    if tool == "read_file":
        return rng.choice([
            f"Next I'll read `{target}` to see how it builds and sends its requests.",
            f"Reading `{target}` next; I want to rule this layer in or out rather than assume.",
            f"Let me open `{target}`: if anything in this service touches the key or re-creates requests, it would be there.",
            f"I'll check `{target}` next to make sure nothing there rebuilds the request or mints ids on its own.",
            f"`{target}` is next, for completeness on this service before moving on.",
        ])
    if tool == "grep":
        return f"I'll grep for `{args['pattern']}` under `{args['path']}` to find every place that touches it."
    if tool == "list_dir":
        return f"Listing `{target}` to see how this part of the tree is organised."
    return f"Running `{target}`."


def build_investigation() -> tuple[Session, dict]:
    s = Session("investigation-duplicate-charges")
    rng = s.rng
    s.tool("read_file", "Read a file from the repository (path relative to the repository root).",
           {"path": {"type": "string"}}, ["path"], 35, "open: no such file or directory")
    s.tool("list_dir", "List a directory of the repository (ls -la).",
           {"path": {"type": "string"}}, ["path"], 20, "ls: cannot access: No such file or directory")
    s.tool("grep", "Search file contents with ripgrep (rg -n PATTERN PATH).",
           {"pattern": {"type": "string"}, "path": {"type": "string"}}, ["pattern", "path"], 180, "rg: no matches")
    s.tool("run_command", "Run a shell command in the repository root (git, go, kubectl, redis-cli are available).",
           {"command": {"type": "string"}}, ["command"], 1200, "sh: command failed")
    ledger = Ledger(rng, HYPOTHESES)
    key = uuid(rng)

    # The survey: per service a listing, its source files (two of some
    # kinds), a symbol search, its recent history and its tests.
    units: list[list[tuple]] = []
    generated: list[tuple[str, dict]] = []
    steps: list[tuple] = []  # (tool, args, output, facts or None, why, effect)

    def special(tool, args, output, why, effect=None):
        steps.append((tool, args, output, None, why, effect))

    themes = ["dependency bumps and lint fixes", "metrics and log-field additions", "small refactors of the repository layer",
              "feature flags for the new dashboard", "test fixes and CI tweaks"]
    for svc, nouns in GO_SERVICES.items():
        unit = []
        kinds = GO_KINDS[:] if svc in ("gateway", "payments", "ledger") else pick(rng, GO_KINDS, 5)
        files = []
        for kind in kinds:
            for extra in range(2 if kind in ("handler", "service", "repo") and svc in ("gateway", "payments", "ledger", "billing") else 1):
                ns = pick(rng, nouns, min(len(nouns), rng.randint(1, 2)))
                if extra:
                    ns = [n for n in nouns if n not in ns][:1] or ns
                name = go_snake(ns[0]) + ("_" + kind if kind in ("client", "worker", "middleware") else "") + ".go"
                path = f"services/{svc}/internal/{kind}/{name}"
                if path in files:
                    continue
                files.append(path)
                unit.append(("file", path, kind, ns))
        entries = [f"{k}/" for k in kinds] + ["config/", "main.go", "wire.go"]
        unit.insert(0, ("listdir", f"services/{svc}/internal", entries))
        unit.insert(len(unit) // 2, ("grep", rng.choice(["NewRequestWithContext", "retry.Do", "uuid.New", "ON CONFLICT", "Publish(ctx"]), f"services/{svc}"))
        tested = next(u for u in unit if u[0] == "file" and u[2] in ("service", "repo"))
        unit.append(("testfile", tested[1].replace(".go", "_test.go"), tested))
        unit.append(("grep", rng.choice(["Header.Get", "context.WithTimeout", "ErrDuplicate", "status = ANY"]), f"services/{svc}"))
        unit.append(("gitlog", f"services/{svc}", rng.choice(themes)))
        unit.append(("gotest", f"services/{svc}"))
        units.append(unit)
    survey = [item for unit in units for item in unit]

    def survey_step(item):
        if item[0] == "file":
            _, path, kind, nouns = item
            content, facts = go_file(rng, path, kind, nouns)
            generated.append((path, facts))
            steps.append(("read_file", {"path": path}, content, facts, None, None))
        elif item[0] == "listdir":
            _, path, entries = item
            steps.append(("list_dir", {"path": path}, go_list_dir(rng, path, entries), {"kind": "listdir", "path": path, "entries": entries}, None, None))
        elif item[0] == "grep":
            _, pattern, path = item
            pool = [g for g in generated if g[0].startswith(path)] or generated
            matches = []
            for _ in range(rng.randint(6, 40)):
                p, f = rng.choice(pool)
                matches.append(f"{p}:{rng.randint(12, max(13, f['lines']))}:\t{rng.choice(f['funcs'])}(ctx, {rng.choice(['in', 'req', 'out', 'id'])}) // {pattern}")
            matches.sort()
            steps.append(("grep", {"pattern": pattern, "path": path}, "\n".join(matches) + "\n", {"kind": "grep", "pattern": pattern, "matches": matches}, None, None))
        elif item[0] == "testfile":
            _, path, tested = item
            facts = next(f for p, f in generated if p == tested[1])
            content, tfacts = go_test_file(rng, path, facts)
            steps.append(("read_file", {"path": path}, content, tfacts, None, None))
        elif item[0] == "gitlog":
            _, path, theme = item
            n = rng.randint(12, 30)
            lines = [f"{hexid(rng, 7)} {path.split('/')[1]}: {rng.choice(['bump', 'add', 'fix', 'refactor', 'log', 'test'])} {rng.choice(['deps', 'metrics', 'repository errors', 'handler validation', 'flaky test', 'lint', 'config loading', 'span names'])} ({rng.randint(1, 90)} days ago, {rng.choice(['dana.k', 'mo.osei', 'r.varga', 'lena.p', 'tomasz.w', 'priya.s'])})" for _ in range(n)]
            steps.append(("run_command", {"command": f"git log --format='%h %s (%ar, %al)' -n {n} -- {path}"}, "\n".join(lines) + "\n", {"kind": "gitlog", "path": path, "count": n, "theme": theme}, None, None))
        else:
            _, path = item
            pkgs = [f"{path}/internal/{k}" for k in GO_KINDS if rng.random() < 0.7] or [f"{path}/internal/handler"]
            out = go_test_output(rng, pkgs)
            steps.append(("run_command", {"command": f"go test ./{path}/... -count=1 -v 2>&1 | tail -80"}, out, {"kind": "gotest", "path": path, "count": out.count("--- PASS")}, None, None))

    cursor = 0

    def survey_until(n):
        nonlocal cursor
        while cursor < min(n, len(survey)):
            survey_step(survey[cursor])
            cursor += 1

    special("list_dir", {"path": "."}, go_list_dir(rng, ".", [".github/", "docs/", "pkg/", "services/", "deploy/", "scripts/", "Makefile", "README.md", "go.work", "go.work.sum", ".golangci.yml"]),
            "First I want the lay of the land: the repository root.")
    special("read_file", {"path": "README.md"}, s1_readme(rng), "The README should tell me which service owns what.")
    special("read_file", {"path": "docs/adr/ADR-031-idempotency.md"}, s1_adr(),
            "The README points at ADR-031 for idempotency; that is the contract the code should implement, so I'll read it before the code.",
            ("evidence", "ADR-031: gateway must forward Idempotency-Key unchanged on every attempt; payments dedupes (merchant, key) for 24h; services must never invent keys"))
    special("grep", {"pattern": "Idempotency-Key", "path": "."},
            "docs/adr/ADR-031-idempotency.md:14:1. Every mutating public endpoint accepts an `Idempotency-Key` header\n"
            "docs/adr/ADR-031-idempotency.md:38:  copy the `Idempotency-Key` header. There is a contract test in\n"
            "pkg/idempotency/key.go:9:const Header = \"Idempotency-Key\"\n"
            "services/payments/internal/handler/create_payment.go:21:\tkey := r.Header.Get(\"Idempotency-Key\")\n"
            "sdk/ios/Sources/AcmeSDK/HTTP/RequestBuilder.swift:88:        request.setValue(operation.idempotencyKey, forHTTPHeaderField: \"Idempotency-Key\")\n"
            "sdk/android/acme/src/main/kotlin/com/acme/sdk/http/Requests.kt:54:        header(\"Idempotency-Key\", op.idempotencyKey)\n",
            "Now the literal header name across the tree, to find every reader and writer of it.",
            ("evidence", "only one server-side reader of the header literal: payments create_payment.go; gateway uses the idempotency.Header constant"))
    special("read_file", {"path": "services/gateway/internal/middleware/idempotency.go"}, s1_gateway_idem_mw(rng),
            "The gateway side uses the constant, so its middleware is the next thing to read.",
            ("evidence", "gateway middleware validates the key and stores it in the context, forwards the request unchanged"))
    survey_until(14)
    special("read_file", {"path": "services/gateway/internal/proxy/payments.go"}, s1_gateway_proxy(rng),
            "The gateway's own packages are surveyed; the proxy that forwards POST /v2/payments is what I really need.",
            ("evidence", "gateway proxy: CloneForUpstream + retry.Do with RetryPOST=true, 3 attempts, 8 s budget"))
    survey_until(30)
    special("read_file", {"path": "pkg/retry/retry.go"}, s1_retry(rng),
            "The proxy retries POSTs, so `pkg/retry` decides what the second attempt looks like.",
            ("evidence", "retry.Do rebuilds the request with httpx.CloneForUpstream on every attempt after the first"))
    survey_until(44)
    special("run_command", {"command": "git log --format='%h %s (%ar, %al)' -n 10 -- pkg/httpx pkg/retry"}, s1_git_log_httpx(rng),
            "Before reading `pkg/httpx`, the history of it and `pkg/retry`: the duplicates started recently, so a recent change is a good suspect.",
            ("evidence", "4f1c2ab 'httpx: forward only allowlisted headers upstream (SEC-412)' 16 days ago, same day-range as 9d03e51 'retry: clone the request per attempt'"))
    survey_until(58)
    special("read_file", {"path": "pkg/httpx/clone.go"}, s1_clone(rng),
            "Now `pkg/httpx/clone.go`, which both the proxy and the retry path call.",
            ("confirm", "forwardedHeaders allowlist in pkg/httpx/clone.go has no Idempotency-Key: retries built by CloneForUpstream reach payments without the key"))
    special("read_file", {"path": "services/payments/internal/handler/create_payment.go"}, s1_create_payment(rng),
            "If the key is stripped, what does payments do with a keyless POST? The handler the grep found.",
            ("evidence", "payments handler generates 'gen_' + uuid when the key is missing, contrary to ADR-031, so a stripped retry is a brand-new payment"))
    survey_until(70)
    special("read_file", {"path": "services/payments/internal/idempotency/store.go"}, s1_idem_store(rng),
            "To close H3 properly I want the store itself.",
            ("weaken", "store.go: SETNX idem:{merchant}:{key} with a 24h TTL, replay on same fingerprint; correct as long as the key arrives"))
    survey_until(len(survey))
    special("run_command", {"command": "kubectl -n edge logs deploy/gateway --since=3h | grep -E 'POST /v2/payments|retry' | head -60"}, s1_logs_gateway(rng, key),
            "Enough code: production should show the pattern. Gateway logs for POST /v2/payments around a reported duplicate.",
            ("rule_out", f"gateway logs: key {key[:8]}... arrived twice from the SDK (first call retried upstream after an 8 s timeout, client retry 9 s later), same key both times"))
    plog, pi1, pi2, gen1 = s1_logs_payments(rng, key)
    special("run_command", {"command": "kubectl -n payments logs deploy/payments-api --since=3h | grep -E 'idempotency|intent created' | head -60"}, plog,
            "And the payments side of the same window.",
            ("confirm2", f"payments logs: {pi1} created with the client key, then {pi2} created 0.3 s after the gateway retry with a generated key {gen1[:12]}...; the client's own retry replayed {pi1}"))
    special("read_file", {"path": "pkg/httpx/clone_test.go"}, s1_clone_test(rng),
            "Why did no test catch this? The httpx tests.",
            ("evidence", "clone_test.go only checks Authorization, X-Request-Id and Cookie; the ADR's contract test does not exist"))
    special("read_file", {"path": "services/gateway/internal/proxy/proxy_test.go"}, None,
            "ADR-031 mentions a contract test in the gateway proxy package; let me confirm it exists.",
            ("evidence", "services/gateway/internal/proxy/proxy_test.go does not exist"))
    special("run_command", {"command": "go test ./pkg/httpx/... ./pkg/retry/... -run 'Clone|Policy' -v"}, s1_go_test_httpx(),
            "The existing tests pass, which is the point: nothing asserts the header.")
    special("run_command", {"command": "git show 4f1c2ab"}, s1_git_show(rng),
            "The commit itself, to be precise in the write-up about what changed.",
            ("evidence", "4f1c2ab replaced `out.Header = r.Header.Clone()` by the allowlist; before it Idempotency-Key was forwarded"))
    survey_files = [p for p, _ in generated]
    # The heavy end of the session: repository-wide searches and generated code.
    special("grep", {"pattern": "Header\\.(Get|Set|Del|Values)\\(", "path": "services"}, go_grep(rng, generated, "Header", 2050),
            "Before proposing the fix I want every other place that builds upstream requests by hand and might also lose headers, so a repository-wide search for header access.")
    special("read_file", {"path": "services/gateway/api/openapi.gen.go"}, go_openapi_gen(rng, 100),
            "The gateway also has a generated client for its upstream calls; I want to be sure it does not build its own requests around `pkg/httpx`.")
    special("run_command", {"command": "git log -p -n 40 -- services/gateway services/payments pkg"}, go_git_log_patch(rng, 100, survey_files),
            "Last check on history: the recent patches to gateway, payments and pkg, to see if anything else touched header handling around the same dates.")
    special("run_command", {"command": "go test ./services/gateway/... ./services/payments/... 2>&1 | tail -40"}, go_test_output(rng, ["services/gateway/internal/handler", "services/gateway/internal/proxy", "services/gateway/internal/middleware", "services/payments/internal/handler", "services/payments/internal/service", "services/payments/internal/idempotency"]),
            "The generated client uses its own transport and never goes through the retry path, so it is not affected. Running the service tests as a baseline before I write the fix.")

    # Turn the plan into exchanges, each text reasoning about the previous output.
    prev_facts = None
    prev_effect = None
    for index, (tool, args, output, facts, why, effect) in enumerate(steps):
        parts = []
        if index == 0:
            parts.append("Customers report duplicate charges when the mobile app retries `POST /v2/payments` after a timeout. The platform is supposed to deduplicate on `Idempotency-Key`, so somewhere the key is lost, rotated, or ignored.")
            parts.append("Working hypotheses:\n" + ledger.board())
        else:
            if prev_facts is not None:
                parts.append(s1_observe(rng, prev_facts))
                if prev_facts["kind"] == "worker" and ledger.status["H5"] == "open":
                    ledger.status["H5"] = "unlikely"
            if prev_effect is not None:
                kind, note = prev_effect
                ledger.evidence.append(note)
                if kind == "confirm":
                    ledger.status["H2"] = "very likely"
                    parts.append("This is it, or most of it. The allowlist has no `Idempotency-Key`. The first attempt of a proxied POST carries the original request object, so the key arrives; every retry inside `retry.Do` is rebuilt by `CloneForUpstream` and loses it. A gateway-side retry after an upstream timeout therefore reaches payments without a key.")
                elif kind == "confirm2":
                    ledger.status["H2"] = "confirmed"
                    ledger.status["H4"] = "consequence, not cause"
                    parts.append(f"That closes the loop: `{pi1}` was created under the client's key, the gateway's retry reached payments without a key and became `{pi2}` under a generated `gen_` key, and the SDK's own retry nine seconds later was correctly replayed. Two intents, one customer action: the duplicate charge.")
                elif kind == "rule_out":
                    ledger.status["H1"] = "ruled out"
                    parts.append(f"The SDK is behaving: the same key `{key}` shows up on both client attempts. The interesting line is `upstream_attempts=2` on the first one: the gateway itself retried the upstream call after 8 s.")
                elif kind == "weaken":
                    ledger.status["H3"] = "ruled out"
                    parts.append("The store is sound: `SETNX` claims the key, a repeat with the same fingerprint replays, a different one is rejected, and `KeepTTL` preserves the 24 h window. It can only deduplicate what it is given, though.")
                else:
                    parts.append(f"Noted: {note}.")
            if index % 4 == 0 or prev_effect is not None:
                parts.append("Where I am:\n" + ledger.board())
                if ledger.evidence:
                    parts.append("Evidence so far:\n" + ledger.recent_evidence(6))
            if prev_facts is not None and index % 4 != 0:
                parts.append(s1_reflect(rng, prev_facts, ledger))
            if index % 4 != 0:
                upcoming = []
                for t, a, _, f, *_ in steps[index + 1:index + 1 + rng.randint(3, 6)]:
                    if f is None:
                        break
                    upcoming.append(a["path"] if t in ("read_file", "list_dir") else (f"rg {a['pattern']} {a['path']}" if t == "grep" else a["command"].split(" 2>&1")[0]))
                if upcoming:
                    parts.append(rng.choice(["Still on my list after this: ", "Queue after this one: ", "Then, in order: "]) + ", ".join(f"`{u}`" for u in upcoming) + ".")
            if prev_facts is not None and index % 4 != 0 and prev_effect is None:
                parts.append(rng.choice([
                    f"So far nothing outside the gateway → payments path touches the key; {ledger.status['H2']} is where H2 stands.",
                    "This layer looks unrelated to header handling, which narrows things to the request path itself.",
                    f"That is {sum(1 for p, _ in generated)} source files surveyed; the pattern is consistent across services.",
                    "I keep the survey going service by service so I don't anchor on the first suspicious thing.",
                    "No new evidence here, but it rules out one more place where a second intent could be created.",
                ]))
        parts.append(s1_intent(rng, tool, args, why))
        text = "\n\n".join(parts)
        if output is None:
            s.step(text, tool, args, error=f"open {args['path']}: no such file or directory")
        else:
            s.step(text, tool, args, output=output)
        prev_facts, prev_effect = facts, effect
    final = f"""Root cause found. The duplicate charges come from the gateway's own upstream retry, not from the mobile SDK.

**What happens**
1. The SDK sends `POST /v2/payments` with `Idempotency-Key` and reuses the key on its retries (gateway logs show the same key on both client attempts), so H1 is ruled out.
2. The gateway proxy (`services/gateway/internal/proxy/payments.go`) forwards with `retry.Do` and `RetryPOST: true`. When payments is slow (> 8 s), the first attempt times out and `pkg/retry` sends a second attempt.
3. Every attempt after the first is rebuilt by `httpx.CloneForUpstream`, which since commit `4f1c2ab` ("httpx: forward only allowlisted headers upstream (SEC-412)", 16 days ago) copies only an allowlist of headers. `Idempotency-Key` is not on it, so the retry reaches payments without a key.
4. `services/payments/internal/handler/create_payment.go` then generates a key (`"gen_" + uuid`) instead of treating the request as unkeyed, so the retry becomes a second payment intent (`{pi2}` next to `{pi1}` in the logs). The SDK's own retry later replays the first intent correctly, so the customer sees one success and is charged twice.

**Fix**
- `pkg/httpx/clone.go`: add `Idempotency-Key` to `forwardedHeaders` (the ADR requires it on every attempt).
- `services/payments/internal/handler/create_payment.go`: stop minting `gen_` keys; a keyless request should skip the idempotency store as ADR-031 says.
- Add the contract test ADR-031 promises in `services/gateway/internal/proxy/proxy_test.go` (it does not exist): a retried POST through `retry.Do` must carry the original `Idempotency-Key`.
- Follow-up: find the intents created under `gen_` keys since {_4f1c2ab_date()} and refund the duplicates (the payments logs show them with `generated one`).

Ruled out: the idempotency store (H3: SETNX with a 24 h TTL and fingerprint check is correct), the ledger (H4 is a consequence), and webhooks/reconciliation (H5: they act on existing records only)."""
    s.answer(final)
    s.summary("""## Session summary (compacted)

Task: customers are charged twice when the mobile app retries `POST /v2/payments` after a timeout; find where idempotency is lost.

Done so far:
- Read README and ADR-031 (gateway must forward `Idempotency-Key` unchanged on every attempt; payments dedupes `(merchant, key)` in redis for 24 h; services must never invent keys).
- Surveyed handlers, services, repos, clients, workers and middleware of gateway, payments, ledger, risk, webhooks, payouts and billing: none of them reads the header except `services/payments/internal/handler/create_payment.go`.
- `services/gateway/internal/proxy/payments.go` forwards via `retry.Do` with `RetryPOST: true` (3 attempts, 8 s budget).
- `pkg/retry/retry.go` rebuilds every attempt after the first with `httpx.CloneForUpstream`.
- `pkg/httpx/clone.go` forwards only an allowlist (commit `4f1c2ab`, SEC-412, 16 days ago); `Idempotency-Key` is missing from it.
- `create_payment.go` generates `gen_<uuid>` keys for keyless requests, so a stripped retry becomes a second intent.
- Production logs confirm: same client key on both SDK attempts (H1 ruled out); the gateway's upstream retry created a second intent under a generated key.
- `pkg/httpx/clone_test.go` does not assert the header; the ADR's proxy contract test does not exist. Existing tests pass.

Hypotheses: H1 ruled out, H2 confirmed (allowlist drops the key on gateway retries), H3 ruled out (store correct), H4 consequence, H5 open but unlikely.

Remaining: check other request builders for lost headers, then write up the fix (allowlist + stop generating keys + contract test + refund follow-up).""", reusable=True)
    head = {
        "name": s.name,
        "description": (
            "A long codebase investigation in a Go payments monorepo (duplicate charges on retried POSTs): "
            f"{s.main_steps} model decisions, chatty reasoning turns that keep a hypothesis board, and about a hundred "
            "source files, logs and git history read along the way, ending with three very large outputs (a "
            "repository-wide grep, a generated OpenAPI client, a `git log -p`). Under the default `roku` strategy on a "
            "128K window every planned layer fires on its own as the history grows: Layer 0 masks old results every "
            "step, the large outputs push the loop's estimate past 60 % (Layer 1 collapses old rounds, Layer 2 "
            "replaces older history with the session memory) and then past 75 %, where Layer 3 asks for a summary, "
            "answered by the recording's reusable compaction exchange. The uncompacted history passes 150K tokens, "
            "so `none` cannot finish on this window."
        ),
        "model": "gpt-4.1",
        "context_window": 128000,
        "system": "You are a senior backend engineer investigating a production issue in a Go monorepo. You can read files, list directories, search with ripgrep and run read-only commands (git, go test, kubectl logs). Gather evidence before concluding, keep track of your hypotheses, and finish with the root cause, the evidence and the fix.",
        "task": "Customers report duplicate charges when our mobile app retries `POST /v2/payments` after a timeout, although every request carries an `Idempotency-Key`. It started about two weeks ago. Find out where idempotency breaks and propose a fix.",
    }
    return s, {"head": head, "final_contains": ["4f1c2ab", "pkg/httpx/clone.go", "Idempotency-Key"]}


def _4f1c2ab_date():
    return "2025-02-25"
