"""Scenario 5: a flaky-test hunt, long chatty reasoning turns."""

from __future__ import annotations

from .randomness import hexid, pick, ts, uuid
from .session import Session


FLAKY = "tests/integration/test_reservations.py::test_concurrent_checkout_reserves_stock"
PY_TESTS = ["test_reserve_single_item", "test_reserve_rejects_oversell", "test_release_on_cancel", "test_release_on_timeout",
            "test_concurrent_checkout_reserves_stock", "test_reservation_ttl_extends_on_activity", "test_bulk_reserve_is_atomic",
            "test_reserve_after_restock", "test_reservation_survives_redis_failover", "test_stock_snapshot_matches_db"]
OTHER_FILES = ["tests/integration/test_orders.py", "tests/integration/test_payments.py", "tests/integration/test_catalog.py",
               "tests/unit/test_pricing.py", "tests/unit/test_cart.py", "tests/unit/test_tax.py", "tests/integration/test_search.py"]


def pytest_run(rng, workers: int, count: int, fail_at: list[int], seed: int, only_flaky: bool, extra_files: int) -> tuple[str, dict]:
    """pytest with xdist and pytest-repeat; `fail_at` are repetition indices of the flaky test that fail."""
    items = []
    for rep in range(count):
        tests = [FLAKY.split("::")[1]] if only_flaky else PY_TESTS
        for t in tests:
            items.append((f"tests/integration/test_reservations.py::{t}[{rep + 1}-{count}]", t == FLAKY.split("::")[1] and rep in fail_at))
    for f in pick(rng, OTHER_FILES, extra_files):
        for _ in range(rng.randint(6, 14)):
            items.append((f"{f}::test_{rng.choice(['create', 'update', 'list', 'apply', 'compute', 'rounds', 'rejects'])}_{rng.choice(['order', 'discount', 'vat', 'query', 'refund', 'cart', 'item'])}", False))
    rng.shuffle(items)
    lines = [f"============================= test session starts ==============================",
             f"platform linux -- Python 3.12.2, pytest-8.1.1, pluggy-1.4.0",
             f"Using --randomly-seed={seed}", "rootdir: /work/shop", "configfile: pyproject.toml",
             f"plugins: xdist-3.5.0, repeat-0.9.3, randomly-3.15.0, asyncio-0.23.6, timeout-2.3.1"]
    if workers > 1:
        lines.append(f"{workers} workers [{len(items)} items]")
        lines.append("")
    else:
        lines.append(f"collected {len(items)} items")
        lines.append("")
    failures = []
    for i, (name, fails) in enumerate(items):
        pct = int(100 * (i + 1) / len(items))
        worker = f"gw{rng.randrange(workers)}" if workers > 1 else ""
        verdict = "FAILED" if fails else "PASSED"
        if workers > 1:
            lines.append(f"[{worker}] [{pct:>3}%] {verdict} {name}")
        else:
            lines.append(f"{name} {verdict} [{pct:>3}%]")
        if fails:
            failures.append((name, worker))
    facts = {"failures": len(failures), "items": len(items), "workers": workers, "seed": seed, "count": count,
             "fail_workers": [w for _, w in failures]}
    for name, worker in failures:
        got = rng.choice([6, 6, 7])
        lines += ["", "=================================== FAILURES ===================================",
                  f"_____ {name.split('::')[1]} _____", f"[{worker}] linux -- Python 3.12.2 /work/shop/.venv/bin/python" if worker else "",
                  "", "redis = Redis<ConnectionPool<Connection<host=localhost,port=6379,db=0>>>", "catalog = <tests.factories.CatalogFactory object at 0x7f3a2c1d9e50>", "",
                  "    @pytest.mark.asyncio", "    async def test_concurrent_checkout_reserves_stock(redis, catalog):",
                  "        sku = await catalog.create_sku(stock=5)", "        carts = [await make_cart(sku, qty=1) for _ in range(8)]",
                  "        results = await asyncio.gather(*(reserve(cart) for cart in carts), return_exceptions=True)",
                  "        reserved = [r for r in results if isinstance(r, Reservation)]",
                  ">       assert len(reserved) == 5", f"E       AssertionError: assert {got} == 5",
                  f"E        +  where {got} = len([Reservation(id='rsv_{hexid(rng, 10)}', sku='{'sku-' + str(rng.randint(1000, 9999))}', qty=1), ...])", "",
                  "tests/integration/test_reservations.py:88: AssertionError",
                  "------------------------------ Captured log call -------------------------------",
                  f"WARNING  app.reservations.service:service.py:71 stock key missing for {'sku-' + str(rng.randint(1000, 9999))}, reloading from database (stock=5)",
                  f"WARNING  app.reservations.service:service.py:71 stock key missing for {'sku-' + str(rng.randint(1000, 9999))}, reloading from database (stock=4)",
                  f"INFO     app.reservations.service:service.py:94 reserved 1 of sku, remaining={rng.randint(0, 3)}"]
    elapsed = rng.uniform(4, 90)
    summary = f"{len(failures)} failed, {len(items) - len(failures)} passed" if failures else f"{len(items)} passed"
    if failures:
        lines += ["", "=========================== short test summary info ============================"]
        lines += [f"FAILED {n} - AssertionError: assert 6 == 5" for n, _ in failures]
    lines.append(f"{'=' * 20} {summary} in {elapsed:.2f}s {'=' * 20}")
    return "\n".join(l for l in lines if l is not None) + "\n", facts


def ci_log(rng, run_id: int, failed: bool, worker_start_skew: float) -> str:
    t = 10 * 3600 + rng.randint(0, 5000)
    day = f"2025-03-{rng.randint(3, 12):02d}"

    def stamp(dt):
        nonlocal t
        t += dt
        return f"{ts(t, day)[:-1]}{rng.randint(0, 9)}Z"
    lines = [f"test\tSet up job\t{stamp(0)} Current runner version: '2.314.1'",
             f"test\tSet up job\t{stamp(0.4)} Runner name: 'GitHub Actions {rng.randint(2, 60)}'",
             f"test\tInitialize containers\t{stamp(12)} Starting service container redis:7.2-alpine",
             f"test\tInitialize containers\t{stamp(4)} Starting service container postgres:16",
             f"test\tInstall dependencies\t{stamp(20)} Installed 143 packages in {rng.uniform(2, 9):.2f}s",
             f"test\tRun tests\t{stamp(3)} pytest -n auto --dist load -p randomly --timeout 120",
             f"test\tRun tests\t{stamp(0.8)} ============================= test session starts =============================="]
    for w in range(4):
        lines.append(f"test\tRun tests\t{stamp(worker_start_skew if w == 3 else rng.uniform(0.05, 0.3))} [gw{w}] worker started, session fixtures: postgres_schema, flush_redis")
    lines.append(f"test\tRun tests\t{stamp(0.2)} 4 workers [{rng.randint(420, 460)} items]")
    for _ in range(rng.randint(30, 50)):
        name = rng.choice([f"tests/integration/test_reservations.py::{rng.choice(PY_TESTS)}"] + [f"{f}::test_{rng.choice(['create', 'list', 'apply'])}_{rng.choice(['order', 'cart', 'vat'])}" for f in OTHER_FILES])
        lines.append(f"test\tRun tests\t{stamp(rng.uniform(0.05, 0.6))} [gw{rng.randrange(4)}] [{rng.randint(1, 99):>3}%] PASSED {name}")
    if failed:
        lines.append(f"test\tRun tests\t{stamp(0.1)} [gw{rng.choice([0, 1, 2])}] [ {rng.randint(10, 40)}%] FAILED {FLAKY}")
        lines.append(f"test\tRun tests\t{stamp(0.01)} E       AssertionError: assert 6 == 5")
        lines.append(f"test\tRun tests\t{stamp(0.01)} WARNING  app.reservations.service:service.py:71 stock key missing for sku-{rng.randint(1000, 9999)}, reloading from database (stock=5)")
        lines.append(f"test\tRun tests\t{stamp(40)} ================= 1 failed, {rng.randint(420, 460)} passed in {rng.uniform(80, 140):.2f}s =================")
        lines.append(f"test\tRun tests\t{stamp(0.5)} ##[error]Process completed with exit code 1.")
    else:
        lines.append(f"test\tRun tests\t{stamp(40)} ================= {rng.randint(420, 460)} passed in {rng.uniform(80, 140):.2f}s =================")
    return "\n".join(lines) + "\n"


