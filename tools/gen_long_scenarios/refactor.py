"""Scenario 3: a refactor across many files (log -> tracing), the summary breaker."""

from __future__ import annotations

from .randomness import hexid, pick
from .session import Session
from .yaml_writer import block


RS_CRATES = {
    "ingest-core": ["pipeline", "batch", "dedup", "backpressure"],
    "ingest-storage": ["flush", "compaction", "segment", "wal"],
    "ingest-kafka": ["consumer", "offsets", "rebalance"],
    "ingest-http": ["server", "routes", "auth"],
    "ingest-cli": ["config", "replay"],
}
RS_NOUNS = ["batch", "segment", "record", "partition", "offset", "table", "chunk", "shard", "manifest", "checkpoint", "tenant", "topic"]
RS_FIELDS = [("rows", "usize"), ("bytes", "u64"), ("table", "String"), ("partition", "i32"), ("offset", "i64"),
             ("segment_id", "u64"), ("tenant", "TenantId"), ("attempt", "u32"), ("elapsed", "Duration"), ("path", "PathBuf")]


class RsLog:
    """One log call site, in both styles."""

    def __init__(self, rng, level: str, indent: str):
        self.level = level
        fields = pick(rng, RS_FIELDS, rng.randint(1, 3))
        verb = rng.choice(["flushed", "compacted", "committed", "skipped", "rejected", "retrying", "loaded", "evicted", "opened", "sealed"])
        noun = rng.choice(RS_NOUNS)
        fmt_parts, args, structured = [], [], []
        for name, typ in fields:
            if typ == "Duration":
                fmt_parts.append(f"in {{:?}}")
                args.append(name)
                structured.append(f"{name}_ms = {name}.as_millis() as u64")
            elif typ in ("String", "PathBuf", "TenantId"):
                fmt_parts.append(f"{name} {{}}" if typ != "PathBuf" else f"at {{}}")
                args.append(name if typ != "PathBuf" else f"{name}.display()")
                structured.append(f"{name} = %{name}" if typ != "PathBuf" else f"{name} = %{name}.display()")
            else:
                fmt_parts.append(f"{name}={{}}")
                args.append(name)
                structured.append(name)
        message = f"{verb} {noun}"
        if level == "error":
            fmt_parts.append("error: {}")
            args.append("err")
            structured.append("error = %err")
        self.old = f'{indent}{level}!("{message} {" ".join(fmt_parts)}", {", ".join(args)});'
        self.new = f'{indent}{level}!({", ".join(structured)}, "{message}");'
        self.message = message


def rs_function(rng, name: str, noun: str, async_fn: bool) -> tuple[list[str], list[str], int]:
    """A function with log call sites: (old lines, new lines, call sites)."""
    indent = "        "
    sig = f"    pub {'async ' if async_fn else ''}fn {name}(&self, {noun}: &{noun.capitalize()}) -> Result<{rng.choice(['()', 'usize', 'Option<Offset>', 'Stats'])}, {rng.choice(['IngestError', 'StorageError', 'anyhow::Error'])}> {{"
    old, new = [sig], []
    sites = 0
    body = []
    for _ in range(rng.randint(5, 10)):
        kind = rng.random()
        if kind < 0.5:
            log = RsLog(rng, rng.choice(["debug", "info", "info", "warn", "error", "trace"]), indent)
            body.append(("log", log))
            sites += 1
        else:
            stmt = rng.choice([
                f"{indent}let started = Instant::now();",
                f"{indent}let rows = {noun}.rows.len();",
                f"{indent}let table = self.table_for({noun}.tenant)?;",
                f"{indent}self.metrics.{rng.choice(RS_NOUNS)}_total.inc();",
                f"{indent}let bytes = {noun}.encoded_len() as u64;",
                f"{indent}if {noun}.is_empty() {{\n{indent}    return Ok(Default::default());\n{indent}}}",
                f"{indent}let elapsed = started.elapsed();",
                f"{indent}let guard = self.inflight.acquire().await?;" if async_fn else f"{indent}let guard = self.lock.lock();",
                f"{indent}self.buffer.extend_from_slice(&{noun}.payload);",
                f"{indent}let offset = self.writer.append({noun}){'.await' if async_fn else ''}?;",
                f"{indent}drop(guard);",
            ])
            body.append(("stmt", stmt))
    for kind, item in body:
        if kind == "log":
            old.append(item.old)
            new.append(item.new)
        else:
            old.append(item)
            new.append(item)
    old.append(f"{indent}Ok(Default::default())")
    new.append(f"{indent}Ok(Default::default())")
    old.append("    }")
    new.append("    }")
    # The tracing version gains an #[instrument] on async fns.
    instrumented = [f"    #[instrument(skip(self, {noun}), fields({noun}_len = {noun}.rows.len()))]"] if async_fn else []
    return old, instrumented + [sig] + new + ["    }"][:0], sites


