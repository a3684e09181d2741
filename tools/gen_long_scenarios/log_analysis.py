"""Scenario 2: a log analysis (checkout latency incident), the reactive path."""

from __future__ import annotations

import json

from .randomness import hexid, hms, ts
from .session import Ledger, Session


T_REPORT = 9 * 3600 + 2 * 60 + 11.4      # the BI query starts
T_ALTER = 9 * 3600 + 10 * 60 + 58.2      # the migration's ALTER TABLE asks for its lock
T_FULL = 9 * 3600 + 19 * 60 + 3.0        # postgres runs out of connection slots
T_CANCEL = 9 * 3600 + 39 * 60 + 40.7     # the DBA cancels the BI query
T_CLEAR = 9 * 3600 + 41 * 60 + 20.0      # latency back to normal
ROUTES = ["POST /api/checkout", "GET /api/cart", "POST /api/cart/items", "GET /api/orders/{id}", "GET /api/products/{id}",
          "POST /api/checkout/confirm", "GET /api/shipping/quote", "DELETE /api/cart/items/{id}"]
ORDER_ROUTES = {"POST /api/checkout", "POST /api/checkout/confirm", "GET /api/orders/{id}"}


def phase(t: float) -> str:
    if t < T_ALTER:
        return "normal"
    if t < T_CANCEL:
        return "locked"
    if t < T_CLEAR:
        return "recovery"
    return "normal"


def ingress_line(rng, t: float, route: str | None = None, status: int | None = None) -> tuple[str, int, float]:
    route = route or rng.choice(ROUTES)
    ph = phase(t)
    touches_orders = route in ORDER_ROUTES
    if status is None:
        if ph == "locked" and touches_orders:
            status = rng.choice([503, 503, 504, 200, 201, 503]) if t > T_ALTER + 30 else rng.choice([200, 201, 504])
        elif ph == "recovery" and touches_orders:
            status = rng.choice([200, 201, 200, 503])
        else:
            status = rng.choice([200, 200, 200, 201, 204, 304, 404, 200])
    if status in (503, 504):
        rt = rng.uniform(9.8, 10.02) if status == 504 else rng.uniform(5.0, 10.0)
    elif ph in ("locked", "recovery") and touches_orders:
        rt = rng.uniform(2.0, 9.5)
    else:
        rt = rng.lognormvariate(-2.2, 0.6)
    path = route.split(" ")[1].replace("{id}", str(rng.randint(4_000_000, 4_999_999)))
    method = route.split(" ")[0]
    pod_ip = f"10.42.{rng.randint(1, 9)}.{rng.randint(2, 250)}"
    t_str = f"14/Mar/2025:{hms(t)}.{int((t % 1) * 1000):03d} +0000"
    ua = rng.choice(["Mozilla/5.0 (iPhone; CPU iPhone OS 17_3 like Mac OS X) AppleWebKit/605.1.15", "okhttp/4.12.0",
                     "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 Chrome/122.0", "ShopApp/8.4.1 (Android 14)"])
    upstream = "-" if status == 503 and rng.random() < 0.3 else f"{pod_ip}:8080"
    line = (f'{rng.randint(81, 213)}.{rng.randint(1, 254)}.{rng.randint(1, 254)}.{rng.randint(1, 254)} - - [{t_str}] '
            f'"{method} {path} HTTP/2.0" {status} {rng.randint(0, 4800) if status < 500 else rng.choice([0, 162, 190])} "-" "{ua}" '
            f'rt={rt:.3f} uct={rng.uniform(0, 0.004):.3f} urt={"-" if upstream == "-" else f"{rt - rng.uniform(0, 0.01):.3f}"} upstream={upstream} req_id={hexid(rng, 32)}')
    return line, status, rt


def checkout_line(rng, t: float) -> tuple[str, str]:
    ph = phase(t)
    pod = f"checkout-7c9f5d6b8-{rng.choice(['x2x9k', 'p4kmd', 'qq81z', 'f7t2c', 'lm9w4', 'h3vbn', 'r8d2s', 'zt5xq', 'c2m7p', 'w9q4j', 'b6n1e', 'k5s8u', 'y2f6g', 'v7a3d'][:6 if t < T_ALTER + 240 else 14])}"
    trace = hexid(rng, 32)
    if ph == "locked" and rng.random() < 0.8:
        kind = rng.choice(["pool", "pool", "timeout", "stmt", "retry"] + (["full"] if t > T_FULL else []))
        if kind == "pool":
            wait = rng.randint(1200, 10000)
            msg = {"level": "warn", "msg": "waiting for db connection", "pool": "orders-rw", "wait_ms": wait, "in_use": 20, "max": 20, "waiters": rng.randint(3, 61)}
        elif kind == "timeout":
            msg = {"level": "error", "msg": "checkout failed", "error": "acquire conn: context deadline exceeded", "route": "POST /api/checkout", "status": 503, "elapsed_ms": rng.randint(5000, 10000)}
        elif kind == "stmt":
            msg = {"level": "error", "msg": "query failed", "error": "ERROR: canceling statement due to statement timeout (SQLSTATE 57014)", "query": rng.choice(["insert_order", "select_order_for_update", "update_order_status"]), "elapsed_ms": 5000 + rng.randint(0, 40)}
        elif kind == "full":
            msg = {"level": "error", "msg": "db connect failed", "error": "FATAL: sorry, too many clients already (SQLSTATE 53300)", "pool": "orders-rw"}
        else:
            msg = {"level": "warn", "msg": "retrying checkout step", "step": rng.choice(["reserve_stock", "create_order", "authorize_payment"]), "attempt": rng.randint(1, 3), "error": "acquire conn: context deadline exceeded"}
    else:
        kind = "ok"
        msg = {"level": "info", "msg": rng.choice(["order created", "cart priced", "payment authorized", "stock reserved"]), "order_id": rng.randint(4_000_000, 4_999_999), "elapsed_ms": rng.randint(18, 260) if ph == "normal" else rng.randint(800, 4000)}
    record = {"ts": ts(t), "svc": "checkout", "pod": pod, "trace_id": trace}
    record.update(msg)
    return json.dumps(record, separators=(",", ":")), kind


def postgres_lines(rng, t0: float, t1: float, n: int) -> list[str]:
    out = []
    pids = list(range(30977, 31900, 7))
    for i in range(n):
        t = t0 + (t1 - t0) * i / max(1, n - 1) + rng.uniform(0, 0.8)
        pid = rng.choice(pids)
        stamp = f"2025-03-14 {hms(t)}.{int((t % 1) * 1000):03d} UTC"
        ph = phase(t)
        if ph == "locked":
            kind = rng.choice(["wait", "wait", "wait", "detail", "timeout"] + (["full"] if t > T_FULL else []))
            if kind == "wait":
                lock = rng.choice(["AccessShareLock", "RowExclusiveLock", "RowShareLock"])
                out.append(f"{stamp} [{pid}] checkout@shop LOG:  process {pid} still waiting for {lock} on relation 16423 of database 16384 after {rng.uniform(1000, 9000):.3f} ms")
                out.append(f"{stamp} [{pid}] checkout@shop DETAIL:  Process holding the lock: 30412. Wait queue: 30588, {', '.join(str(p) for p in sorted(rng.sample(pids, rng.randint(4, 12))))}.")
                out.append(f"{stamp} [{pid}] checkout@shop STATEMENT:  {rng.choice(['SELECT id, status, total_minor FROM orders WHERE id = $1 FOR UPDATE', 'INSERT INTO orders (id, customer_id, status, total_minor, currency, created_at) VALUES ($1, $2, $3, $4, $5, now())', 'UPDATE orders SET status = $2, updated_at = now() WHERE id = $1'])}")
            elif kind == "detail":
                out.append(f"{stamp} [30588] migrator@shop LOG:  process 30588 still waiting for AccessExclusiveLock on relation 16423 of database 16384 after {(t - T_ALTER) * 1000:.3f} ms")
                out.append(f"{stamp} [30588] migrator@shop DETAIL:  Process holding the lock: 30412. Wait queue: 30588.")
                out.append(f"{stamp} [30588] migrator@shop STATEMENT:  ALTER TABLE orders ADD COLUMN gift_note text")
            elif kind == "timeout":
                out.append(f"{stamp} [{pid}] checkout@shop ERROR:  canceling statement due to statement timeout")
                out.append(f"{stamp} [{pid}] checkout@shop STATEMENT:  SELECT id, status, total_minor FROM orders WHERE id = $1 FOR UPDATE")
            else:
                out.append(f"{stamp} [{pid}] checkout@shop FATAL:  sorry, too many clients already")
        else:
            kind = rng.choice(["checkpoint", "autovacuum", "duration", "connection"])
            if kind == "checkpoint":
                out.append(f"{stamp} [27] LOG:  checkpoint complete: wrote {rng.randint(900, 9000)} buffers ({rng.uniform(0.5, 4):.1f}%); 0 WAL file(s) added, 0 removed, {rng.randint(1, 9)} recycled; write={rng.uniform(20, 200):.3f} s, sync={rng.uniform(0, 0.2):.3f} s, total={rng.uniform(20, 200):.3f} s")
            elif kind == "autovacuum":
                out.append(f"{stamp} [{pid}] LOG:  automatic analyze of table \"shop.public.{rng.choice(['cart_items', 'order_items', 'stock_levels', 'sessions'])}\" system usage: CPU: user: {rng.uniform(0, 0.4):.2f} s, system: {rng.uniform(0, 0.1):.2f} s, elapsed: {rng.uniform(0.1, 2):.2f} s")
            elif kind == "duration":
                out.append(f"{stamp} [{pid}] checkout@shop LOG:  duration: {rng.uniform(250, 900):.3f} ms  statement: SELECT p.id, p.sku, s.available FROM products p JOIN stock_levels s ON s.product_id = p.id WHERE p.id = ANY($1)")
            else:
                out.append(f"{stamp} [{pid}] LOG:  connection authorized: user=checkout database=shop application_name=checkout-7c9f5d6b8 SSL enabled (protocol=TLSv1.3, cipher=TLS_AES_256_GCM_SHA384, bits=256)")
    return out