def redis_monitor(rng, n: int, with_flush_at: int | None) -> str:
    lines = ["OK"]
    t = 1710152047.0
    for i in range(n):
        t += rng.uniform(0.0001, 0.004)
        client = f"172.18.0.1:{rng.choice([53012, 53014, 53020, 53022])}"
        if with_flush_at is not None and i == with_flush_at:
            lines.append(f'{t:.6f} [0 172.18.0.1:53044] "FLUSHDB"')
            continue
        cmd = rng.choice([
            f'"EVALSHA" "{hexid(rng, 40)}" "2" "stock:sku-{rng.randint(1000, 9999)}" "rsv:{hexid(rng, 10)}" "1" "900"',
            f'"GET" "stock:sku-{rng.randint(1000, 9999)}"',
            f'"SET" "stock:sku-{rng.randint(1000, 9999)}" "{rng.randint(0, 5)}" "NX"',
            f'"EXPIRE" "rsv:{hexid(rng, 10)}" "900"',
            f'"HSET" "cart:{uuid(rng)}" "sku-{rng.randint(1000, 9999)}" "1"',
            f'"SCRIPT" "LOAD" "local s = tonumber(redis.call(\'GET\', KEYS[1]))..."' if rng.random() < 0.05 else f'"PING"',
        ])
        lines.append(f"{t:.6f} [0 {client}] {cmd}")
    return "\n".join(lines) + "\n"


S5_SERVICE = '''"""Stock reservations for checkout.

A reservation decrements the available stock of a SKU in redis atomically
(Lua script) and records the reservation with a TTL; a background job
releases expired reservations. Redis is the source of truth while a key
exists; when the key is missing (cold start, eviction) the stock is reloaded
from the database.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass

from redis.asyncio import Redis

from app.db import Database
from app.reservations.errors import OutOfStock

log = logging.getLogger(__name__)

RESERVE = """
local stock = tonumber(redis.call('GET', KEYS[1]))
if stock == nil then return -1 end
local qty = tonumber(ARGV[1])
if stock < qty then return -2 end
redis.call('DECRBY', KEYS[1], qty)
redis.call('SET', KEYS[2], qty, 'EX', ARGV[2])
return stock - qty
"""


@dataclass(frozen=True)
class Reservation:
    id: str
    sku: str
    qty: int


class ReservationService:
    def __init__(self, redis: Redis, db: Database, ttl_seconds: int = 900) -> None:
        self._redis = redis
        self._db = db
        self._ttl = ttl_seconds
        self._reserve = redis.register_script(RESERVE)

    async def reserve(self, reservation_id: str, sku: str, qty: int) -> Reservation:
        for _ in range(2):
            remaining = await self._reserve(keys=[f"stock:{sku}", f"rsv:{reservation_id}"], args=[qty, self._ttl])
            if remaining == -1:
                stock = await self._db.available_stock(sku)
                log.warning("stock key missing for %s, reloading from database (stock=%d)", sku, stock)
                await self._redis.set(f"stock:{sku}", stock, nx=True)
                continue
            if remaining == -2:
                raise OutOfStock(sku, qty)
            log.info("reserved %d of sku, remaining=%d", qty, remaining)
            return Reservation(reservation_id, sku, qty)
        raise RuntimeError(f"could not load stock for {sku}")
'''

S5_CONFTEST = '''import os

import pytest
import pytest_asyncio
from redis.asyncio import Redis

from app.db import Database
from tests.factories import CatalogFactory

REDIS_URL = os.environ.get("REDIS_URL", "redis://localhost:6379/0")
DATABASE_URL = os.environ.get("DATABASE_URL", "postgresql://shop:shop@localhost:5432/shop_test")


@pytest.fixture(scope="session")
def worker_id(request):
    return getattr(request.config, "workerinput", {}).get("workerid", "master")


@pytest_asyncio.fixture(scope="session")
async def postgres_schema(worker_id):
    db = await Database.connect(DATABASE_URL)
    schema = f"test_{worker_id}"
    await db.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema}")
    await db.migrate(schema=schema)
    yield db.with_schema(schema)
    await db.close()


@pytest_asyncio.fixture(scope="session", autouse=True)
async def flush_redis():
    """Start every test session with an empty redis."""
    client = Redis.from_url(REDIS_URL)
    await client.flushdb()
    yield
    await client.aclose()


@pytest_asyncio.fixture
async def redis():
    client = Redis.from_url(REDIS_URL)
    yield client
    await client.aclose()


@pytest_asyncio.fixture
async def catalog(postgres_schema, redis):
    return CatalogFactory(postgres_schema, redis)
'''

S5_TEST = '''import asyncio

import pytest

from app.reservations.service import Reservation, ReservationService
from tests.helpers import make_cart, reserve


@pytest.mark.asyncio
async def test_reserve_single_item(redis, catalog):
    sku = await catalog.create_sku(stock=3)
    cart = await make_cart(sku, qty=1)
    assert isinstance(await reserve(cart), Reservation)
    assert int(await redis.get(f"stock:{sku}")) == 2


@pytest.mark.asyncio
async def test_reserve_rejects_oversell(redis, catalog):
    sku = await catalog.create_sku(stock=1)
    await reserve(await make_cart(sku, qty=1))
    with pytest.raises(OutOfStock):
        await reserve(await make_cart(sku, qty=1))


@pytest.mark.asyncio
async def test_concurrent_checkout_reserves_stock(redis, catalog):
    sku = await catalog.create_sku(stock=5)
    carts = [await make_cart(sku, qty=1) for _ in range(8)]
    results = await asyncio.gather(*(reserve(cart) for cart in carts), return_exceptions=True)
    reserved = [r for r in results if isinstance(r, Reservation)]
    assert len(reserved) == 5
    assert sum(isinstance(r, OutOfStock) for r in results) == 3
'''