def rs_module(rng, crate: str, module: str) -> dict:
    """A Rust module using `log`, with the edits that move it to `tracing`."""
    struct = "".join(p.capitalize() for p in module.split("_")) + rng.choice(["Writer", "Manager", "Worker", "Service", "Handle"])
    levels = sorted(set(rng.sample(["debug", "info", "warn", "error", "trace"], 3)) | {"info"})
    header = [f"//! {module.replace('_', ' ').capitalize()} for `{crate}`: {rng.choice(['the hot path of ingestion', 'called from the pipeline per batch', 'background maintenance', 'request handling'])}.",
              "", f"use std::sync::Arc;", f"use std::time::{{Duration, Instant}};", "",
              f"use log::{{{', '.join(levels)}}};", f"use crate::{{{rng.choice(['IngestError', 'StorageError'])}, Metrics}};", "",
              f"pub struct {struct} {{", "    metrics: Arc<Metrics>,", "    inflight: tokio::sync::Semaphore,", "    buffer: Vec<u8>,", "}", "",
              f"impl {struct} {{"]
    new_header = [l.replace(f"use log::{{{', '.join(levels)}}};", f"use tracing::{{{', '.join(levels)}, instrument}};") for l in header]
    functions = []
    for i in range(rng.randint(6, 9)):
        noun = rng.choice(RS_NOUNS)
        name = f"{rng.choice(['flush', 'seal', 'commit', 'load', 'evict', 'open', 'replay', 'apply', 'compact', 'poll'])}_{noun}{'' if i < 2 else '_' + rng.choice(['batch', 'all', 'once', 'now'])}"
        old, new, sites = rs_function(rng, name, noun, rng.random() < 0.7)
        functions.append({"name": name, "old": "\n".join(old), "new": "\n".join(new), "sites": sites})
    tail = ["}", "", "#[cfg(test)]", "mod tests {", "    use super::*;", ""]
    for f in functions[:3]:
        tail += ["    #[tokio::test]", f"    async fn {f['name']}_handles_empty_input() {{", f"        let w = {struct}::for_tests();",
                 f"        assert!(w.{f['name']}(&Default::default()).await.is_ok());", "    }", ""]
    tail.append("}")
    old_text = "\n".join(header) + "\n" + "\n\n".join(f["old"] for f in functions) + "\n" + "\n".join(tail) + "\n"
    return {"crate": crate, "module": module, "path": f"crates/{crate}/src/{module}.rs", "struct": struct, "levels": levels,
            "header_old": "\n".join(header[:7]), "header_new": "\n".join(new_header[:7]), "functions": functions,
            "text": old_text, "lines": old_text.count("\n"), "sites": sum(f["sites"] for f in functions)}


def rs_line_of(module: dict, needle: str) -> int:
    for i, line in enumerate(module["text"].split("\n"), 1):
        if needle in line:
            return i
    return 1