def minute_table(rng, t0: float, t1: float, columns: list[str], row) -> str:
    lines = ["  ".join(c.rjust(8) for c in columns)]
    t = t0
    while t < t1:
        lines.append("  ".join(str(v).rjust(8) for v in row(t)))
        t += 60
    return "\n".join(lines) + "\n"


def ingress_minute_row(rng):
    def row(t):
        ph = phase(t + 30)
        total = rng.randint(2900, 3600) + (rng.randint(300, 900) if ph == "locked" else 0)
        e5 = rng.randint(0, 4) if ph == "normal" else (rng.randint(40, 420) if ph == "locked" else rng.randint(5, 40))
        p50 = rng.uniform(0.06, 0.11) if ph == "normal" else rng.uniform(0.4, 2.8)
        p99 = rng.uniform(0.25, 0.42) if ph == "normal" else rng.uniform(8.5, 10.0)
        return [hms(t)[:5], total, total - e5 - rng.randint(20, 60), rng.randint(20, 60), e5, f"{p50:.3f}", f"{p99:.3f}"]
    return row


def build_log_analysis() -> tuple[Session, dict]:
    s = Session("log-analysis-checkout-incident")
    rng = s.rng
    s.tool("run_command", "Run a shell command in the incident workspace (grep, awk, jq, zcat, sort, uniq, wc, head, tail, cut are available).",
           {"command": {"type": "string"}}, ["command"], 850, "sh: 1: command failed with exit status 2")
    s.tool("read_file", "Read a text file from the incident workspace.", {"path": {"type": "string"}}, ["path"], 30,
           "read_file: no such file")
    s.tool("list_dir", "List a directory of the incident workspace.", {"path": {"type": "string"}}, ["path"], 15,
           "ls: cannot access: No such file or directory")
    ledger = Ledger(rng, [
        ("H1", "the checkout deploy at 09:10 shipped slower code"),
        ("H2", "the database became the bottleneck (locks, connections)"),
        ("H3", "a dependency degraded (inventory, payments adapter, PSP)"),
        ("H4", "the ingress or the cluster (HPA, nodes) misbehaved"),
    ])
    plan: list[tuple] = []  # (tool, args, output, observation, why, effect)

    def add(tool, args, output, observation, why, effect=None):
        plan.append((tool, args, output, observation, why, effect))

    # -- orientation ------------------------------------------------------
    add("list_dir", {"path": "incident-2291"},
        "incident-2291:\n" + "\n".join(f"drwxr-xr-x 2 sre sre 4096 Mar 15 07:{10 + i:02d} {d}" for i, d in enumerate(["ingress", "checkout", "inventory", "payments-adapter", "postgres", "k8s", "deploy", "notes"])) + "\n-rw-r--r-- 1 sre sre 1822 Mar 15 07:31 README.txt\n",
        "Eight directories, one per source, and a README.", "First, what was collected.")
    add("read_file", {"path": "incident-2291/README.txt"}, """Incident 2291 - checkout latency / 503s, 2025-03-14 09:10-09:41 UTC
Collected by: sre on-call (j.moreau), 2025-03-15 07:10 UTC

ingress/            nginx ingress access logs, shop-public, split per 10 minutes (08:50-09:50)
checkout/           checkout-api JSON logs per 10 minutes, all pods merged
inventory/          inventory-svc logs (logfmt)
payments-adapter/   PSP adapter logs (JSON)
postgres/           primary `shop-pg-0` server log 08:50-09:50, pg_stat_activity snapshots (cron, every 5 min)
k8s/                `kubectl get events -A` dump, HPA describe output
deploy/             argo-cd sync log and job logs of release 2025.03.14-2
notes/              on-call chat export (times UTC)

Customer impact per support: ~2% of checkouts failed with "Something went wrong" between 09:12 and 09:40.
Dashboards: grafana/d/checkout-golden, grafana/d/pg-primary
""", "The README gives the window (09:10-09:41) and the sources. Support saw ~2 % failed checkouts.",
        "The README should say what each directory holds and who collected it.")
    add("read_file", {"path": "incident-2291/notes/oncall-chat.txt"}, """[09:13:40] <pagerduty> TRIGGERED checkout-golden: p99 latency > 2s (5m)
[09:14:02] <j.moreau> ack, looking
[09:15:31] <j.moreau> checkout p99 at 9s, 503s on POST /api/checkout. release 2025.03.14-2 went out at 09:10, rolling back?
[09:16:10] <a.nguyen> the release only adds the gift note field, tiny change. argo says synced + healthy
[09:17:45] <j.moreau> HPA scaled checkout 6 -> 10, not helping
[09:19:20] <j.moreau> pg connections at max (200). lots of idle in transaction? checking
[09:21:02] <a.nguyen> rollback started
[09:24:37] <a.nguyen> rollback done (image 2025.03.14-1), still slow
[09:26:13] <j.moreau> inventory p99 also up, payments adapter fine
[09:31:50] <j.moreau> paging DBA
[09:36:22] <k.ivanova> (dba) joining. looking at pg_locks
[09:39:44] <k.ivanova> cancelled pid 30412 (metabase, reporting_ro), was blocking a pending ALTER on orders
[09:41:05] <j.moreau> latency back to normal
[09:55:12] <j.moreau> resolving, RCA to follow
""", "The chat has the human timeline: release at 09:10, rollback did not help (done 09:24, still slow), the DBA cancelled pid 30412, a Metabase query from `reporting_ro`, at 09:39:44 and latency recovered at 09:41.",
        "The on-call chat gives the human timeline to check the logs against.", ("evidence", "chat: rollback finished 09:24 without effect; DBA cancelled pid 30412 (metabase, reporting_ro) at 09:39:44; recovery 09:41"))

    # -- ingress ----------------------------------------------------------
    row = ingress_minute_row(rng)
    add("run_command", {"command": "awk -f scripts/per_minute.awk incident-2291/ingress/access-0*.log | column -t"},
        minute_table(rng, 8 * 3600 + 50 * 60, 9 * 3600 + 50 * 60, ["minute", "requests", "2xx", "4xx", "5xx", "p50_s", "p99_s"], row),
        "Per-minute ingress figures: 5xx near zero and p99 under half a second until 09:10, then 5xx in the hundreds per minute and p99 pinned just under 10 s (the ingress timeout) until 09:40, back to normal by 09:42.",
        "Per-minute status and latency at the ingress, to see the shape of the incident.")
    for minute in (11, 12, 15):
        t0 = 9 * 3600 + minute * 60
        lines = [ingress_line(rng, t0 + i * 0.45, status=None)[0] for i in range(rng.randint(70, 95))]
        add("run_command", {"command": f"grep -h '14/Mar/2025:09:{minute:02d}' incident-2291/ingress/access-0910.log | head -{len(lines)}"},
            "\n".join(lines) + "\n",
            f"At 09:{minute:02d} the failures are all on order routes (`POST /api/checkout`, `/confirm`, `GET /api/orders/...`); cart, product and shipping requests still answer in tens of milliseconds. So it is not the whole service and not the ingress.",
            f"Raw lines from 09:{minute:02d} to see which routes fail.", ("evidence", f"09:{minute:02d}: only order routes fail (503/504 at 5-10 s); cart/products fast") if minute == 12 else None)
    add("run_command", {"command": "grep -h '\" 50[34] ' incident-2291/ingress/access-09*.log | awk '{print $7}' | sed -E 's/[0-9]{7}/{id}/' | sort | uniq -c | sort -rn"},
        "\n".join(f"{n:>7} {r}" for n, r in [(rng.randint(3900, 4300), "/api/checkout"), (rng.randint(1500, 1900), "/api/checkout/confirm"), (rng.randint(800, 1100), "/api/orders/{id}"), (rng.randint(3, 9), "/api/cart"), (rng.randint(0, 3), "/api/products/{id}")]) + "\n",
        "503/504 by route confirms it: checkout, confirm and order reads account for essentially all of them.",
        "Counting 503/504 per route over the whole window.", ("evidence", "503/504 almost only on /api/checkout, /confirm, /api/orders/{id}: all routes that touch the orders table"))

    # -- checkout ---------------------------------------------------------
    def checkout_sample(t0, n):
        out, kinds = [], {}
        for i in range(n):
            line, kind = checkout_line(rng, t0 + i * rng.uniform(0.2, 0.9))
            out.append(line)
            kinds[kind] = kinds.get(kind, 0) + 1
        return "\n".join(out) + "\n", kinds

    add("run_command", {"command": "jq -r 'select(.level != \"info\") | .msg' incident-2291/checkout/app-09*.jsonl | sort | uniq -c | sort -rn"},
        "\n".join(f"{n:>7} {m}" for n, m in [(rng.randint(38000, 46000), "waiting for db connection"), (rng.randint(5000, 6500), "checkout failed"), (rng.randint(2000, 3000), "retrying checkout step"), (rng.randint(1400, 2100), "query failed"), (rng.randint(300, 700), "db connect failed"), (rng.randint(20, 60), "slow inventory response"), (rng.randint(1, 9), "payment authorization declined")]) + "\n",
        "Checkout's warnings are overwhelmingly `waiting for db connection`, then failed checkouts, retries, statement timeouts and a few hundred `db connect failed`. That is a database-side wait, not slow application code.",
        "Checkout's own view: warning and error messages by frequency.", ("evidence", "checkout: ~40k 'waiting for db connection', statement timeouts, 'too many clients'"))
    for minute in (9, 11, 13, 17, 20, 26, 33, 38):
        t0 = 9 * 3600 + minute * 60 + rng.uniform(0, 20)
        out, kinds = checkout_sample(t0, rng.randint(34, 58))
        obs = (f"09:{minute:02d} in checkout: {kinds.get('pool', 0)} pool waits, {kinds.get('timeout', 0)} failed checkouts, {kinds.get('stmt', 0)} statement timeouts, {kinds.get('full', 0)} connection refusals, {kinds.get('ok', 0)} normal lines. "
               + ("The pool `orders-rw` sits at 20/20 with dozens of waiters." if kinds.get("pool") else "All normal: orders created in tens of milliseconds."))
        add("run_command", {"command": f"grep -h '\"ts\":\"2025-03-14T09:{minute:02d}' incident-2291/checkout/app-09{minute // 10}0.jsonl | head -{out.count(chr(10))}"},
            out, obs, f"Checkout lines around 09:{minute:02d}.")
    add("read_file", {"path": "incident-2291/checkout/config.yaml"}, """# checkout-api runtime configuration (release 2025.03.14-2)
http:
  listen: ":8080"
  read_timeout: 10s
  write_timeout: 10s
  request_timeout: 10s
database:
  dsn_secret: checkout-pg-rw
  pool:
    name: orders-rw
    max_open: 20
    max_idle: 10
    acquire_timeout: 5s
    max_lifetime: 30m
  statement_timeout: 5s
  lock_timeout: 0          # inherit server default (none)
retries:
  checkout_steps: 3
  backoff: 200ms
inventory:
  base_url: http://inventory-svc.shop.svc:8080
  timeout: 2s
payments:
  base_url: http://payments-adapter.shop.svc:8080
  timeout: 6s
features:
  gift_note: true
""", "Checkout's config: pool of 20 per pod with a 5 s acquire timeout, 5 s statement timeout, no lock timeout, and 3 retries of each checkout step. With every statement stuck, each request holds a connection for 5 s and retries, so the pool saturates immediately and the retries multiply the load.",
        "The pool and timeout settings decide how a slow database turns into 503s.", ("evidence", "checkout pool 20/pod, acquire 5s, statement_timeout 5s, no lock_timeout, 3 step retries"))

    # -- red herrings -----------------------------------------------------
    for minute in (8, 14, 22, 31):
        t0 = 9 * 3600 + minute * 60
        lines = []
        for i in range(rng.randint(40, 60)):
            t = t0 + i * rng.uniform(0.3, 1.2)
            slow = phase(t) == "locked" and rng.random() < 0.25
            lines.append(f'time={ts(t)} level={"warn" if slow else "info"} svc=inventory pod=inventory-svc-6d8b7-{rng.choice(["a1b2c", "d3e4f", "g5h6i"])} msg="{"slow reservation" if slow else rng.choice(["reservation ok", "stock read", "cache hit", "cache miss"])}" sku=SKU-{rng.randint(10000, 99999)} qty={rng.randint(1, 4)} dur_ms={rng.randint(900, 2100) if slow else rng.randint(2, 40)} trace_id={hexid(rng, 32)}')
        add("run_command", {"command": f"grep -h 'time=2025-03-14T09:{minute:02d}' incident-2291/inventory/inventory-09{minute // 10}0.log | head -{len(lines)}"},
            "\n".join(lines) + "\n",
            f"Inventory at 09:{minute:02d}: " + ("reservations mostly in single-digit milliseconds; the slow ones are reservations that write to `stock_reservations` in the same transaction as the order, so they wait on the same thing." if phase(t0 + 10) == "locked" else "normal, 2-40 ms per call."),
            f"The chat mentioned inventory p99 going up too; checking inventory at 09:{minute:02d}.",
            ("weaken", "inventory: only reservations tied to order transactions are slow; reads are fast") if minute == 22 else None)
    for minute in (12, 25):
        t0 = 9 * 3600 + minute * 60
        lines = [json.dumps({"ts": ts(t0 + i * rng.uniform(0.5, 2)), "svc": "payments-adapter", "level": "info", "msg": "authorization", "psp": rng.choice(["adyen", "stripe"]), "result": rng.choice(["authorised", "authorised", "refused"]), "psp_ms": rng.randint(180, 650), "order_id": rng.randint(4_000_000, 4_999_999)}, separators=(",", ":")) for i in range(rng.randint(40, 55))]
        add("run_command", {"command": f"grep -h '09:{minute:02d}' incident-2291/payments-adapter/adapter-09{minute // 10}0.jsonl | head -{len(lines)}"},
            "\n".join(lines) + "\n",
            f"Payments adapter at 09:{minute:02d}: PSP round trips 180-650 ms, authorisation rates normal. The PSP is not involved; if anything it sees fewer requests because checkouts fail earlier.",
            f"Payments adapter around 09:{minute:02d}, to rule out the PSP.",
            ("rule_out3", "payments adapter / PSP latency normal throughout") if minute == 25 else None)

    # -- cluster ----------------------------------------------------------
    events = []
    t = 9 * 3600 + 9 * 60
    replicas = 6
    while t < 9 * 3600 + 45 * 60:
        t += rng.uniform(20, 70)
        ph = phase(t)
        kind = rng.choice(["probe", "scale", "pull", "sched"] if ph == "locked" else ["pull", "sched", "probe"])
        if kind == "scale" and replicas < 14:
            replicas = min(14, replicas + rng.randint(1, 2))
            events.append(f"shop        {int((9 * 3600 + 50 * 60 - t) // 60)}m   Normal    SuccessfulRescale   horizontalpodautoscaler/checkout   New size: {replicas}; reason: cpu resource utilization (percentage of request) above target")
        elif kind == "probe":
            events.append(f"shop        {int((9 * 3600 + 50 * 60 - t) // 60)}m   Warning   Unhealthy           pod/checkout-7c9f5d6b8-{hexid(rng, 5)}   Readiness probe failed: Get \"http://10.42.{rng.randint(1, 9)}.{rng.randint(2, 250)}:8080/readyz\": context deadline exceeded (Client.Timeout exceeded while awaiting headers)")
        elif kind == "pull":
            events.append(f"shop        {int((9 * 3600 + 50 * 60 - t) // 60)}m   Normal    Pulled              pod/checkout-7c9f5d6b8-{hexid(rng, 5)}   Container image \"registry.shop.internal/checkout-api:2025.03.14-{rng.choice([1, 2])}\" already present on machine")
        else:
            events.append(f"shop        {int((9 * 3600 + 50 * 60 - t) // 60)}m   Normal    Scheduled           pod/checkout-7c9f5d6b8-{hexid(rng, 5)}   Successfully assigned shop/checkout-7c9f5d6b8-{hexid(rng, 5)} to ip-10-42-{rng.randint(1, 9)}-{rng.randint(2, 250)}.eu-west-1.compute.internal")
    add("run_command", {"command": "grep -E '^shop ' incident-2291/k8s/events.txt | grep -E 'checkout|migrat'"},
        "NAMESPACE   LAST SEEN   TYPE      REASON              OBJECT                              MESSAGE\n" + "\n".join(events) + "\n",
        f"The cluster events show the HPA scaling checkout from 6 to {replicas} pods on CPU and readiness probes timing out. Both are consequences: more pods means more pools of 20 connections against the same database, which explains why postgres ran out of connection slots around 09:19.",
        "Cluster events for checkout: scaling, probes, restarts.", ("evidence", f"HPA scaled checkout 6 -> {replicas}; every new pod opens up to 20 more connections"))

    # -- postgres ---------------------------------------------------------
    for (a, b, n) in [(9 * 3600 + 0 * 60, 9 * 3600 + 10 * 60, 40), (9 * 3600 + 10 * 60 + 50, 9 * 3600 + 12 * 60, 38),
                      (9 * 3600 + 15 * 60, 9 * 3600 + 16 * 60, 36), (9 * 3600 + 19 * 60, 9 * 3600 + 20 * 60, 36),
                      (9 * 3600 + 28 * 60, 9 * 3600 + 29 * 60, 34), (9 * 3600 + 36 * 60, 9 * 3600 + 37 * 60, 30)]:
        lines = postgres_lines(rng, a, b, n)
        waits = sum(1 for l in lines if "still waiting" in l)
        full = sum(1 for l in lines if "too many clients" in l)
        obs = (f"Postgres {hms(a)[:5]}-{hms(b)[:5]}: {waits} lock-wait reports, {full} refused connections. "
               + ("Every wait is on relation 16423, every DETAIL names the same holder, pid 30412, and the wait queue starts with 30588, the migrator's `ALTER TABLE orders ADD COLUMN gift_note text` waiting for an AccessExclusiveLock." if waits else "Nothing but checkpoints, autovacuum and normal connection lines."))
        add("run_command", {"command": f"awk '$2 >= \"{hms(a)}\" && $2 < \"{hms(b)}\"' incident-2291/postgres/postgresql-2025-03-14_09.log | head -{len(lines)}"},
            "\n".join(lines) + "\n", obs, f"The primary's log between {hms(a)[:5]} and {hms(b)[:5]}.",
            ("confirm", "postgres: all waits on relation 16423 behind holder pid 30412; queue head 30588 = migrator ALTER TABLE orders ADD COLUMN gift_note (AccessExclusiveLock)") if waits and a == 9 * 3600 + 10 * 60 + 50 else None)
    add("run_command", {"command": "psql -At -f scripts/relname.sql  # SELECT oid, relname FROM pg_class WHERE oid IN (16423, 16431)"},
        "16423|orders\n16431|orders_pkey\n", "Relation 16423 is `orders`, as suspected.", "Resolving relation 16423 from the snapshot's catalog dump.")
    act = ["pid,usename,application_name,state,wait_event_type,wait_event,xact_start,query_start,query"]
    act.append(f"30412,reporting_ro,Metabase v0.48.6,active,IO,DataFileRead,2025-03-14 09:02:11.402+00,2025-03-14 09:02:11.402+00,\"SELECT date_trunc('day', o.created_at) AS day, c.country, count(*) AS orders, sum(oi.quantity * oi.unit_price_minor) AS revenue_minor FROM orders o JOIN order_items oi ON oi.order_id = o.id JOIN customers c ON c.id = o.customer_id WHERE o.created_at >= now() - interval '400 days' GROUP BY 1, 2 ORDER BY 1, 2\"")
    act.append("30588,migrator,golang-migrate,active,Lock,relation,2025-03-14 09:10:58.201+00,2025-03-14 09:10:58.233+00,ALTER TABLE orders ADD COLUMN gift_note text")
    for pid in range(30977, 31900, 5):
        if rng.random() < 0.55:
            act.append(f"{pid},checkout,checkout-7c9f5d6b8,active,Lock,relation,2025-03-14 09:{rng.randint(14, 15)}:{rng.randint(0, 59):02d}.{rng.randint(0, 999):03d}+00,2025-03-14 09:15:{rng.randint(0, 5):02d}.{rng.randint(0, 999):03d}+00,\"{rng.choice(['SELECT id, status, total_minor FROM orders WHERE id = $1 FOR UPDATE', 'INSERT INTO orders (id, customer_id, status, total_minor, currency, created_at) VALUES ($1, $2, $3, $4, $5, now())'])}\"")
        elif rng.random() < 0.5:
            act.append(f"{pid},checkout,checkout-7c9f5d6b8,idle in transaction,Client,ClientRead,2025-03-14 09:15:0{rng.randint(0, 5)}.{rng.randint(0, 999):03d}+00,2025-03-14 09:15:0{rng.randint(0, 5)}.{rng.randint(0, 999):03d}+00,\"INSERT INTO stock_reservations (order_id, sku, qty) VALUES ($1, $2, $3)\"")
        else:
            act.append(f"{pid},inventory,inventory-svc,idle,Client,ClientRead,2025-03-14 09:1{rng.randint(0, 4)}:{rng.randint(0, 59):02d}.{rng.randint(0, 999):03d}+00,2025-03-14 09:15:0{rng.randint(0, 5)}.{rng.randint(0, 999):03d}+00,SELECT available FROM stock_levels WHERE sku = $1")
    add("read_file", {"path": "incident-2291/postgres/pg_stat_activity-0915.csv"}, "\n".join(act) + "\n",
        "The 09:15 snapshot of pg_stat_activity nails the chain: pid 30412 (`reporting_ro`, Metabase) has been running a 400-day revenue aggregate over `orders` since 09:02:11; pid 30588 (`migrator`) waits since 09:10:58 for the lock on `orders` for `ALTER TABLE orders ADD COLUMN gift_note text`; and every checkout backend waits behind 30588, because a pending AccessExclusiveLock request blocks even plain reads that arrive after it.",
        "The 09:15 pg_stat_activity snapshot should show who holds and who waits.",
        ("confirm2", "pg_stat_activity 09:15: 30412 Metabase/reporting_ro aggregate since 09:02:11 holds AccessShareLock on orders; 30588 migrator ALTER waits since 09:10:58; checkout backends queue behind 30588"))
    add("run_command", {"command": "cat incident-2291/deploy/job-migrate-2025.03.14-2.log"}, f"""time="2025-03-14T09:10:57Z" level=info msg="starting migrations" database=shop target=latest
time="2025-03-14T09:10:58Z" level=info msg="current version" version=146 dirty=false
time="2025-03-14T09:10:58Z" level=info msg="applying" version=147 name=0147_add_gift_note.up.sql
time="2025-03-14T09:39:40Z" level=info msg="applied" version=147 duration=28m42.118s
time="2025-03-14T09:39:40Z" level=info msg="finished" applied=1 duration=28m42.611s
""", "The migration job confirms it: version 147, `0147_add_gift_note.up.sql`, started applying at 09:10:58 and finished at 09:39:40, 28 min 42 s for a metadata-only column add. It finished the moment the DBA cancelled 30412.",
        "The deploy's migration job log, for the start and end of the ALTER.", ("evidence", "migration 0147_add_gift_note applied 09:10:58 -> 09:39:40 (28m42s)"))
    add("read_file", {"path": "db/migrations/0147_add_gift_note.up.sql"}, "-- Adds an optional gift note to orders (SHOP-1882).\nALTER TABLE orders ADD COLUMN gift_note text;\n",
        "The migration itself is a one-liner with no `lock_timeout`. Adding a nullable column is instant once the lock is granted; the problem is purely waiting for the lock while holding a place at the head of the queue.",
        "And the migration file.")
    plan_before_huge = len(plan)

    # -- the two pids in detail, then the onset list: one huge output --------
    lines = []
    t = T_ALTER
    while len("\n".join(lines)) < 30_000:
        t += rng.uniform(2, 9)
        pid = rng.choice(range(30977, 31900, 7))
        stamp = f"2025-03-14 {hms(t)}.{int((t % 1) * 1000):03d} UTC"
        lines.append(f"{stamp} [{pid}] checkout@shop LOG:  process {pid} still waiting for {rng.choice(['AccessShareLock', 'RowExclusiveLock'])} on relation 16423 of database 16384 after {rng.uniform(1000, 5000):.3f} ms")
        lines.append(f"{stamp} [{pid}] checkout@shop DETAIL:  Process holding the lock: 30412. Wait queue: 30588, {', '.join(str(p) for p in sorted(rng.sample(range(30977, 31900, 7), rng.randint(8, 20))))}.")
    add("run_command", {"command": "grep -h -E 'holding the lock: 30412|\\[30588\\]|\\[30412\\]' incident-2291/postgres/postgresql-2025-03-14_09.log | head -" + str(len(lines))},
        "\n".join(lines) + "\n",
        f"{len(lines)} lines naming 30412 as the holder between {hms(T_ALTER)[:5]} and {hms(t)[:5]}; not one names any other holder. The queue behind it grows to twenty-odd checkout backends at a time.",
        "Every log line naming the two pids, to be sure there is no second holder.",
        ("evidence", "every lock wait from 09:11 on names holder 30412; no other holder"))
    locks = ["locktype,relation,pid,mode,granted,waitstart"]
    locks.append("relation,orders,30412,AccessShareLock,t,")
    locks.append("relation,order_items,30412,AccessShareLock,t,")
    locks.append("relation,customers,30412,AccessShareLock,t,")
    locks.append("relation,orders,30588,AccessExclusiveLock,f,2025-03-14 09:10:58.236+00")
    for pid in range(30977, 31900, 3):
        mode = rng.choice(["AccessShareLock", "RowExclusiveLock", "RowShareLock"])
        locks.append(f"relation,orders,{pid},{mode},f,2025-03-14 09:1{rng.randint(4, 5)}:{rng.randint(0, 59):02d}.{rng.randint(0, 999):03d}+00")
        if rng.random() < 0.4:
            locks.append(f"transactionid,,{pid},ExclusiveLock,t,")
            locks.append(f"virtualxid,,{pid},ExclusiveLock,t,")
    add("read_file", {"path": "incident-2291/postgres/pg_locks-0915.csv"}, "\n".join(locks) + "\n",
        "pg_locks at 09:15 shows the mechanism exactly: 30412 holds AccessShareLock on `orders`, `order_items` and `customers`; 30588 has an ungranted AccessExclusiveLock request on `orders`; and every checkout backend has an ungranted lock on `orders` that conflicts with the pending exclusive request, even the plain readers. Postgres queues lock requests in order, so the ALTER blocks everyone without ever holding the lock.",
        "The pg_locks snapshot of the same minute, for the lock modes.",
        ("evidence", "pg_locks 09:15: 30412 AccessShareLock granted; 30588 AccessExclusiveLock not granted; all checkout backends queued behind it"))
    onset = []
    t = T_ALTER + 22
    while len("\n".join(onset)) < 100_000:
        t += rng.uniform(0.12, 0.5)
        route = rng.choice(["POST /api/checkout", "POST /api/checkout", "POST /api/checkout/confirm", "GET /api/orders/{id}"])
        onset.append(ingress_line(rng, t, route=route, status=rng.choice([503, 503, 504]))[0])
    until = f"09:{int(t // 60 % 60):02d}:{int(t % 60) + 1:02d}"
    add("run_command", {"command": f"grep -h -E '\"(POST /api/checkout|POST /api/checkout/confirm|GET /api/orders/[0-9]+) HTTP/2.0\" 50[34] ' incident-2291/ingress/access-0910.log | awk '$4 < \"[14/Mar/2025:{until}\"'"},
        "\n".join(onset) + "\n",
        f"{len(onset)} failed order requests between {hms(T_ALTER + 22)} and {until}, with request ids for support. The first one is 24 s after the ALTER asked for its lock, which is exactly the time it takes the first checkout statements to pile up behind it and exhaust the pools.",
        "For the impact section and the exact onset I want every failed order request from the ALTER onwards, with request ids, so support can match them to customers.",
        ("evidence", f"{len(onset)} failed order requests from 09:11:20 to {until}; onset 24 s after the ALTER"))
    for cmd, out, obs, why in [
        ("grep -c . incident-2291/ingress/access-09[1-4]0.log", "\n".join(f"incident-2291/ingress/access-09{i}0.log:{rng.randint(33000, 41000)}" for i in range(1, 5)) + "\n",
         "About 150k requests in the four files, so the failures are a few percent of all traffic but a much larger share of checkouts.", "Totals per file for the failure rate."),
        ("awk '$9 ~ /^50[34]$/ && $7 ~ /checkout/' incident-2291/ingress/access-09[1-4]0.log | wc -l", f"{rng.randint(5400, 6000)}\n",
         "Roughly 5.7k failed checkout calls, many of them client retries of the same checkout.", "Failed checkout calls only."),
        ("jq -r 'select(.msg==\"order created\") | .ts[11:16]' incident-2291/checkout/app-09*.jsonl | sort | uniq -c | awk '$1 < 40'",
         "\n".join(f"{rng.randint(3, 39):>7} 09:{m:02d}" for m in range(11, 41)) + "\n",
         "Orders created per minute dropped below 40 (normal is ~110) for every minute from 09:11 to 09:40.", "Orders that did succeed per minute, to size the loss."),
        ("read_file docs", None, None, None),
    ]:
        if out is None:
            break
        add("run_command", {"command": cmd}, out, obs, why)
    add("read_file", {"path": "docs/runbooks/schema-migrations.md"}, """# Schema migrations

Migrations run as an argo-cd PreSync job (golang-migrate) before the new pods roll out.

Rules:
1. Migrations must be backwards compatible with the previous release.
2. Long data backfills go into a separate job, never into a migration.
3. Prefer `CREATE INDEX CONCURRENTLY` (in its own migration, no transaction).

Checklist before merging a migration:
- [ ] reviewed by a DBA for tables over 10 GB
- [ ] tested against a production-size snapshot
""", "The migration runbook says nothing about `lock_timeout` or about long-running queries on the primary; a reviewer would not have flagged a one-line `ADD COLUMN`.",
        "What do our own migration rules say about locks?", ("evidence", "runbook: no lock_timeout rule, nothing about long queries on the primary"))
    add("run_command", {"command": "grep -rn 'reporting_ro' incident-2291/notes/ infra/metabase/ 2>/dev/null"},
        "infra/metabase/datasources.yaml:12:    user: reporting_ro\ninfra/metabase/datasources.yaml:13:    host: shop-pg-0.shop-pg.shop.svc   # TODO move to replica (INFRA-771)\ninfra/metabase/datasources.yaml:15:    statement_timeout: 0\n",
        "Metabase points `reporting_ro` at the primary, with a TODO to move it to the replica and no statement timeout.",
        "Why is a BI query running against the primary at all?", ("evidence", "metabase datasource uses the primary (TODO INFRA-771), statement_timeout 0"))
    add("run_command", {"command": "grep -h 'duration: [0-9]\\{6,\\}' incident-2291/postgres/postgresql-2025-03-14_09.log"},
        "2025-03-14 09:39:40.702 UTC [30412] reporting_ro@shop ERROR:  canceling statement due to user request\n2025-03-14 09:39:40.702 UTC [30412] reporting_ro@shop STATEMENT:  SELECT date_trunc('day', o.created_at) AS day, c.country, count(*) AS orders, sum(oi.quantity * oi.unit_price_minor) AS revenue_minor FROM orders o JOIN order_items oi ON oi.order_id = o.id JOIN customers c ON c.id = o.customer_id WHERE o.created_at >= now() - interval '400 days' GROUP BY 1, 2 ORDER BY 1, 2\n2025-03-14 09:39:40.744 UTC [30588] migrator@shop LOG:  duration: 1722511.203 ms  statement: ALTER TABLE orders ADD COLUMN gift_note text\n",
        "The end of the chain in postgres' own words: 30412 cancelled at 09:39:40.702, the ALTER completes 42 ms later after 1,722 s of waiting.",
        "The end of the chain in the server log.")
    # Pad the tail with the follow-up checks an analyst would still make.
    for minute in (41, 43, 47):
        t0 = 9 * 3600 + minute * 60
        lines = [ingress_line(rng, t0 + i * 0.5)[0] for i in range(rng.randint(14, 20))]
        add("run_command", {"command": f"grep -h '14/Mar/2025:09:{minute:02d}' incident-2291/ingress/access-0940.log | head -{len(lines)}"},
            "\n".join(lines) + "\n", f"09:{minute:02d} is clean: 2xx everywhere, sub-second latencies.", f"Confirming recovery at 09:{minute:02d}.")
    s2_pad(rng, add, plan)
    return finish_log_analysis(s, rng, plan, ledger, plan_before_huge)