class FlakyNarrator:
    """Long, reasoning-heavy assistant turns for the flaky-test hunt."""

    EARLY = [
        "A reminder to myself about what the failure actually says: eight carts race for five units and six reservations succeed. One extra unit was handed out, so at some point the stock counter in redis was higher than it should have been. Either two decrements read the same value (a real race), or the counter was reset to a higher value in the middle of the test.",
        "The captured log in every failure contains `stock key missing ... reloading from database`, with a count that goes backwards (stock=5, then stock=4). The service only logs that when the `stock:` key does not exist. In a test that created the SKU a few milliseconds earlier, the key should exist unless something deleted it.",
        "The Lua script itself is atomic: redis runs it without interleaving, so two reservations cannot both see `stock=1`. The reload path is not atomic with it, but it uses `SET ... NX`, which only writes when the key is absent. For the reload to hand out an extra unit, the key must disappear after some reservations were made and then be reloaded from the database, which still says 5 because reservations only live in redis until checkout completes.",
        "What I find telling is the pattern of who fails and when: never locally without xdist, about one run in thirty on CI with four workers. A real race in the script would show up without xdist too, since the test itself fires eight concurrent reservations.",
        "pytest-randomly reorders tests with a per-run seed, so test-order dependence (H2) would show up as a seed that reproduces deterministically. I record every seed for exactly that reason.",
        "Postgres isolation (H5) looks right on paper: each worker gets its own schema named after its worker id. Redis has nothing like that in the fixtures; every worker connects to `redis://localhost:6379/0`. That asymmetry is the first thing I would look at in a code review, but I want the logs to point there before I believe it.",
        "I want to be careful not to fix the symptom. Retrying the reservation on a missing key, or making the test tolerant, would hide a fixture problem that can also corrupt other tests silently: any test relying on redis state could be hit when it happens to overlap.",
        "The timing hypothesis (H4) would need the reservation TTL (900 s) or some other expiry to elapse during a test that lasts a few hundred milliseconds. Nothing in the fixtures sets short TTLs, so I rate it low, but CI machines are slower and I do not want to dismiss it without a reproduction.",
        "Something that deletes keys, rather than something that races, would explain both the `stock key missing` warning and why the failure needs other test files in the run: other files mean other workers doing other things against the same redis at the same time.",
        "A one-in-thirty flake needs many repetitions before a zero means anything. I keep that in mind when reading a green run: with the CI failure rate, a handful of clean local runs is weak evidence either way.",
        "If the cause is cross-worker interference, the failing worker and the interfering worker should differ, and the interference should come from something that runs once per worker: session fixtures are the obvious candidates.",
        "The `flush_redis` fixture is `autouse` and session-scoped. With xdist every worker has its own session, so it runs once per worker, at whatever moment that worker happens to start, not once per test run as its docstring suggests.",
        "The numbers matter here: 5 failures in 40 CI runs is 12.5 % per run, and each run executes the flaky test once. Locally I can run it hundreds of times per minute, so if I find the right conditions the signal should become unmistakable rather than one-in-thirty.",
        "I keep asking what is different between CI and a laptop. Three things stand out: CI always uses xdist, CI machines start workers unevenly because they are busy installing and importing, and CI runs every test file together. Each of those is a knob I can turn locally, one at a time.",
        "Eight concurrent reservations against five units is a good test design, by the way: it would catch a real double-decrement immediately. The problem is that it is also the test most sensitive to anything that touches the stock key from outside, because it keeps the key busy for the longest time.",
        "I'm deliberately not reading the failure as 'redis is flaky'. Redis is single-threaded and the script is atomic; when a single-threaded store appears to misbehave, the usual explanation is a second client doing something legitimate at the wrong moment.",
        "If H3 is right, the failing test should never fail when it is the only thing running on its worker and the other workers have already started. That suggests an experiment: control when each worker starts, rather than hoping for the right timing.",
        "It also predicts that more workers make it worse (more session starts spread over the run) and that `--dist loadfile` makes it better (each file's tests start after its worker is fully up). Both are cheap to check.",
        "What would falsify H3? A failure in a run where no FLUSHDB happens after the first test started, or a failure in a single-process run. I'll keep an eye out for either, because I am now biased towards it.",
        "The reload path in the service is also worth a thought on its own: even once the tests are fixed, reloading stock from the database while reservations live only in redis is a latent production bug. I'll note it, but keep it out of this change.",
    ]
    LATE = [
        "The mechanism is now clear: a worker that starts late flushes the shared database while another worker is in the middle of the concurrent test. What remains is a fix that removes the sharing rather than the timing, because CI timing is not something the tests can control.",
        "There are two ways to stop sharing: a key prefix per worker, or a database index per worker. A prefix needs every test and helper to go through one key builder, including the service under test; a database index is invisible to the code under test and mirrors what postgres already does with schemas. The database index is the smaller, safer change.",
        "Redis has 16 databases by default, so `gw0`..`gw14` fit; `-n auto` on hosted runners is 4 and on the big self-hosted runners 8. I'll keep db 0 for runs without xdist so local habits do not change.",
        "Verification must use the conditions that made the failure frequent, not the ones that made it rare: four workers, other test files in the mix, and the artificial start delay. Passing under those is much stronger evidence than passing a plain run.",
        "The production code deserves a note too: the reload path can hand out extra units whenever a stock key is lost (eviction, failover), because the database does not know about redis-only reservations. That is a real, if rare, production risk, but it is a separate change from fixing the tests.",
        "After the fix the `stock key missing` warning should disappear from test logs entirely; it is a cheap signal to watch in CI for a while.",
        "I also want the fix to fail loudly if someone reintroduces the sharing: a helper that connects to `REDIS_URL` directly would silently go back to db 0. Documenting the rule is the minimum; a grep in CI could enforce it later.",
        "One subtlety: `worker_id` is `master` without xdist, so local single-process runs keep using db 0 and nothing changes for developers who never run in parallel.",
        "The artificial delay is the key to trusting the verification. Without it, a clean run only shows that the bad timing did not happen; with it, a clean run shows the bad timing no longer matters.",
        "The per-worker database does not need the flush to be removed: flushing your own database at session start is still useful against stale stock from an interrupted earlier run, which is why the fixture was added in the first place.",
        "For the CI side I won't change the workflow: the fix is entirely in test setup, so it also protects developers who run `pytest -n auto` locally.",
        "I'm fairly confident now, but I still want repeated green runs on CI itself before calling it done: the hosted runners are where the uneven worker start happens naturally.",
    ]

    def __init__(self, rng):
        self.rng = rng
        self.board = {
            "H1": ["a race inside the reservation Lua script or its reload path", "open"],
            "H2": ["test-order dependence (pytest-randomly shuffles tests)", "open"],
            "H3": ["shared redis state between xdist workers", "open"],
            "H4": ["timing: TTL expiry or slow CI containers", "open"],
            "H5": ["postgres schema isolation between workers", "open"],
        }
        self.runs: list[str] = []
        self.tally: dict[str, list[int]] = {}
        self.late = False
        self.used: list[int] = []

    def set(self, h, status):
        self.board[h][1] = status
        if h == "H3" and status.startswith("confirmed"):
            self.late = True

    def board_text(self) -> str:
        return "\n".join(f"- {h}: {text} — {status}" for h, (text, status) in self.board.items())

    def reflect(self) -> str:
        bank = self.LATE if self.late else self.EARLY
        # Least recently used first, so consecutive turns do not repeat themselves.
        order = sorted(range(len(bank)), key=lambda i: (self.used.count((self.late, i)) if False else sum(1 for u in self.used if u == (self.late, i)), self.rng.random()))
        i = order[0]
        self.used.append((self.late, i))
        return bank[i]

    def record(self, condition: str, failures: int, reps: int):
        t = self.tally.setdefault(condition, [0, 0])
        t[0] += failures
        t[1] += reps

    def stats(self, condition: str) -> str:
        failures, reps = self.tally[condition]
        rate = failures / reps if reps else 0.0
        if failures:
            return (f"Under this condition ({condition}) the tally is {failures} failure(s) in {reps} repetitions of the flaky test, "
                    f"about {100 * rate:.1f} %. That is far above what a single CI run suggests per repetition, so this setup concentrates the problem.")
        # chance of seeing no failure in `reps` repetitions if the per-repetition rate were 3 %
        p = 0.97 ** reps
        return (f"Under this condition ({condition}) the tally is 0 failures in {reps} repetitions. If it failed 3 % of the time per repetition, "
                f"the chance of a clean streak this long would be {100 * p:.1f} %, so {'this is meaningful' if p < 0.05 else 'it is suggestive, not conclusive'}.")

    NEXT = {
        "run_command": ["Before running it, what do I expect? If the interference story holds, the outcome should depend on how many workers start and when, not on the seed; I'll read the result against that prediction.",
                        "I'll keep the command identical to the previous runs except for the one thing I vary, so the comparison stays clean.",
                        "Each run takes well under a minute, so it is cheap to repeat; I'd rather have more repetitions than clever guesses."],
        "read_file": ["Reading before running: the fastest way to lose an hour on a flake is to run experiments without knowing what the code is supposed to do.",
                      "I read it end to end rather than jumping to the part I suspect, because fixtures and helpers tend to hide their side effects in the boring parts."],
        "edit_file": ["The edit is small and reversible; I'll undo it (or keep it) depending on what the next runs show, and I'll say which in the summary.",
                      "Keeping the change minimal matters: if the flake disappears I want to know exactly which line made it disappear."],
        "grep": ["A search is cheaper than reasoning about what might exist; if there is another place that touches redis globally, it will show up here."],
    }

    def turn(self, observation: str, why: str, show_board: bool, stats: str | None, next_tool: str = "run_command") -> str:
        parts = [observation]
        if stats:
            parts.append(stats)
        parts.append(self.reflect())
        parts.append(self.reflect())
        parts.append(self.reflect())
        if show_board:
            parts.append("Hypotheses:\n" + self.board_text())
        if self.runs and (show_board or self.rng.random() < 0.5):
            parts.append("Runs so far:\n" + "\n".join(f"- {r}" for r in self.runs[-6:]))
        lead = self.rng.choice(["Next step:", "What I'll do now:", "Plan:", "So the next experiment:", "Next:"])
        parts.append(f"{lead} {why}")
        parts.append(self.rng.choice(self.NEXT[next_tool]))
        return "\n\n".join(parts)