def rs_check_output(rng, modules: list[dict], targets: list[str], max_kb: int) -> tuple[str, int, int]:
    """Compiler errors after removing `log`, one per import and per macro call, per target, in the order cargo
    prints them; returns the first lines up to about `max_kb` (as `| head -N` would), the line count and the
    number of errors shown."""
    crates = []
    for m in modules:
        if m["crate"] not in crates:
            crates.append(m["crate"])
    out = [f"    Checking {c} v0.14.2 (/work/ferrous-ingest/crates/{c})" for c in crates]
    errors = 0
    for target in targets:
        for c in crates:
            count = 0
            for m in (m for m in modules if m["crate"] == c):
                for i, line in enumerate(m["text"].split("\n"), 1):
                    stripped = line.strip()
                    if stripped.startswith("use log::") or stripped.startswith("use env_logger"):
                        crate_name = stripped.split("::")[0].split()[1].rstrip(";")
                        block = [f"error[E0432]: unresolved import `{crate_name}`", f"  --> {m['path']}:{i}:5", "   |",
                                 f"{i:<3}| {stripped}", f"   |     {'^' * len(crate_name)} use of undeclared crate or module `{crate_name}`", ""]
                    elif any(stripped.startswith(f"{lv}!(") for lv in ("debug", "info", "warn", "error", "trace")):
                        macro = stripped.split("!")[0]
                        col = len(line) - len(line.lstrip()) + 1
                        block = [f"error: cannot find macro `{macro}` in this scope", f"   --> {m['path']}:{i}:{col}", "    |",
                                 f"{i:<4}| {stripped}", f"    | {' ' * (col - 1)}{'^' * len(macro)}", "    |",
                                 "help: consider importing one of these items", "    |", f"3   + use tracing::{macro};", "    |",
                                 f"3   + use tracing_log::log::{macro};", "    |", ""]
                    else:
                        continue
                    out += block
                    count += 1
            if count:
                out.append(f"error: could not compile `{c}` ({target}) due to {count} previous errors")
                out.append("warning: build failed, waiting for other jobs to finish...")
    shown, size, errors = [], 0, 0
    for line in out:
        if size + len(line) + 1 > max_kb * 1024:
            break
        shown.append(line)
        size += len(line) + 1
        errors += line.startswith("error") and not line.startswith("error: could not compile")
    return "\n".join(shown) + "\n", len(shown), errors


def rs_grep_sites(modules: list[dict]) -> tuple[str, int]:
    out = []
    for m in modules:
        for i, line in enumerate(m["text"].split("\n"), 1):
            if "log::" in line or any(f"{lv}!(" in line for lv in ("debug", "info", "warn", "error", "trace")):
                out.append(f"{m['path']}:{i}:{line.strip()}")
    return "\n".join(out) + "\n", len(out)


def rs_test_output(rng, crate: str, modules: list[dict], n_extra: int) -> str:
    names = []
    for m in modules:
        for f in m["functions"][:3]:
            names.append(f"{m['module']}::tests::{f['name']}_handles_empty_input")
    for _ in range(n_extra):
        m = rng.choice(modules)
        names.append(f"{m['module']}::tests::{rng.choice(['roundtrip', 'rejects', 'handles', 'preserves', 'orders'])}_{rng.choice(RS_NOUNS)}_{rng.choice(['on_restart', 'under_pressure', 'with_gaps', 'in_order', 'after_crash', 'when_full'])}")
    lines = [f"   Compiling {crate} v0.14.2 (/work/ferrous-ingest/crates/{crate})", f"    Finished `test` profile [unoptimized + debuginfo] target(s) in {rng.uniform(8, 40):.2f}s",
             f"     Running unittests src/lib.rs (target/debug/deps/{crate.replace('-', '_')}-{hexid(rng, 16)})", "", f"running {len(names)} tests"]
    for n in names:
        lines.append(f"test {n} ... ok")
    lines += ["", f"test result: ok. {len(names)} passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in {rng.uniform(0.2, 3):.2f}s", ""]
    return "\n".join(lines) + "\n"