def s2_middle(rng) -> list[tuple]:
    """The bulk of the digging, between the first look at postgres and the snapshot that explains it."""
    plan = []

    def add(tool, args, output, observation, why, effect=None):
        plan.append((tool, args, output, observation, why, effect))

    add("run_command", {"command": "git -C repos/checkout diff --stat 2025.03.14-1 2025.03.14-2"},
        " db/migrations/0147_add_gift_note.down.sql        |  1 +\n db/migrations/0147_add_gift_note.up.sql          |  2 +\n internal/orders/model.go                         |  1 +\n internal/orders/repo.go                          | 12 ++++++------\n internal/api/checkout.go                         |  9 ++++++++-\n internal/api/checkout_test.go                    | 31 +++++++++++++++++++++++++++++++\n 6 files changed, 49 insertions(+), 7 deletions(-)\n",
        "The release is small: a migration, the model field, six changed lines in the orders repository, the API field and a test. No new queries, no loops.",
        "H1 first: what exactly changed in release 2025.03.14-2.")
    add("run_command", {"command": "git -C repos/checkout diff 2025.03.14-1 2025.03.14-2 -- internal/orders/repo.go"},
        """diff --git a/internal/orders/repo.go b/internal/orders/repo.go
index 5b1e2c0..8f3d9a4 100644
--- a/internal/orders/repo.go
+++ b/internal/orders/repo.go
@@ -41,12 +41,12 @@ func (r *Repo) Insert(ctx context.Context, tx pgx.Tx, o *Order) error {
 	const q = `INSERT INTO orders
-		(id, customer_id, status, total_minor, currency, created_at)
-		VALUES ($1, $2, $3, $4, $5, now())`
+		(id, customer_id, status, total_minor, currency, gift_note, created_at)
+		VALUES ($1, $2, $3, $4, $5, $6, now())`
 	_, err := tx.Exec(ctx, q,
 		o.ID, o.CustomerID, o.Status, o.TotalMinor, o.Currency,
-	)
+		o.GiftNote)
 	return err
 }
""", "The only query change adds `gift_note` to the INSERT. Same plan, same index use; it cannot make checkout ten times slower, and the rollback at 09:24 changed nothing anyway. H1 is out as the cause, but the release is still involved through its migration.",
        "And the repository diff, the only place that touches SQL.", ("rule_out1", "release diff: only adds gift_note to the INSERT; rollback at 09:24 had no effect"))
    for minute in (5, 12, 18, 24, 32, 42):
        t = 9 * 3600 + minute * 60
        ph = phase(t)
        lines = []
        for pod in range(6 if minute < 13 else min(14, 6 + minute // 3)):
            name = f"checkout-7c9f5d6b8-{hexid(rng, 5)}"
            in_use = 20 if ph == "locked" else rng.randint(1, 6)
            lines += [f'db_pool_connections_in_use{{pod="{name}",pool="orders-rw"}} {in_use}',
                      f'db_pool_connections_idle{{pod="{name}",pool="orders-rw"}} {0 if ph == "locked" else rng.randint(2, 9)}',
                      f'db_pool_wait_count_total{{pod="{name}",pool="orders-rw"}} {rng.randint(0, 40) if ph == "normal" else rng.randint(4000, 19000)}',
                      f'db_pool_wait_duration_seconds_total{{pod="{name}",pool="orders-rw"}} {rng.uniform(0, 2) if ph == "normal" else rng.uniform(9000, 60000):.3f}',
                      f'http_request_duration_seconds_bucket{{pod="{name}",route="/api/checkout",le="0.5"}} {rng.randint(9000, 20000)}',
                      f'http_request_duration_seconds_bucket{{pod="{name}",route="/api/checkout",le="10"}} {rng.randint(20000, 26000)}']
        add("read_file", {"path": f"incident-2291/checkout/metrics-09{minute:02d}.prom"}, "\n".join(lines) + "\n",
            f"Pool metrics at 09:{minute:02d}: " + ("every pod has 20/20 connections in use, none idle, and wait counters in the thousands." if ph == "locked" else "a handful of connections in use per pod, waits negligible."),
            f"The pool metrics scraped at 09:{minute:02d}.")
    for minute in (10, 12, 15, 16, 19, 21, 23, 27, 29, 31, 34, 36, 38, 40, 41):
        t0 = 9 * 3600 + minute * 60 + rng.uniform(0, 30)
        out, kinds = [], {}
        for i in range(rng.randint(22, 40)):
            line, kind = checkout_line(rng, t0 + i * rng.uniform(0.2, 0.9))
            out.append(line)
            kinds[kind] = kinds.get(kind, 0) + 1
        add("run_command", {"command": f"jq -c 'select(.ts >= \"2025-03-14T09:{minute:02d}\" and .ts < \"2025-03-14T09:{minute + 1:02d}\")' incident-2291/checkout/app-09{minute // 10}0.jsonl | head -{len(out)}"},
            "\n".join(out) + "\n",
            f"09:{minute:02d}: {kinds.get('pool', 0)} pool waits, {kinds.get('timeout', 0) + kinds.get('stmt', 0)} failures, {kinds.get('full', 0)} refused connections, {kinds.get('ok', 0)} successful steps"
            + (" (the successful ones take seconds instead of milliseconds)." if phase(t0) != "normal" and kinds.get("ok") else "."),
            f"Checkout around 09:{minute:02d}, to follow the pool over time.")
    for minute in (9, 13, 18, 21, 24, 28, 30, 35, 39):
        t0 = 9 * 3600 + minute * 60
        lines = [ingress_line(rng, t0 + i * 0.6)[0] for i in range(rng.randint(30, 50))]
        fails = sum(1 for l in lines if '" 503 ' in l or '" 504 ' in l)
        add("run_command", {"command": f"grep -h '14/Mar/2025:09:{minute:02d}' incident-2291/ingress/access-09{minute // 10}0.log | head -{len(lines)}"},
            "\n".join(lines) + "\n", f"Ingress at 09:{minute:02d}: {fails} of {len(lines)} sampled requests failed, all on order routes.",
            f"Ingress sample at 09:{minute:02d}.")
    for (a, b, n) in [(9 * 3600 + 5 * 60, 9 * 3600 + 6 * 60, 26), (9 * 3600 + 23 * 60, 9 * 3600 + 24 * 60, 30),
                      (9 * 3600 + 32 * 60, 9 * 3600 + 33 * 60, 30), (9 * 3600 + 38 * 60 + 30, 9 * 3600 + 39 * 60 + 30, 26)]:
        lines = postgres_lines(rng, a, b, n)
        waits = sum(1 for l in lines if "still waiting" in l)
        add("run_command", {"command": f"awk '$2 >= \"{hms(a)}\" && $2 < \"{hms(b)}\"' incident-2291/postgres/postgresql-2025-03-14_09.log | head -{len(lines)}"},
            "\n".join(lines) + "\n",
            f"{hms(a)[:5]}-{hms(b)[:5]}: {waits} lock waits" + (", same holder 30412, same queue head 30588." if waits else ", nothing unusual."),
            f"Postgres between {hms(a)[:5]} and {hms(b)[:5]}.")
    for minute in (5, 10, 20, 25, 30, 35):
        t = 9 * 3600 + minute * 60
        rows = ["pid,usename,application_name,state,wait_event_type,wait_event,query_start"]
        if t > T_REPORT:
            rows.append(f"30412,reporting_ro,Metabase v0.48.6,active,IO,DataFileRead,2025-03-14 09:02:11.402+00")
        if t > T_ALTER:
            rows.append("30588,migrator,golang-migrate,active,Lock,relation,2025-03-14 09:10:58.233+00")
        for pid in range(30977, 31900 if t > T_ALTER else 31200, 9):
            waiting = t > T_ALTER and rng.random() < 0.7
            rows.append(f"{pid},{rng.choice(['checkout', 'checkout', 'inventory'])},{rng.choice(['checkout-7c9f5d6b8', 'inventory-svc'])},{'active' if waiting else rng.choice(['idle', 'idle', 'active'])},{'Lock' if waiting else 'Client'},{'relation' if waiting else 'ClientRead'},2025-03-14 {hms(t - rng.uniform(0, 40))}.{rng.randint(0, 999):03d}+00")
        waiting = sum(1 for r in rows if ",Lock," in r)
        add("read_file", {"path": f"incident-2291/postgres/pg_stat_activity-09{minute:02d}.csv"}, "\n".join(rows) + "\n",
            f"Snapshot 09:{minute:02d}: {len(rows) - 1} backends, {waiting} waiting on a relation lock"
            + (", with the Metabase query 30412 active since 09:02." if t > T_REPORT else ".")
            + (" The migrator 30588 is among the waiters." if t > T_ALTER else ""),
            f"The pg_stat_activity snapshot of 09:{minute:02d}.")
    add("run_command", {"command": "cat incident-2291/k8s/hpa-checkout.txt"}, f"""Name:                                                  checkout
Namespace:                                             shop
Reference:                                             Deployment/checkout
Metrics:                                               ( current / target )
  resource cpu on pods  (as a percentage of request):  {rng.randint(81, 96)}% (410m) / 70%
Min replicas:                                          6
Max replicas:                                          14
Deployment pods:                                       14 current / 14 desired
Events:
  Type    Reason             Age   From                       Message
  ----    ------             ----  ----                       -------
  Normal  SuccessfulRescale  41m   horizontal-pod-autoscaler  New size: 8; reason: cpu resource utilization (percentage of request) above target
  Normal  SuccessfulRescale  37m   horizontal-pod-autoscaler  New size: 10; reason: cpu resource utilization (percentage of request) above target
  Normal  SuccessfulRescale  33m   horizontal-pod-autoscaler  New size: 12; reason: cpu resource utilization (percentage of request) above target
  Normal  SuccessfulRescale  29m   horizontal-pod-autoscaler  New size: 14; reason: cpu resource utilization (percentage of request) above target
""", "The HPA went to its maximum of 14 on CPU, burnt on retries and JSON logging of waits, not real work. 14 pods × 20 connections = 280, above postgres' `max_connections` of 200.",
        "The HPA's own account of the scaling.", ("amplify", "HPA at max 14 pods x 20 conns = 280 > max_connections 200"))
    add("run_command", {"command": "grep -E 'max_connections|lock_timeout|statement_timeout|idle_in_transaction' incident-2291/postgres/settings.txt"},
        "max_connections = 200\nlock_timeout = 0\nstatement_timeout = 0\nidle_in_transaction_session_timeout = 0\n",
        "Server defaults: 200 connections, and no lock, statement or idle-in-transaction timeouts at all.",
        "The server-side timeouts.", ("evidence", "postgres: max_connections 200, lock_timeout/statement_timeout 0"))
    for minute in (3, 17, 27, 35, 38, 44):
        t0 = 9 * 3600 + minute * 60
        lines = []
        for i in range(rng.randint(30, 44)):
            t = t0 + i * rng.uniform(0.3, 1.2)
            slow = phase(t) == "locked" and rng.random() < 0.25
            lines.append(f'time={ts(t)} level={"warn" if slow else "info"} svc=inventory pod=inventory-svc-6d8b7-{rng.choice(["a1b2c", "d3e4f", "g5h6i"])} msg="{"slow reservation" if slow else rng.choice(["reservation ok", "stock read", "cache hit", "cache miss"])}" sku=SKU-{rng.randint(10000, 99999)} dur_ms={rng.randint(900, 2100) if slow else rng.randint(2, 40)}')
        add("run_command", {"command": f"grep -h 'time=2025-03-14T09:{minute:02d}' incident-2291/inventory/inventory-09{minute // 10}0.log | head -{len(lines)}"},
            "\n".join(lines) + "\n", f"Inventory at 09:{minute:02d}: the same picture, only order-bound reservations are slow.", f"Inventory at 09:{minute:02d} for the timeline.")
    add("run_command", {"command": "cat incident-2291/k8s/grafana-pg-connections.csv"},
        "time,connections,active,idle,idle_in_tx,waiting\n" + "\n".join(
            f"09:{m:02d},{(rng.randint(60, 90) if phase(9 * 3600 + m * 60) == 'normal' else min(200, 90 + (m - 10) * 14))},{rng.randint(8, 20) if phase(9 * 3600 + m * 60) == 'normal' else rng.randint(120, 190)},{rng.randint(40, 70)},{rng.randint(0, 3) if phase(9 * 3600 + m * 60) == 'normal' else rng.randint(10, 40)},{0 if phase(9 * 3600 + m * 60) == 'normal' else rng.randint(100, 180)}"
            for m in range(0, 50)) + "\n",
        "Connections climb from ~80 at 09:10 to the 200 ceiling at 09:19 and stay there until 09:40, most of them `waiting`.",
        "The exported Grafana series for postgres connections.")
    add("read_file", {"path": "repos/checkout/internal/api/checkout.go"}, """package api

// Checkout runs the checkout steps in one transaction each, retrying a step
// up to cfg.Retries.CheckoutSteps times on transient errors.
func (h *Handler) Checkout(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), h.cfg.HTTP.RequestTimeout)
	defer cancel()
	var req CheckoutRequest
	if err := decode(r, &req); err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	for _, step := range []stepFunc{h.reserveStock, h.createOrder, h.authorizePayment} {
		if err := retry(ctx, h.cfg.Retries.CheckoutSteps, h.cfg.Retries.Backoff, func() error { return step(ctx, &req) }); err != nil {
			h.log.Error("checkout failed", "error", err, "route", "POST /api/checkout", "status", 503)
			writeError(w, http.StatusServiceUnavailable, err)
			return
		}
	}
	writeJSON(w, http.StatusCreated, req.Result())
}

// transient reports whether a step error is worth retrying.
func transient(err error) bool {
	return errors.Is(err, context.DeadlineExceeded) || isPgCode(err, "57014", "53300", "40001")
}
""", "Checkout treats pool timeouts, statement timeouts and `too many clients` as transient and retries each step up to three times inside the same 10 s request budget. Under a lock queue, that triples the number of waiting statements.",
        "How checkout retries its steps.", ("amplify", "checkout retries each step 3x on 57014/53300/deadline: multiplies waiting statements"))
    return plan


def finish_log_analysis(s: Session, rng, plan: list[tuple], ledger: Ledger, huge_at: int) -> tuple[Session, dict]:
    # The middle of the investigation goes before the pg_stat_activity snapshot of 09:15.
    snapshot = next(i for i, p in enumerate(plan) if p[1].get("path") == "incident-2291/postgres/pg_stat_activity-0915.csv")
    middle = s2_middle(rng)
    plan[snapshot:snapshot] = middle
    prev = None
    for index, (tool, args, output, observation, why, effect) in enumerate(plan):
        parts = []
        if index == 0:
            parts.append("Checkout p99 went from ~300 ms to ~10 s between 09:10 and 09:40 UTC and some orders failed with 503. I'll build a timeline from the logs before deciding anything.")
            parts.append("Candidate explanations:\n" + ledger.board())
        if prev is not None:
            p_obs, p_effect = prev
            parts.append(p_obs)
            if p_effect:
                kind, note = p_effect
                ledger.evidence.append(note)
                updates = {"rule_out1": [("H1", "ruled out as cause")], "confirm": [("H2", "very likely")],
                           "confirm2": [("H2", "confirmed: lock queue on orders")], "weaken": [("H3", "weakened")],
                           "rule_out3": [("H3", "ruled out")], "amplify": [("H4", "amplifier, not cause")]}.get(kind, [])
                for h, status in updates:
                    ledger.status[h] = status
                if updates or index % 3 == 0:
                    parts.append("Board:\n" + ledger.board())
                if kind in ("confirm", "confirm2", "amplify"):
                    parts.append("Evidence so far:\n" + ledger.recent_evidence(6))
            elif index % 5 == 0:
                parts.append(rng.choice([
                    f"Timeline so far: 09:02:11 Metabase query starts (pid 30412){', 09:10:58 migration asks for its lock' if ledger.status['H2'] != 'open' else ''}; 09:11 first 503s on order routes; 09:19 connection ceiling; 09:24 rollback without effect; 09:39:44 cancel; 09:41 recovery.",
                    "I keep the sources in step: ingress says what the user saw, checkout says what it waited for, postgres says why.",
                    f"{len(ledger.evidence)} pieces of evidence so far; the open question is the first link of the chain, not the symptoms.",
                    "Every minute sampled so far fits the same pattern: only the routes that touch `orders` suffer.",
                ]))
        parts.append(why)
        text = "\n\n".join(parts)
        s.step(text, tool, args, output=output)
        prev = (observation, effect)
    final = """Root cause: a schema migration waiting for a lock behind a long BI query, on the primary.

**Timeline (UTC, 2025-03-14)**
- 09:02:11 Metabase (`reporting_ro`, pid 30412) starts a 400-day revenue aggregate over `orders` on the primary `shop-pg-0` (it points at the primary, INFRA-771, with no statement timeout).
- 09:10:58 release 2025.03.14-2 runs migration `0147_add_gift_note` (`ALTER TABLE orders ADD COLUMN gift_note text`, pid 30588). It needs an AccessExclusiveLock on `orders` and waits behind 30412's AccessShareLock. With `lock_timeout = 0` it waits indefinitely.
- From 09:11 every statement on `orders` (reads included) queues behind the pending AccessExclusiveLock request: checkout's pool `orders-rw` (20 per pod) is saturated, statements hit the 5 s statement timeout, steps are retried 3× (more waiting statements), requests fail with 503/504 at the 10 s ingress limit.
- 09:13-09:17 the HPA scales checkout 6 → 14 on CPU burnt by retries; 14 × 20 connections exceed `max_connections = 200` at 09:19 (`too many clients`).
- 09:24 the rollback of the release has no effect (the migration job keeps waiting).
- 09:39:40 the DBA cancels pid 30412; the ALTER completes 42 ms later after 1,722 s; the queue drains; normal by 09:41.

**Impact**: only routes that touch `orders` failed (checkout, confirm, order reads); about 5.7k failed checkout calls, orders per minute below 40 (normal ~110) from 09:11 to 09:40. Inventory slowness was reservations in the same transactions; the PSP was healthy.

**Fixes**
1. Migrations set `SET lock_timeout = '3s'` (and retry with backoff) so a blocked DDL gives up instead of queueing everyone behind it; add that rule to the migration runbook.
2. Move Metabase to the replica (INFRA-771) and give `reporting_ro` a `statement_timeout`.
3. Checkout: do not retry lock/statement timeouts inside the same request; cap pool × max replicas below `max_connections`.
4. Alert on `pg_locks` waits older than 30 s on the primary."""
    s.answer(final)
    s.summary("""## Summary of the investigation so far

Task: find the root cause of the 09:10-09:41 UTC checkout latency and 503 incident (incident-2291) from the collected logs.

Findings:
- Ingress: only order routes (`POST /api/checkout`, `/confirm`, `GET /api/orders/{id}`) failed, 503/504 at 5-10 s; other routes fast. p99 pinned at ~10 s from 09:11 to 09:40.
- Checkout: tens of thousands of `waiting for db connection` (pool `orders-rw` 20/20 on every pod), statement timeouts (5 s), `too many clients` after 09:19; steps retried 3× on these errors.
- Release 2025.03.14-2 only adds `gift_note` to the orders INSERT; rollback at 09:24 changed nothing (H1 out as cause).
- Inventory slow only for reservations in order transactions; payments adapter/PSP normal (H3 out).
- HPA scaled checkout 6 → 14 (max); 14 × 20 connections > postgres max_connections 200 (amplifier).
- Postgres: every wait is on relation 16423 (`orders`), holder pid 30412, queue head pid 30588 = migrator `ALTER TABLE orders ADD COLUMN gift_note text` (AccessExclusiveLock) waiting since 09:10:58.
- pg_stat_activity: 30412 is Metabase (`reporting_ro`) running a 400-day revenue aggregate since 09:02:11 on the primary.
- Migration 0147_add_gift_note applied 09:10:58 → 09:39:40 (28m42s); the DBA cancelled 30412 at 09:39:44 and everything recovered by 09:41.
- Server settings: lock_timeout 0, statement_timeout 0, max_connections 200.

Remaining: quantify the impact (failed order requests), check migration rules and the Metabase datasource, write the timeline and fixes (lock_timeout in migrations, BI on the replica, no retries of lock timeouts, lock-wait alerting).""", reusable=True)
    head = {
        "name": s.name,
        "description": (
            f"A log analysis of a checkout latency incident: {s.main_steps} model decisions over ingress, application, "
            "postgres, cluster and deploy logs, converging on a migration that queued every query on `orders` behind a "
            "long BI query. Logs are token-dense (timestamps, ids, hashes): about twice the tokens per byte of prose, so a "
            "bytes/4 estimate undercounts them badly. Near the end the agent pulls every log line of the two culprit pids, "
            "the pg_locks snapshot and then a huge list of failed order requests, three large outputs in a row that all "
            "sit in the four recent rounds Roku's planned layers protect: Layer 3 summarizes only the older history and "
            "the request still exceeds the 64K window. The server rejects it, Layer 4 summarizes everything but the last "
            "round (answered by the reusable compaction exchange), the retry succeeds and the run goes on to its answer. "
            "The uncompacted history passes 150K tokens, almost 6x the window."
        ),
        "model": "gpt-4.1",
        "context_window": 64000,
        "system": "You are an SRE agent analysing an incident from collected logs. Work from evidence: sample the logs, count, correlate timestamps across sources, and keep a timeline. Be explicit about what is cause and what is consequence. Finish with a timeline, the root cause, the impact and concrete fixes.",
        "task": "Yesterday (2025-03-14) between 09:10 and 09:40 UTC checkout p99 latency went from ~300 ms to ~10 s and about 2 % of orders failed with 503. The logs of that morning are under `incident-2291/`. Reconstruct the timeline and find the root cause.",
    }
    return s, {"head": head, "final_contains": ["0147_add_gift_note", "lock_timeout", "AccessExclusiveLock", "30412"]}


def s2_pad(rng, add, plan):
    """Nothing to add at the end (kept for symmetry with the middle section)."""
    return None
