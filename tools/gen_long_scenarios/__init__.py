"""Generate the long-horizon scenarios of `scenarios/long/` and their recordings.

Five coding-agent sessions of 100+ model decisions each, whose uncompacted
history passes 150,000 tokens: a codebase investigation, a log analysis, a
dependency upgrade, a refactor across many files and a flaky-test hunt. Their
content (source files, logs, lockfiles, test output, the assistant's
reasoning) comes from templates with seeded variation, so the files are
realistic, varied per step, and identical on every run of this package.

Together they exercise every layer of the default `roku` strategy (0-4), the
summary circuit breaker and the reactive path, and they are the material for
comparing the strategies (`roku`, `opencode`, `codex`, `masking`, `none`).

Usage, from the repository root:
    python3 -m tools.gen_long_scenarios [--out-root DIR] [--only NAME]
    python3 -m tools.gen_long_scenarios --check   (CI: the files are what it writes)

Modules: `yaml_writer` (the YAML subset written), `session` (the session
model: tools, steps, exchanges, rendering), `randomness` (seeded helpers),
`go_sources` (the investigation's Go monorepo) and one module per scenario.
Python 3 standard library only. Deterministic: one fixed seed, no clock.
"""