def build_refactor() -> tuple[Session, dict]:
    s = Session("refactor-log-to-tracing")
    rng = s.rng
    s.tool("read_file", "Read a file of the workspace.", {"path": {"type": "string"}}, ["path"], 25, "No such file or directory (os error 2)")
    s.tool("edit_file", "Replace an exact string in a file. `old_string` must occur exactly once.",
           {"path": {"type": "string"}, "old_string": {"type": "string"}, "new_string": {"type": "string"}},
           ["path", "old_string", "new_string"], 40, "old_string not found in file")
    s.tool("grep", "Search the workspace with ripgrep (rg -n PATTERN PATH).",
           {"pattern": {"type": "string"}, "path": {"type": "string"}}, ["pattern", "path"], 150, "rg: no matches")
    s.tool("run_command", "Run a command in the workspace root (cargo, git, rg).", {"command": {"type": "string"}}, ["command"], 9000,
           "command failed")
    modules = {crate: [rs_module(rng, crate, m) for m in mods] for crate, mods in RS_CRATES.items()}
    all_modules = [m for ms in modules.values() for m in ms]
    test_modules = {crate: rs_module(rng, crate, "it_" + rng.choice(["roundtrip", "recovery", "ordering", "limits"])) for crate in RS_CRATES}
    for crate, tm in test_modules.items():
        tm["path"] = f"crates/{crate}/tests/{tm['module']}.rs"
        tm["text"] = tm["text"].replace("use std::sync::Arc;", "use std::sync::Arc;\nuse env_logger;").replace(
            "impl ", "fn init_logging() {\n    let _ = env_logger::builder().is_test(true).try_init();\n}\n\nimpl ", 1)
        tm["header_old"] = tm["header_old"].replace("use std::sync::Arc;", "use std::sync::Arc;\nuse env_logger;")
        tm["header_new"] = tm["header_new"].replace("use std::sync::Arc;", "use std::sync::Arc;\nuse tracing_subscriber;")
    plan: list[tuple] = []

    def add(tool, args, output, text):
        plan.append((tool, args, output, text))

    def convert(m, intro):
        add("read_file", {"path": m["path"]}, m["text"], intro)
        add("edit_file", {"path": m["path"], "old_string": m["header_old"], "new_string": m["header_new"]},
            f"Applied 1 edit to {m['path']} (-1 +1 lines)",
            f"`{m['path']}` has {m['sites']} call sites in {len(m['functions'])} functions. The import first: `log::{{{', '.join(m['levels'])}}}` becomes `tracing::{{{', '.join(m['levels'])}, instrument}}`; the macro names stay, only their arguments change.")
        batch = [f for f in m["functions"] if f["sites"]]
        for i in range(0, len(batch), 3):
            group = batch[i:i + 3]
            old = "\n\n".join(f["old"] for f in group)
            new = "\n\n".join(f["new"] for f in group)
            names = " and ".join(f"`{f['name']}`" for f in group)
            reason = rng.choice([
                "positional format arguments become fields (`rows`, `table = %table`, durations as `*_ms` integers so they aggregate), the message becomes a constant string, errors go in an `error = %err` field",
                "same pattern as before: counters and ids as plain fields, strings and paths through `%` (Display), `Duration`s as millisecond integers, a constant message last",
                "the format strings carried the data in the message; as fields it can be filtered and aggregated, and the constant message groups the events",
            ])
            extra = " The async ones get `#[instrument]` with the payload length as a span field instead of the payload." if any("async fn" in f["old"] for f in group) else ""
            add("edit_file", {"path": m["path"], "old_string": old, "new_string": new},
                f"Applied 1 edit to {m['path']} (-{old.count(chr(10)) + 1} +{new.count(chr(10)) + 1} lines)",
                f"Rewriting {names}: {reason}.{extra}")

    add("run_command", {"command": "rg -c 'log::|\\b(trace|debug|info|warn|error)!\\(' crates/ --type rust | sort -t: -k2 -rn"},
        "\n".join(f"{m['path']}:{m['sites'] + 1}" for m in all_modules + list(test_modules.values())) + "\n",
        "The goal is to move the whole workspace from `log` + `env_logger` to `tracing` with structured fields. First, how many call sites there are and where.")
    add("read_file", {"path": "Cargo.toml"}, """[workspace]
resolver = "2"
members = ["crates/*"]

[workspace.package]
version = "0.14.2"
edition = "2021"
rust-version = "1.78"

[workspace.dependencies]
anyhow = "1.0"
bytes = "1.6"
env_logger = "0.11"
log = "0.4"
rdkafka = { version = "0.36", features = ["cmake-build"] }
serde = { version = "1.0", features = ["derive"] }
thiserror = "1.0"
tokio = { version = "1.38", features = ["full"] }
""", f"{sum(m['sites'] for m in all_modules)} call sites in {len(all_modules)} library modules plus the integration tests. The workspace manifest pins `log` and `env_logger` as workspace dependencies.")
    for crate in RS_CRATES:
        add("read_file", {"path": f"crates/{crate}/Cargo.toml"}, f"""[package]
name = "{crate}"
version.workspace = true
edition.workspace = true

[dependencies]
anyhow = {{ workspace = true }}
log = {{ workspace = true }}
tokio = {{ workspace = true }}
{"rdkafka = { workspace = true }" if "kafka" in crate else "bytes = { workspace = true }"}

[dev-dependencies]
env_logger = {{ workspace = true }}
""", f"Each crate depends on the workspace `log`; `{crate}`'s manifest:" if crate == "ingest-core" else f"`{crate}` the same way.")
    add("edit_file", {"path": "Cargo.toml", "old_string": 'env_logger = "0.11"\nlog = "0.4"\n', "new_string": 'tracing = "0.1"\ntracing-subscriber = { version = "0.3", features = ["env-filter", "json"] }\n'},
        "Applied 1 edit to Cargo.toml (-2 +2 lines)",
        "Plan: replace the workspace dependencies, swap them in every crate manifest, and let the compiler list every call site that breaks. Workspace dependencies first: `tracing` 0.1 and `tracing-subscriber` with `env-filter` (keeps `RUST_LOG` working) and `json` for production.")
    for crate in RS_CRATES:
        add("edit_file", {"path": f"crates/{crate}/Cargo.toml", "old_string": "log = { workspace = true }\n", "new_string": "tracing = { workspace = true }\n"},
            f"Applied 1 edit to crates/{crate}/Cargo.toml (-1 +1 lines)", f"`{crate}`: `log` becomes `tracing`.")
    flood1, lines1, n1 = rs_check_output(rng, all_modules, ["lib", "lib test"], 118)
    add("run_command", {"command": f"cargo check --workspace --all-targets 2>&1 | head -{lines1}"}, flood1,
        "All manifests switched. Now the whole workspace, to get the list of broken imports and macro calls in one go (capped, it will be long).")
    survey_sites, _ = rs_grep_sites(all_modules[:3])
    add("grep", {"pattern": "use log::", "path": "crates"}, "\n".join(f"{m['path']}:{rs_line_of(m, 'use log::')}:use log::{{{', '.join(m['levels'])}}};" for m in all_modules) + "\n",
        f"{n1} errors in the first {lines1} lines, as expected: an unresolved import per module and a missing macro per call, for the library and again for the unit-test target. What matters is the list of files, so a plain search for the imports.")
    add("read_file", {"path": "crates/ingest-core/src/lib.rs"}, "//! Core of the ingestion pipeline.\n\npub mod backpressure;\npub mod batch;\npub mod dedup;\npub mod pipeline;\npub mod schema;\n\nmod error;\nmod metrics;\n\npub use error::IngestError;\npub use metrics::Metrics;\n",
        f"{len(all_modules)} library modules import `log`. I'll go crate by crate in dependency order, starting with `ingest-core`, whose module list is in its `lib.rs`.")
    for crate, mods in modules.items():
        for k, m in enumerate(mods):
            prev_m = mods[k - 1] if k else None
            convert(m, f"Converting `{crate}`. First module: `{m['path']}`, {m['lines']} lines." if k == 0 else
                    f"`{prev_m['path']}` is done: the import and {prev_m['sites']} call sites in {len([f for f in prev_m['functions'] if f['sites']])} functions, each edit matched exactly once. "
                    f"Next module of `{crate}`: `{m['path']}` ({m['lines']} lines).")
        add("run_command", {"command": f"cargo check -p {crate} 2>&1 | tail -5"},
            f"    Checking {crate} v0.14.2 (/work/ferrous-ingest/crates/{crate})\n    Finished `dev` profile [unoptimized + debuginfo] target(s) in {rng.uniform(3, 25):.2f}s\n",
            f"All {len(mods)} modules of `{crate}` are converted. Checking the crate on its own.")
        if crate in ("ingest-core", "ingest-storage", "ingest-cli"):
            add("run_command", {"command": f"cargo test -p {crate} --lib 2>&1"}, rs_test_output(rng, crate, mods, rng.randint(25, 60)),
                f"`{crate}` compiles. Its unit tests, to make sure the instrumented functions behave the same.")
    add("edit_file", {"path": "crates/ingest-cli/src/main.rs", "old_string": "    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or(\"info\")).init();\n",
                      "new_string": "    tracing_subscriber::fmt()\n        .with_env_filter(EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(\"info\")))\n        .with_target(false)\n        .json()\n        .init();\n"},
        "Applied 1 edit to crates/ingest-cli/src/main.rs (-1 +5 lines)",
        "The libraries are done. The binary still initialises `env_logger`; replace it with a `tracing_subscriber` JSON formatter honouring `RUST_LOG` through `EnvFilter`.")
    for crate in list(RS_CRATES)[:3]:
        add("edit_file", {"path": f"crates/{crate}/Cargo.toml", "old_string": "[dev-dependencies]\nenv_logger = { workspace = true }\n", "new_string": "[dev-dependencies]\ntracing-subscriber = { workspace = true }\n"},
            f"Applied 1 edit to crates/{crate}/Cargo.toml (-1 +1 lines)",
            f"The integration tests still depend on `env_logger` as a dev-dependency; `{crate}` first.")
    flood2, lines2, n2 = rs_check_output(rng, list(test_modules.values()), ["test", "bench", "example"], 118)
    add("run_command", {"command": f"cargo build --workspace --all-targets 2>&1 | head -{lines2}"}, flood2,
        "Before touching the test files, a full build of every target (tests, benches, examples), so nothing hides behind the library checks.")
    add("grep", {"pattern": "env_logger|use log::", "path": "crates"}, "\n".join(f"{tm['path']}:{rs_line_of(tm, 'use log::')}:use log::{{{', '.join(tm['levels'])}}};\n{tm['path']}:{rs_line_of(tm, 'use env_logger')}:use env_logger;" for tm in test_modules.values()) + "\n",
        f"{n2} errors in the first {lines2} lines, all in integration tests, benches and examples sharing them: they import `log` and `env_logger` and initialise logging through `env_logger::builder().is_test(true)`. The list of files:")
    for crate in list(RS_CRATES)[3:]:
        add("edit_file", {"path": f"crates/{crate}/Cargo.toml", "old_string": "[dev-dependencies]\nenv_logger = { workspace = true }\n", "new_string": "[dev-dependencies]\ntracing-subscriber = { workspace = true }\n"},
            f"Applied 1 edit to crates/{crate}/Cargo.toml (-1 +1 lines)", f"Same dev-dependency swap for `{crate}`.")
    for crate, tm in test_modules.items():
        convert(tm, f"Integration tests of `{crate}`: `{tm['path']}`.")
        add("edit_file", {"path": tm["path"], "old_string": "fn init_logging() {\n    let _ = env_logger::builder().is_test(true).try_init();\n}",
                          "new_string": "fn init_logging() {\n    let _ = tracing_subscriber::fmt().with_test_writer().with_env_filter(\"debug\").try_init();\n}"},
            f"Applied 1 edit to {tm['path']} (-1 +1 lines)",
            "And its logging setup: `tracing_subscriber::fmt().with_test_writer()` captures output per test like `is_test(true)` did.")
    add("run_command", {"command": "cargo test --workspace 2>&1 | grep -E '^(test result|running|error)'"},
        "\n".join(f"running {n} tests\ntest result: ok. {n} passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in {rng.uniform(0.1, 4):.2f}s" for n in [rng.randint(20, 90) for _ in range(10)]) + "\n",
        "Every target converted. The whole test suite.")
    add("run_command", {"command": "cargo clippy --workspace --all-targets -- -D warnings 2>&1 | tail -20"},
        "    Checking ingest-core v0.14.2\n    Checking ingest-storage v0.14.2\n    Checking ingest-kafka v0.14.2\n    Checking ingest-http v0.14.2\n    Checking ingest-cli v0.14.2\n    Finished `dev` profile [unoptimized + debuginfo] target(s) in 41.07s\n",
        "All green. Clippy over every target with warnings as errors, to catch unused imports left behind.")
    add("run_command", {"command": "rg -n 'log::|env_logger' crates/ Cargo.toml"}, "",
        "Clippy is clean. A last search for any `log::` path or `env_logger` left anywhere.")
    add("run_command", {"command": "RUST_LOG=ingest_storage=debug cargo run -q -p ingest-cli -- replay --input fixtures/small.ndjson 2>&1 | head -5"},
        '{"timestamp":"2025-03-14T10:41:07.118204Z","level":"INFO","fields":{"message":"loaded manifest","segment_id":17,"rows":4096},"span":{"name":"load_manifest"}}\n{"timestamp":"2025-03-14T10:41:07.131877Z","level":"DEBUG","fields":{"message":"flushed batch","rows":512,"table":"events_2025_03","elapsed_ms":3},"span":{"batch_len":512,"name":"flush_batch"}}\n{"timestamp":"2025-03-14T10:41:07.140002Z","level":"INFO","fields":{"message":"sealed segment","segment_id":18,"bytes":1048576},"span":{"name":"seal_segment"}}\n{"timestamp":"2025-03-14T10:41:07.151930Z","level":"INFO","fields":{"message":"committed offset","partition":3,"offset":88211},"span":{"name":"commit_offset"}}\n{"timestamp":"2025-03-14T10:41:07.163311Z","level":"INFO","fields":{"message":"replay finished","rows":4096}}\n',
        "No matches: nothing left. A smoke run of the CLI to see the new structured output.")
    total_sites = sum(m["sites"] for m in all_modules) + sum(m["sites"] for m in test_modules.values())
    total_files = len(all_modules) + len(test_modules)
    for index, (tool, args, output, text) in enumerate(plan):
        s.step(text, tool, args, output=output)
    s.answer(f"""The workspace now logs through `tracing`.

- Dependencies: `log` and `env_logger` removed from the workspace and from all 5 crates; `tracing` 0.1 and `tracing-subscriber` 0.3 (`env-filter`, `json`) added.
- {total_sites} call sites in {total_files} modules converted from format strings to structured fields: counters and ids as plain fields, strings and paths with `%`, durations as `*_ms` integers, errors as `error = %err`; messages are now constant strings, so they can be grouped on.
- Async entry points carry `#[instrument]` with the payload length as a span field (never the payload).
- `ingest-cli` initialises `tracing_subscriber::fmt().json()` with an `EnvFilter`, so `RUST_LOG` keeps working.
- `cargo check`, `cargo test` per crate and `cargo clippy --workspace --all-targets -D warnings` are clean; `rg 'log::|env_logger'` finds nothing.""")
    s.summary("""Summary of the session so far (refactor: `log` -> `tracing` in the ferrous-ingest workspace):
- Workspace Cargo.toml: `log`/`env_logger` replaced by `tracing` 0.1 and `tracing-subscriber` 0.3 (env-filter, json).
- Method per crate: swap `log` for `tracing` in the crate manifest, `cargo check` (lib and tests) to list broken call sites, then per module: fix the import (`use tracing::{..., instrument}`), rewrite each function's log calls as structured fields (`rows`, `table = %table`, `elapsed_ms = elapsed.as_millis() as u64`, `error = %err`, constant messages) and add `#[instrument(skip(self, x), fields(x_len = ...))]` to async fns; then re-check and run the crate's tests.
- Crates completed so far compile and pass their tests.
Remaining: the crates not yet converted, then the env_logger init in ingest-cli main.rs, clippy on the workspace, a final search for `log::`.""", reusable=True)
    head = {
        "name": s.name,
        "description": (
            f"A refactor across a whole Rust workspace: {s.main_steps} model decisions moving five crates and "
            f"{total_files} modules from `log` to `tracing` with structured fields, through `cargo`, ripgrep, file reads "
            "and many `edit_file` calls whose arguments carry the rewritten functions (so the history grows even where "
            "tool results are masked). Twice the agent lets the compiler list every broken call site at once (`cargo check "
            "--workspace` after swapping the dependency, `cargo build --all-targets` before fixing the tests): each "
            "error flood keeps the loop above 75 % of its 40K window for the three steps it stays among the newest "
            "results, so Layer 3 asks for a summary on each of them. Every summary stalls (a fault on the reusable "
            "compaction exchange: 400 s of silence after the first event, past the 300 s summary limit) and falls back "
            "to the mechanical session memory; the third failure trips the circuit breaker, and the Layer 3 compactions "
            "of the second flood run mechanically without calling the model. Layers 0 and 1 run throughout. The uncompacted "
            "history passes 150K tokens, about 4x the window."
        ),
        "model": "gpt-4.1-mini",
        "context_window": 40000,
        "system": "You are a careful Rust engineer doing a mechanical but large refactor. Work crate by crate, let the compiler find call sites, keep edits minimal and exact (edit_file needs the exact old text), and re-check after each crate. Finish with a summary of what changed.",
        "task": "Migrate the ferrous-ingest workspace from `log` + `env_logger` to `tracing` + `tracing-subscriber`. Convert format-string log calls to structured fields, instrument the async entry points, and keep `RUST_LOG` working. Everything must compile and the tests must pass.",
    }
    return s, {"head": head, "final_contains": ["tracing", "EnvFilter", "#[instrument]"],
               "faults": [lambda sess: {"exchange": sess.compaction_index, "times": 1000, "stall": {"after_events": 1, "seconds": 400}}],
               "recorded_model": "gpt-4.1-mini-2025-04-14"}