def build_flaky_hunt() -> tuple[Session, dict]:
    s = Session("flaky-test-hunt-reservations")
    rng = s.rng
    s.tool("run_command", "Run a shell command in the repository root (pytest, gh, git, redis-cli, docker are available).",
           {"command": {"type": "string"}}, ["command"], 20000, "command failed")
    s.tool("read_file", "Read a file of the repository.", {"path": {"type": "string"}}, ["path"], 20, "FileNotFoundError")
    s.tool("edit_file", "Replace an exact string in a file.", {"path": {"type": "string"}, "old_string": {"type": "string"}, "new_string": {"type": "string"}},
           ["path", "old_string", "new_string"], 30, "old_string not found")
    s.tool("grep", "Search the repository (rg -n PATTERN PATH).", {"pattern": {"type": "string"}, "path": {"type": "string"}}, ["pattern", "path"], 120, "no matches")
    nar = FlakyNarrator(rng)
    plan: list[dict] = []

    def add(tool, args, output, observation, why, effect=None, run=None):
        plan.append({"tool": tool, "args": args, "output": output, "observation": observation, "why": why, "effect": effect, "run": run})

    seeds = [rng.randint(1000, 99999) for _ in range(80)]
    seed_i = [0]

    def next_seed():
        seed_i[0] += 1
        return seeds[seed_i[0] % len(seeds)]

    def pytest_step(command, workers, count, fail_at, seed, only_flaky, extra, condition, observe, why, effect=None):
        out, f = pytest_run(rng, workers, count, fail_at, seed, only_flaky, extra)
        note = f"{condition}, seed {seed}: {f['failures']} failure(s) in {count} repetitions"
        add("run_command", {"command": command}, out, observe(f), why, effect, (condition, f["failures"], count, note))

    # -- reading ----------------------------------------------------------
    add("read_file", {"path": "tests/integration/test_reservations.py"}, S5_TEST,
        "The flaky test gathers eight concurrent reservations of a SKU with stock 5 and expects exactly five to succeed and three `OutOfStock`.",
        "Start with the test itself.")
    add("read_file", {"path": "app/reservations/service.py"}, S5_SERVICE,
        "The service reserves through a Lua script that checks and decrements `stock:{sku}` atomically; when the key is missing it reloads the stock from the database with `SET NX` and retries once.",
        "And the code under test.")
    add("read_file", {"path": "tests/helpers.py"}, '''import os
import uuid

from redis.asyncio import Redis

from app.db import Database
from app.reservations.service import ReservationService


async def make_cart(sku: str, qty: int):
    return {"id": f"cart_{uuid.uuid4().hex[:10]}", "sku": sku, "qty": qty}


async def reserve(cart):
    client = Redis.from_url(os.environ["REDIS_URL"])
    db = await Database.connect(os.environ["DATABASE_URL"])
    try:
        service = ReservationService(client, db)
        return await service.reserve(f"rsv_{cart['id']}", cart["sku"], cart["qty"])
    finally:
        await client.aclose()
''', "`reserve()` in the helpers opens its own redis client from `REDIS_URL` for every call, with a fresh `ReservationService`.",
        "The test's helpers, since `reserve` and `make_cart` come from there.")
    add("read_file", {"path": "tests/conftest.py"}, S5_CONFTEST,
        "The fixtures: postgres gets a schema per xdist worker (`test_{worker_id}`), but redis is one URL for everyone, and a session-scoped autouse fixture runs `FLUSHDB` when each worker's session starts.",
        "The fixtures decide what state tests share.")
    add("read_file", {"path": "tests/factories.py"}, '''class CatalogFactory:
    """Creates catalog rows in the worker's schema and primes the stock cache."""

    def __init__(self, db, redis):
        self._db = db
        self._redis = redis
        self._n = 0

    async def create_sku(self, stock: int) -> str:
        self._n += 1
        sku = f"sku-{self._db.schema[-3:]}-{self._n:04d}"
        await self._db.execute("INSERT INTO skus (id, available) VALUES ($1, $2)", sku, stock)
        await self._redis.set(f"stock:{sku}", stock)
        return sku
''', "`create_sku` writes the SKU to the worker's own postgres schema and primes `stock:{sku}` in redis. SKU ids include the schema suffix, so two workers never use the same key; the only way one worker can affect another's key is a command that is not key-specific.",
        "And the factory that creates the SKU.")
    add("read_file", {"path": "pyproject.toml"}, '''[tool.pytest.ini_options]
asyncio_mode = "strict"
addopts = "-p randomly --strict-markers"
testpaths = ["tests"]
markers = ["slow: long-running tests"]
filterwarnings = ["error::DeprecationWarning"]

[tool.coverage.run]
branch = true
source = ["app"]
''', "pytest config: randomly is always on, no xdist by default (CI adds `-n auto`).", "The pytest configuration, for plugins on by default.")
    add("read_file", {"path": "docs/testing.md"}, '''# Running the tests

    docker compose -f docker-compose.test.yml up -d
    pytest                      # everything, one process
    pytest -n auto              # parallel, like CI

The integration tests need redis and postgres. Each worker gets its own
postgres schema (`test_gw0`, `test_gw1`, ...), created and migrated at
session start. Each test session starts with `FLUSHDB` so tests never see
stale stock.

Flaky test? Re-run with the seed printed at the top (`-p randomly_seed=N`).
''', "The docs tell developers to run without xdist by default, which matches 'never fails locally', and they describe FLUSHDB as per session, not per worker.",
        "How the team is told to run tests locally.")
    add("read_file", {"path": "app/db.py"}, '''class Database:
    """asyncpg pool bound to one schema."""

    async def available_stock(self, sku: str) -> int:
        row = await self.fetchrow(
            "SELECT available - COALESCE((SELECT sum(qty) FROM order_lines ol JOIN orders o ON o.id = ol.order_id"
            " WHERE ol.sku = $1 AND o.status = 'paid'), 0) AS available FROM skus WHERE id = $1",
            sku,
        )
        return int(row["available"])
''', "`available_stock` subtracts only paid orders; open reservations are invisible to it. So a reload during checkout resets the counter to the full stock.",
        "What exactly does the reload read from the database?")
    add("read_file", {"path": "app/reservations/release.py"}, '''class ReleaseJob:
    """Releases reservations whose TTL expired: puts their qty back on the stock key."""

    async def run_once(self) -> int:
        expired = [k async for k in self._redis.scan_iter("rsv:*") if await self._redis.ttl(k) == -2]
        for key in expired:
            sku, qty = await self._load(key)
            await self._redis.incrby(f"stock:{sku}", qty)
        if expired:
            await self._redis.unlink(*expired)
        return len(expired)
''', "The release job only increments stock for expired reservations and unlinks reservation keys; it never deletes stock keys, and it is not started in tests.",
        "The only production code that deletes keys is the release job; checking it cannot remove `stock:` keys.")
    add("run_command", {"command": "pip show pytest-xdist pytest-randomly pytest-repeat | grep -E '^(Name|Version)'"},
        "Name: pytest-xdist\nVersion: 3.5.0\nName: pytest-randomly\nVersion: 3.15.0\nName: pytest-repeat\nVersion: 0.9.3\n",
        "Plugin versions match CI's lockfile (xdist 3.5, randomly 3.15, repeat 0.9.3).", "Make sure my local plugins match CI before comparing behaviour.")
    add("run_command", {"command": "pytest --collect-only -q | tail -3"}, f"{rng.randint(430, 450)} tests collected in {rng.uniform(1.5, 3):.2f}s\n",
        "About 440 tests, the same count CI reports.", "And that I collect the same tests as CI.")
    # -- CI history -------------------------------------------------------
    add("run_command", {"command": "gh run list --workflow ci.yml --branch main --limit 40 --json databaseId,conclusion,createdAt,headSha --jq '.[] | [.databaseId, .conclusion, .createdAt, .headSha[:7]] | @tsv'"},
        "\n".join(f"{8212340000 + i * rng.randint(900, 4000)}\t{'failure' if i in (3, 11, 19, 26, 34) else 'success'}\t2025-03-{12 - i // 4:02d}T{rng.randint(8, 19):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}Z\t{hexid(rng, 7)}" for i in range(40)) + "\n",
        "Five failures in the last forty runs on main, on different commits: not tied to a change in the code.",
        "How often does it fail on CI, and on which commits?")
    for k, (run_id, skew) in enumerate([(8212351234, 2.7), (8212389012, 3.4), (8212412345, 1.9), (8212455678, 4.1), (8212498765, 2.2)]):
        add("run_command", {"command": f"gh run view {run_id} --log-failed | head -120"}, ci_log(rng, run_id, True, skew),
            (f"Failed run {run_id}: the same assertion (6 == 5) with the `stock key missing` warning, and again one worker (gw3) started {skew:.1f} s after the others." if k else
             f"The first failed CI log: `assert 6 == 5`, preceded by `stock key missing ... reloading from database`. The workers start at different times: gw3 came up {skew:.1f} s after gw0-gw2."),
            "The logs of the failed runs, to compare them with each other." if k == 0 else f"The next failed run ({k + 1} of 5).")
    for k, run_id in enumerate([8212346789, 8212367890]):
        add("run_command", {"command": f"gh run view {run_id} --log | grep -E 'worker started|FAILED|passed in' | head -60"}, ci_log(rng, run_id, False, rng.uniform(0.1, 0.4)),
            "A green run: all four workers start within a few hundred milliseconds of each other." if k == 0 else "The second green run looks the same: workers start together.",
            "A passing run for contrast, looking at the same lines." if k == 0 else "One more green run, to be sure the tight start is typical.")
    add("run_command", {"command": "gh api repos/acme/shop/actions/runs/8212455678/timing --jq '.run_duration_ms, .billable'"},
        '412118\n{"UBUNTU":{"total_ms":412000,"jobs":1,"job_runs":[{"job_id":23011873101,"duration_ms":412000}]}}\n',
        "Nothing unusual in the job timing of the worst failure (7 minutes, like the green ones); the late worker is not a symptom of a slow run overall.",
        "Are the failing runs slow runs in general?")
    add("run_command", {"command": "git log -S 'flushdb' --format='%h %ad %an %s' --date=short -- tests/conftest.py"},
        "3c9e1a2 2024-11-04 r.kim tests: flush redis at session start (stale stock between runs)\n",
        "The flush was added in November to fix stale stock between local runs, when the suite still ran in one process; xdist came later.",
        "When was the redis flush added, and why?")
    add("run_command", {"command": "git log -S 'pytest -n auto' --format='%h %ad %an %s' --date=short -- .github/workflows/ci.yml"},
        "a71f0d4 2025-01-20 m.lopez ci: run tests in parallel (-n auto), 11 min -> 7 min\n",
        "And xdist was switched on in CI in January. Support tickets about the flake start in late January too.",
        "And when did CI start running tests in parallel?")
    add("run_command", {"command": "for id in $(gh run list --workflow ci.yml --status success --limit 6 --json databaseId --jq '.[].databaseId'); do gh run view $id --log | grep 'worker started' | awk '{print $3, $4}'; done"},
        "\n".join(f"{ts(10 * 3600 + r * 900 + w * rng.uniform(0.05, 0.35), '2025-03-1' + str(r % 9))} [gw{w}]" for r in range(6) for w in range(4)) + "\n",
        "Six more green runs: in every one the four workers start within 0.1-1.1 s of each other. In the five failures the late worker was 1.9-4.1 s behind.",
        "Worker start times across more green runs, to see if the late start is really specific to failures.")
    # -- local reproduction ------------------------------------------------
    for count in (20, 50, 100):
        seed = next_seed()
        pytest_step(f"pytest '{FLAKY}' --count {count} -p 'randomly_seed={seed}' -q", 1, count, [], seed, True, 0, "one process",
                    lambda f, c=count: f"{c} repetitions in a single process: all pass.",
                    f"Try to reproduce locally in one process, {count} repetitions.")
    for k, conc in enumerate([16, 64, 256]):
        add("run_command", {"command": f"python scripts/stress_reserve.py --stock 50 --concurrency {conc} --iterations 400"},
            "\n".join(f"iteration {i:>3}: reserved={50 if True else 0} out_of_stock={conc - 50 if conc > 50 else 0} stock_left={0 if conc >= 50 else 50 - conc} ok" for i in range(0, 400, 8)) + f"\nsummary: 400 iterations, 0 over-reservations, 0 missing-key reloads, p99 reserve latency {rng.uniform(0.8, 4):.2f} ms\n",
            f"A direct stress test of the service in one process, {conc} concurrent reservations per iteration: 400 iterations, no over-reservation and no missing-key reload.",
            "Attack H1 head-on, without pytest: hammer the service with concurrent reservations against a real redis." if k == 0 else f"Same stress test with {conc} concurrent reservations.",
            ("H1", "ruled out (stress test clean up to 256 concurrent)") if k == 2 else None)
    fail_plan = {0: [], 1: [7], 2: [], 3: [2, 8], 4: [], 5: [3], 6: [], 7: [6], 8: [], 9: [4], 10: [], 11: [1]}
    for k in range(12):
        seed = next_seed()
        files = " ".join(pick(rng, OTHER_FILES, 2))
        pytest_step(f"pytest tests/integration/test_reservations.py {files} -n 4 --count 10 -p 'randomly_seed={seed}'", 4, 10, fail_plan[k], seed, False, rng.randint(1, 3),
                    "-n 4 with other files",
                    lambda f, sd=seed: (f"With four workers and other test files in the mix: {f['failures']} failure(s) in {f['items']} items (seed {sd}), on worker(s) {', '.join(f['fail_workers'])}." if f["failures"] else f"Four workers, seed {sd}: all {f['items']} items pass."),
                    "Reproduce like CI: four xdist workers, other test files alongside, recorded seed." if k == 0 else "Another run like CI with a new seed.",
                    ("H1", "unlikely (never fails in one process)") if k == 1 else None)
    for k in range(3):
        pytest_step(f"pytest tests/integration/test_reservations.py tests/integration/test_orders.py tests/unit/test_cart.py -n 4 --count 10 -p 'randomly_seed={seeds[2]}' # rerun {k + 1}",
                    4, 10, [5] if k == 1 else [], seeds[2], False, 2, "-n 4, fixed seed",
                    lambda f, kk=k: f"Same seed {seeds[2]}, rerun {kk + 1}: {f['failures']} failure(s). The seed does not reproduce it deterministically.",
                    f"If H2 (order dependence) were the cause, a failing seed would fail every time. Rerunning seed {seeds[2]}.",
                    ("H2", "unlikely (same seed passes and fails)") if k == 2 else None)
    for k in range(3):
        seed = next_seed()
        pytest_step(f"pytest tests/integration/test_reservations.py -n 4 --count 30 -p 'randomly_seed={seed}'", 4, 30, [], seed, True, 0, "-n 4, reservations file only",
                    lambda f: f"Only the reservations file, four workers, 30 repetitions: {f['items']} items, no failure.",
                    "Only the reservations file on four workers: does the mix with other files matter?")
    for workers, dist, fails in [(2, "load", [4]), (8, "load", [1, 6, 8]), (4, "loadfile", []), (4, "loadscope", []), (4, "load", [3])]:
        seed = next_seed()
        pytest_step(f"pytest tests/integration/test_reservations.py {' '.join(OTHER_FILES[:3])} -n {workers} --dist {dist} --count 10 -p 'randomly_seed={seed}'",
                    workers, 10, fails, seed, False, 2, f"-n {workers} --dist {dist}",
                    lambda f, w=workers, d=dist: f"`-n {w} --dist {d}`: {f['failures']} failure(s) in {f['items']} items."
                    + (" With `loadfile`/`loadscope` every file runs on one worker from start to end, and the workers that start late do so before any long test begins." if d != "load" else ""),
                    f"Vary the parallelism: {workers} workers with `--dist {dist}`. More workers should mean more session starts spread over time, if H3 is right.")
    add("run_command", {"command": "psql \"$DATABASE_URL\" -Atc \"select schema_name from information_schema.schemata where schema_name like 'test_%' order by 1\"  # during a -n 4 run"},
        "test_gw0\ntest_gw1\ntest_gw2\ntest_gw3\n", "During a parallel run there are exactly four test schemas, one per worker; postgres state is not shared.",
        "Check H5 directly: the schemas that exist during a parallel run.", ("H5", "ruled out (one schema per worker)"))
    # -- redis itself -----------------------------------------------------
    add("run_command", {"command": "docker compose -f docker-compose.test.yml exec redis redis-cli config get maxmemory-policy maxmemory"},
        "maxmemory-policy\nnoeviction\nmaxmemory\n0\n", "No eviction and no memory limit in the test redis: keys do not disappear on their own.",
        "Could redis evict keys under memory pressure?", ("H4", "unlikely for expiry/eviction (noeviction, TTL 900 s)"))
    add("edit_file", {"path": "app/reservations/service.py", "old_string": "            if remaining == -1:\n",
                      "new_string": "            if remaining == -1:\n                log.warning(\"DEBUG-FLAKE stock key vanished: sku=%s dbsize=%s worker=%s\", sku, await self._redis.dbsize(), os.environ.get(\"PYTEST_XDIST_WORKER\"))\n"},
        "Applied 1 edit to app/reservations/service.py (+1 line)", "Temporary debug logging added.",
        "Temporary debug logging in the reload path: when the key is missing, how big is the whole database at that moment? If it was just flushed, it will be nearly empty.")
    for k in range(2):
        out, f = pytest_run(rng, 4, 10, [4] if k == 0 else [2, 7], next_seed(), False, 2)
        out = out.replace("WARNING  app.reservations.service:service.py:71 stock key missing", f"WARNING  app.reservations.service:service.py:70 DEBUG-FLAKE stock key vanished: sku=sku-gw{rng.randint(0, 2)}-0{rng.randint(100, 999)} dbsize={rng.randint(1, 4)} worker=gw{rng.randint(0, 2)}\nWARNING  app.reservations.service:service.py:71 stock key missing", 1)
        add("run_command", {"command": f"pytest tests/integration/test_reservations.py tests/integration/test_catalog.py tests/integration/test_orders.py -n 4 --count 10 -p randomly # debug {k + 1}"}, out,
            f"The debug line fires in the failing repetition: the database holds only {rng.randint(1, 4)} keys at that moment, although four workers were busy creating SKUs, carts and reservations. Something emptied the whole database, not just this key.",
            "Run the mixed suite with the debug logging." if k == 0 else "Once more, to see the same pattern twice.", None,
            (f"-n 4 with other files", f["failures"], 10, f"-n 4 with debug logging: {f['failures']} failure(s) in 10 repetitions"))
    add("edit_file", {"path": "app/reservations/service.py", "old_string": "                log.warning(\"DEBUG-FLAKE stock key vanished: sku=%s dbsize=%s worker=%s\", sku, await self._redis.dbsize(), os.environ.get(\"PYTEST_XDIST_WORKER\"))\n",
                      "new_string": ""},
        "Applied 1 edit to app/reservations/service.py (-1 line)", "Debug logging removed.", "Remove the debug logging from the service again.")
    add("grep", {"pattern": "redis", "path": "tests/integration/test_catalog.py"},
        "tests/integration/test_catalog.py:14:async def test_catalog_cache_warms(redis, catalog):\ntests/integration/test_catalog.py:19:    assert await redis.exists(f\"stock:{sku}\")\ntests/integration/test_catalog.py:31:async def test_catalog_import_sets_all_stock(redis, catalog):\n",
        "The catalog tests only read and write their own keys; none of them deletes anything. So the emptying must come from setup, not from another test.",
        "Do the tests in the other files delete redis keys themselves?")
    add("grep", {"pattern": "flushdb|FLUSHDB|flushall|\\.delete\\(|unlink", "path": "."},
        "tests/conftest.py:31:    await client.flushdb()\nscripts/dev_reset.sh:12:redis-cli -n 0 FLUSHALL\ndocs/testing.md:9:session start with `FLUSHDB` so tests never see\napp/reservations/release.py:40:        await self._redis.unlink(*expired)\n",
        "Only the conftest flushes redis in tests; `release.py` unlinks expired reservation keys, never stock keys.",
        "Every place that wipes or deletes redis keys.", ("H3", "likely: FLUSHDB per worker session on a shared db"))
    for k in range(4):
        flush = rng.randint(60, 140) if k in (1, 3) else None
        add("run_command", {"command": f"timeout 30 redis-cli monitor > /tmp/monitor-{k}.log & pytest tests/integration/test_reservations.py tests/integration/test_catalog.py -n 4 --count 5 -q; sed -n '1,200p' /tmp/monitor-{k}.log"},
            redis_monitor(rng, 195, flush),
            ("The redis MONITOR log of a failing run shows a `FLUSHDB` from a fresh connection in the middle of the reservation traffic, between two `EVALSHA` calls on the same stock key." if flush is not None
             else "MONITOR during a passing run: only reservation traffic (`EVALSHA`, `GET`, `SET NX`, `EXPIRE`), no FLUSHDB after the very start."),
            "Watch redis itself during runs: who writes and deletes what, and when." if k == 0 else "Another monitored run.",
            ("H3", "confirmed: a late worker's FLUSHDB lands mid-test") if k == 1 else None)
    # -- deterministic reproduction ------------------------------------------
    add("edit_file", {"path": "tests/conftest.py", "old_string": '    client = Redis.from_url(REDIS_URL)\n    await client.flushdb()\n',
                      "new_string": '    client = Redis.from_url(REDIS_URL)\n    if os.environ.get("FLAKE_DELAY_WORKER") == os.environ.get("PYTEST_XDIST_WORKER"):\n        await asyncio.sleep(float(os.environ.get("FLAKE_DELAY_SECONDS", "2")))\n    await client.flushdb()\n'},
        "Applied 1 edit to tests/conftest.py (+2 lines)", "Temporary instrumentation is in place.",
        "To prove the mechanism, make it deterministic: delay one worker's session start (and so its FLUSHDB), as CI's slow gw3 does.")
    for delay, fails in [(2, [0, 2, 3]), (2, [1, 4]), (0.5, [2]), (1, [0, 3]), (4, [0, 1, 3]), (3, [0, 2, 4]), (1.5, [1, 3]), (0, [])]:
        seed = next_seed()
        pytest_step(f"FLAKE_DELAY_WORKER=gw3 FLAKE_DELAY_SECONDS={delay} pytest tests/integration/test_reservations.py tests/integration/test_orders.py tests/unit/test_tax.py -n 4 --count 5 -p 'randomly_seed={seed}'",
                    4, 5, fails, seed, False, 2, f"gw3 delayed {delay} s",
                    lambda f, d=delay: (f"With gw3's session start delayed {d} s: {f['failures']} failure(s) out of 5 repetitions." if d else "With the delay set to 0 (control): no failure, as in ordinary local runs."),
                    "Run with a 2 s delay." if delay == 2 and fails[0] == 0 else f"Vary the delay ({delay} s) to see the window in which the flush hurts.",
                    ("H4", "contributing: slow worker start on CI") if delay == 4 else None)
    add("edit_file", {"path": "tests/conftest.py", "old_string": '    if os.environ.get("FLAKE_DELAY_WORKER") == os.environ.get("PYTEST_XDIST_WORKER"):\n        await asyncio.sleep(float(os.environ.get("FLAKE_DELAY_SECONDS", "2")))\n',
                      "new_string": ""},
        "Applied 1 edit to tests/conftest.py (-2 lines)", "Instrumentation removed.",
        "Remove the delay again; I'll re-add it only to verify the fix.")
    add("read_file", {"path": ".github/workflows/ci.yml"}, """name: ci
on: [push, pull_request]
jobs:
  test:
    runs-on: ubuntu-latest
    services:
      redis:
        image: redis:7.2-alpine
        ports: ["6379:6379"]
      postgres:
        image: postgres:16
        env: { POSTGRES_USER: shop, POSTGRES_PASSWORD: shop, POSTGRES_DB: shop_test }
        ports: ["5432:5432"]
    steps:
      - uses: actions/checkout@v4
      - uses: astral-sh/setup-uv@v1
      - run: uv sync --frozen
      - run: pytest -n auto --dist load -p randomly --timeout 120
        env:
          REDIS_URL: redis://localhost:6379/0
          DATABASE_URL: postgresql://shop:shop@localhost:5432/shop_test
""", "CI sets one `REDIS_URL` with db 0 for all workers and uses `-n auto --dist load` (four cores on hosted runners).",
        "How CI configures redis for the tests.")
    add("run_command", {"command": "docker compose -f docker-compose.test.yml exec redis redis-cli config get databases"}, "databases\n16\n",
        "16 databases available, enough for one per worker up to `-n 15`.", "How many redis databases can the test server hold?")
    # -- the fix ----------------------------------------------------------
    add("edit_file", {"path": "tests/conftest.py", "old_string": '@pytest_asyncio.fixture(scope="session", autouse=True)\nasync def flush_redis():\n    """Start every test session with an empty redis."""\n    client = Redis.from_url(REDIS_URL)\n',
                      "new_string": 'def redis_url_for(worker_id: str) -> str:\n    """One redis database per xdist worker (gw0 -> db 1, gw1 -> db 2, ...; master -> db 0)."""\n    index = 0 if worker_id == "master" else int(worker_id.removeprefix("gw")) + 1\n    return REDIS_URL.rsplit("/", 1)[0] + f"/{index}"\n\n\n@pytest_asyncio.fixture(scope="session", autouse=True)\nasync def flush_redis(worker_id):\n    """Start every worker\'s session with an empty redis database of its own."""\n    client = Redis.from_url(redis_url_for(worker_id))\n'},
        "Applied 1 edit to tests/conftest.py (+6 -3 lines)", "The session flush now only touches the worker's own database.",
        "The fix: give every xdist worker its own redis database, the way postgres already gets a schema per worker, so one worker's FLUSHDB can never touch another's keys.")
    add("edit_file", {"path": "tests/conftest.py", "old_string": '@pytest_asyncio.fixture\nasync def redis():\n    client = Redis.from_url(REDIS_URL)\n',
                      "new_string": '@pytest_asyncio.fixture\nasync def redis(worker_id):\n    client = Redis.from_url(redis_url_for(worker_id))\n'},
        "Applied 1 edit to tests/conftest.py (+1 -1 lines)", "The per-test client uses the same database.",
        "The per-test `redis` fixture must point at the same per-worker database.")
    add("grep", {"pattern": "REDIS_URL|Redis.from_url", "path": "tests app"},
        "tests/conftest.py:8:REDIS_URL = os.environ.get(\"REDIS_URL\", \"redis://localhost:6379/0\")\ntests/conftest.py:16:    return REDIS_URL.rsplit(\"/\", 1)[0] + f\"/{index}\"\ntests/conftest.py:31:    client = Redis.from_url(redis_url_for(worker_id))\ntests/conftest.py:39:    client = Redis.from_url(redis_url_for(worker_id))\ntests/helpers.py:15:    client = Redis.from_url(os.environ[\"REDIS_URL\"])\napp/settings.py:21:    redis_url: str = \"redis://localhost:6379/0\"\n",
        "One more place: `tests/helpers.py` builds its own client from `REDIS_URL`, which would still use db 0 and miss the SKU's stock key.",
        "Any other test code that connects to redis on its own?")
    add("edit_file", {"path": "tests/helpers.py", "old_string": '    client = Redis.from_url(os.environ["REDIS_URL"])\n',
                      "new_string": '    client = Redis.from_url(redis_url_for(os.environ.get("PYTEST_XDIST_WORKER", "master")))\n'},
        "Applied 1 edit to tests/helpers.py (+1 -1 lines)", "The helper follows the worker's database too.",
        "Route the helper through the same function.")
    add("edit_file", {"path": "tests/helpers.py", "old_string": "from app.reservations.service import ReservationService\n",
                      "new_string": "from app.reservations.service import ReservationService\nfrom tests.conftest import redis_url_for\n"},
        "Applied 1 edit to tests/helpers.py (+1 lines)", "Import added.", "And import it there.")
    add("edit_file", {"path": "docs/testing.md", "old_string": "session start. Each test session starts with `FLUSHDB` so tests never see\nstale stock.\n",
                      "new_string": "session start. Redis is split the same way: each worker uses its own database\n(`gw0` -> db 1, `gw1` -> db 2, ...; db 0 without xdist) and flushes only that one\nat session start. Never connect to `REDIS_URL` directly in tests; use\n`redis_url_for(worker_id)`.\n"},
        "Applied 1 edit to docs/testing.md (+3 -1 lines)", "Docs updated.", "Document the rule so new helpers do not reintroduce the sharing.")
    add("edit_file", {"path": "tests/conftest.py", "old_string": '    client = Redis.from_url(redis_url_for(worker_id))\n    await client.flushdb()\n',
                      "new_string": '    client = Redis.from_url(redis_url_for(worker_id))\n    if os.environ.get("FLAKE_DELAY_WORKER") == os.environ.get("PYTEST_XDIST_WORKER"):\n        await asyncio.sleep(float(os.environ.get("FLAKE_DELAY_SECONDS", "2")))\n    await client.flushdb()\n'},
        "Applied 1 edit to tests/conftest.py (+2 lines)", "The delay is back, temporarily, on top of the fix.",
        "Re-add the artificial delay on top of the fix, so verification runs under the worst conditions I found.")
    for k, delay in enumerate([2, 2, 4, 1, 2, 4, 3, 1.5]):
        seed = next_seed()
        pytest_step(f"FLAKE_DELAY_WORKER=gw3 FLAKE_DELAY_SECONDS={delay} pytest tests/integration/test_reservations.py {' '.join(OTHER_FILES[:3])} -n 4 --count 10 -p 'randomly_seed={seed}'",
                    4, 10, [], seed, False, 2, "after the fix, gw3 delayed",
                    lambda f, d=delay: f"After the fix, gw3 delayed {d} s: {f['items']} items, no failure.",
                    "Verify under the conditions that reproduced it reliably (four workers, mixed files, delayed gw3)." if k == 0 else "Again with another seed and delay.")
    seed = next_seed()
    pytest_step(f"pytest tests/integration/test_reservations.py {' '.join(OTHER_FILES[:4])} -n 8 --count 20 -p 'randomly_seed={seed}'", 8, 20, [], seed, False, 2,
                "after the fix, -n 8", lambda f: f"Eight workers, 20 repetitions: {f['items']} items, no failure.",
                "Eight workers, the self-hosted runner setting, with more repetitions.")
    add("edit_file", {"path": "tests/conftest.py", "old_string": '    if os.environ.get("FLAKE_DELAY_WORKER") == os.environ.get("PYTEST_XDIST_WORKER"):\n        await asyncio.sleep(float(os.environ.get("FLAKE_DELAY_SECONDS", "2")))\n',
                      "new_string": ""},
        "Applied 1 edit to tests/conftest.py (-2 lines)", "Instrumentation removed for good.", "Take the delay out for good.")
    seed = next_seed()
    pytest_step(f"pytest tests/integration/test_reservations.py {' '.join(OTHER_FILES[:3])} -n 4 --count 100 -p 'randomly_seed={seed}' -q", 4, 100, [], seed, True, 1,
                "after the fix, --count 100", lambda f: f"100 repetitions of the flaky test on four workers next to other files: {f['items']} items, no failure.",
                "A long run: 100 repetitions of the flaky test next to other files.")
    for k in range(2):
        seed = next_seed()
        out, f = pytest_run(rng, 4, 1, [], seed, False, 7)
        add("run_command", {"command": f"pytest -n auto --dist load -p 'randomly_seed={seed}' --timeout 120"}, out,
            f"The full suite as CI runs it: {f['items']} items, all pass.",
            "The whole suite, exactly as CI runs it." if k == 0 else "And once more with another seed.", None,
            ("full suite", 0, 1, f"full suite -n auto, seed {seed}: 0 failures"))
    out, f = pytest_run(rng, 1, 1, [], next_seed(), False, 7)
    add("run_command", {"command": "pytest -q -p no:xdist"}, out, "Without xdist (db 0, the developers' default) everything passes too.",
        "And without xdist, the way developers run it locally.")
    add("run_command", {"command": "git switch -c fix/flaky-reservations-redis-db-per-worker && git commit -qam 'tests: one redis database per xdist worker' && git push -q -u origin HEAD && gh workflow run ci.yml --ref fix/flaky-reservations-redis-db-per-worker"},
        "Switched to a new branch 'fix/flaky-reservations-redis-db-per-worker'\nbranch 'fix/flaky-reservations-redis-db-per-worker' set up to track 'origin/fix/flaky-reservations-redis-db-per-worker'.\n✓ Created workflow_dispatch event for ci.yml at fix/flaky-reservations-redis-db-per-worker\n",
        "Branch pushed and CI triggered.", "Push the fix on a branch and let CI run it where the problem happens naturally.")
    for k in range(3):
        add("run_command", {"command": f"gh run list --branch fix/flaky-reservations-redis-db-per-worker --limit 1 --json databaseId --jq '.[0].databaseId' | xargs -I{{}} sh -c 'gh run watch {{}} >/dev/null; gh run view {{}} --log | grep -E \"worker started|stock key missing|passed in\"'  # run {k + 1}"},
            ci_log(rng, 8212600000 + k, False, [3.2, 0.4, 2.6][k]),
            f"CI run {k + 1} on the branch: green" + (f", and gw3 started {[3.2, 0.4, 2.6][k]:.1f} s late, exactly the timing that used to fail, with no `stock key missing` warning." if k != 1 else ", workers started together."),
            "Watch the branch's CI run." if k == 0 else f"Re-run CI on the branch ({k + 1} of 3).")
    add("run_command", {"command": "git show --stat HEAD"}, f"commit {hexid(rng, 40)}\nAuthor: Agent <agent@acme.example>\nDate:   Wed Mar 12 16:02:11 2025 +0000\n\n    tests: one redis database per xdist worker\n\n docs/testing.md   |  5 ++++-\n tests/conftest.py | 15 ++++++++++-----\n tests/helpers.py  |  3 ++-\n 3 files changed, 17 insertions(+), 6 deletions(-)\n",
        "Test code and docs only; no application change.", "Review the size of the committed change.")

    prev = None
    for index, step in enumerate(plan):
        if index == 0:
            text = ("`test_concurrent_checkout_reserves_stock` fails on CI about one run in thirty and nobody can reproduce it locally. "
                    "I want to understand the mechanism before changing anything, so I'll collect evidence from the test, the code, CI history and controlled reruns.\n\n"
                    "Initial hypotheses:\n" + nar.board_text() + "\n\nNext step: " + step["why"])
        else:
            stats = None
            if prev["run"]:
                condition, failures, reps, note = prev["run"]
                nar.record(condition, failures, reps)
                nar.runs.append(note)
                stats = nar.stats(condition)
            if prev["effect"]:
                nar.set(*prev["effect"])
            text = nar.turn(prev["observation"], step["why"], show_board=(prev["effect"] is not None or index % 5 == 0), stats=stats, next_tool=step["tool"])
        s.step(text, step["tool"], step["args"], output=step["output"])
        prev = step
    s.answer(f"""Found and fixed: the flake is shared redis state between pytest-xdist workers, not a race in the reservation code.

**Mechanism**
- `tests/conftest.py` gives each xdist worker its own postgres schema, but every worker used the same redis database (`redis://localhost:6379/0`).
- The session-scoped autouse fixture `flush_redis` runs `FLUSHDB` when each worker's session starts (added in November for single-process runs; CI went parallel in January). On CI (`-n auto` = 4 workers) one worker sometimes starts seconds after the others (gw3 started 1.9-4.1 s late in all five failed runs, within a few hundred ms in green ones).
- If that late `FLUSHDB` lands while another worker is inside `test_concurrent_checkout_reserves_stock`, the `stock:{{sku}}` key disappears after some reservations; the service reloads stock 5 from the database (reservations only live in redis) and hands out an extra unit: `assert 6 == 5`, always with `stock key missing ... reloading from database`.
- Evidence: never fails in one process or with the reservations file alone; the same seed both passes and fails (not order dependence); no eviction in the test redis; redis MONITOR shows a `FLUSHDB` between two `EVALSHA` calls on the same key in failing runs; delaying gw3's session start reproduces it on demand (0 failures with no delay).

**Fix** (tests and docs only)
- `redis_url_for(worker_id)`: one redis database per worker (gw0 → db 1, …; db 0 without xdist), used by `flush_redis`, the `redis` fixture and `tests/helpers.py`; `docs/testing.md` states the rule.
- Verified under the reproduction conditions (delayed gw3, 4 workers, mixed files, 6 × 10 repetitions), with 8 workers × 20 repetitions, and the full suite with and without xdist: no failure.

Separate risk worth a ticket: the service's reload-from-database path can over-reserve if a stock key is ever lost in production (eviction, failover), because the database does not know redis-only reservations.""")
    s.summary("""Summary so far (flaky `test_concurrent_checkout_reserves_stock`):
- Failure: `assert 6 == 5` with `stock key missing ... reloading from database`; ~1 in 30 CI runs (5 of last 40 on main, different commits).
- Code: reservations via an atomic Lua script on `stock:{sku}`; a missing key reloads stock from the DB (SET NX) — the DB does not know redis-only reservations.
- Fixtures: postgres schema per xdist worker; redis shared (db 0) for all workers; session autouse `flush_redis` does FLUSHDB at each worker's session start (added Nov 2024; CI parallel since Jan 2025).
- CI: failed runs have one worker starting 2-4 s late; green runs start all workers together.
- Local: never fails without xdist or with the reservations file alone; fails sometimes with -n 4 and other files; same seed both passes and fails (H2 unlikely); H1 (script race) unlikely; no eviction (noeviction).
- redis MONITOR: a FLUSHDB lands mid-test between EVALSHA calls in failing runs (H3 confirmed).
Remaining: reproduce deterministically (delay a worker), fix with one redis db per worker, verify under the bad conditions.""", reusable=True)
    head = {
        "name": s.name,
        "description": (
            f"A flaky-test hunt with long, reasoning-heavy assistant turns: {s.main_steps} model decisions, each turn a few "
            "kilobytes of thinking about the evidence (failure statistics, hypothesis board, list of runs, what would "
            "distinguish the explanations) around mid-size pytest, CI-log and redis-MONITOR outputs. Much of the history is "
            "the assistant's own text, which observation masking cannot shrink. Under `roku` Layer 0 keeps the results "
            "small and the reasoning stays below the 60 % mark, so no other layer runs; `masking` keeps ten results and "
            "every turn; `opencode` and `codex` let the history grow to the window and then summarize it. The uncompacted "
            "history passes 150K tokens, so `none` cannot finish."
        ),
        "model": "gpt-5-mini",
        "context_window": 128000,
        "system": "You are a meticulous test engineer hunting a flaky test. Think out loud: state what each result tells you, keep your hypotheses and their status up to date, and design experiments that distinguish them. Do not paper over flakiness with retries; find the mechanism and prove the fix.",
        "task": f"`{FLAKY}` fails on CI about once in thirty runs and never locally. Find out why and fix it; show that the fix holds under the conditions that made it fail.",
    }
    return s, {"head": head, "final_contains": ["FLUSHDB", "xdist", "redis_url_for"], "recorded_model": "gpt-5-mini-2025-08-07"}
