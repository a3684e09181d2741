//! What a test needs from the machine beyond the workspace, looked for
//! when the harness starts, so that the outcome is honest:
//!
//! - found: the test runs, given where (the Python, the agents' folder);
//! - missing: the test is listed as ignored, which nextest reports as
//!   skipped (not passed), and run anyway (`--run-ignored`) it fails,
//!   naming the prerequisite and how to install it;
//! - missing under `CI=true`: the test is not ignored, so it fails so;
//! - misconfigured (its variable set, but to something that lacks it):
//!   the test fails, wherever it runs.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use libtest_mimic::{Arguments, Failed, Trial};

/// A Python that has the official OpenAI SDK.
pub const OPENAI: Needs = Needs::Python("openai");
/// A Python that has the official OpenAI and Anthropic SDKs.
pub const OPENAI_AND_ANTHROPIC: Needs = Needs::Python("openai, anthropic");
/// Real opencode, codex and pi, from the pinned npm install of `.ci/run`.
pub const OPENCODE: Needs = Needs::Agent { var: "RELOOP_AGENTS_BIN", program: "opencode" };
/// See [`OPENCODE`].
pub const CODEX: Needs = Needs::Agent { var: "RELOOP_AGENTS_BIN", program: "codex" };
/// See [`OPENCODE`].
pub const PI: Needs = Needs::Agent { var: "RELOOP_AGENTS_BIN", program: "pi" };
/// Real Claude Code, from the second pinned npm install of `.ci/run`.
pub const CLAUDE: Needs = Needs::Agent { var: "RELOOP_MORE_AGENTS_BIN", program: "claude" };
/// The real stdio MCP server `mcp-server-time` and the official `mcp` SDK
/// beside it, from the pinned PyPI install of `.ci/run` (a venv's `bin`).
pub const MCP_TIME: Needs = Needs::Program {
    var: "RELOOP_MCP_BIN",
    program: "mcp-server-time",
    install: "`python3 -m venv VENV && VENV/bin/pip install mcp-server-time mcp` (the versions .ci/run pins) and set RELOOP_MCP_BIN=VENV/bin",
};

/// One prerequisite.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub enum Needs {
    /// A Python that can import these modules: `RELOOP_PYTHON`, else `python3`.
    Python(&'static str),
    /// `program` in the folder that environment variable `var` names.
    Agent { var: &'static str, program: &'static str },
    /// `program` in the folder `var` names, installed as `install` says.
    Program { var: &'static str, program: &'static str, install: &'static str },
    /// Leave to mount a tmpfs (root with CAP_SYS_ADMIN, as CI runs).
    Tmpfs,
    /// bubblewrap (`bwrap`) on PATH, able to make a mount namespace here
    /// (`agent.shell_interception: mount`; .ci/run installs it).
    Bwrap,
}

/// What looking for a prerequisite found.
enum Found {
    Yes(PathBuf),
    /// Not here: what is missing and how to install it.
    Missing(String),
    /// Asked for by a variable that names something lacking it.
    Misconfigured(String),
}

impl Needs {
    fn find(self) -> Found {
        match self {
            Self::Python(modules) => {
                let configured = std::env::var_os("RELOOP_PYTHON");
                let python = configured.clone().map_or_else(|| PathBuf::from("python3"), PathBuf::from);
                let import = format!("import {modules}");
                let found = Command::new(&python).args(["-c", &import]).stderr(Stdio::null()).status().is_ok_and(|s| s.success());
                match (found, configured) {
                    (true, _) => Found::Yes(python),
                    (false, Some(_)) => Found::Misconfigured(format!("RELOOP_PYTHON={} cannot `{import}`", python.display())),
                    (false, None) => Found::Missing(format!(
                        "needs a Python that can `{import}`: install them (`python3 -m venv VENV && VENV/bin/pip install {}`) and set RELOOP_PYTHON=VENV/bin/python, as .ci/run does",
                        modules.replace(", ", " ")
                    )),
                }
            }
            Self::Agent { var, program } => match std::env::var_os(var).map(PathBuf::from) {
                Some(dir) if dir.join(program).is_file() => Found::Yes(dir),
                Some(dir) => Found::Misconfigured(format!("{var}={} has no `{program}`", dir.display())),
                None => Found::Missing(format!(
                    "needs `{program}`: install the pinned agents with npm (`npm install --prefix DIR`, the packages and versions .ci/run names) and set {var}=DIR/node_modules/.bin (docs/black-box.md)"
                )),
            },
            Self::Program { var, program, install } => match std::env::var_os(var).map(PathBuf::from) {
                Some(dir) if dir.join(program).is_file() => Found::Yes(dir),
                Some(dir) => Found::Misconfigured(format!("{var}={} has no `{program}`", dir.display())),
                None => Found::Missing(format!("needs `{program}`: install it with {install}")),
            },
            Self::Tmpfs => {
                let point = tempfile::tempdir().unwrap();
                let mounted = Command::new("mount").args(["-t", "tmpfs", "-o", "size=32k", "tmpfs"]).arg(point.path()).output();
                match mounted {
                    Ok(output) if output.status.success() => {
                        let _ = Command::new("umount").arg(point.path()).status();
                        Found::Yes(PathBuf::from("mount"))
                    }
                    Ok(output) => Found::Missing(format!(
                        "needs to mount a tmpfs, which was refused ({}): run as root with CAP_SYS_ADMIN, as CI does",
                        String::from_utf8_lossy(&output.stderr).trim()
                    )),
                    Err(error) => Found::Missing(format!("needs the `mount` command ({error}): install util-linux and run as root, as CI does")),
                }
            }
            Self::Bwrap => match Command::new("bwrap").args(["--dev-bind", "/", "/", "true"]).output() {
                Ok(output) if output.status.success() => Found::Yes(PathBuf::from("bwrap")),
                Ok(output) => Found::Missing(format!(
                    "needs bubblewrap to make a mount namespace, which it could not ({}): run as root or where unprivileged user namespaces are allowed",
                    String::from_utf8_lossy(&output.stderr).trim()
                )),
                Err(error) => Found::Missing(format!("needs bubblewrap (`bwrap`: {error}): `apt-get install bubblewrap`, as .ci/run does")),
            },
        }
    }
}

/// One test of this binary: a name, what it needs, how it runs.
pub struct Test {
    name: String,
    run: Run,
}

enum Run {
    Plain(fn()),
    Needing(Needs, fn(&Path)),
}

impl Test {
    /// A test that needs nothing beyond the workspace. `path` is its
    /// `module_path!()`, whose first segment (the crate) is left out.
    pub fn plain(path: &str, name: &str, test: fn()) -> Self {
        Self { name: qualified(path, name), run: Run::Plain(test) }
    }

    /// A test given where `needs` was found.
    pub fn needing(needs: Needs, path: &str, name: &str, test: fn(&Path)) -> Self {
        Self { name: qualified(path, name), run: Run::Needing(needs, test) }
    }
}

fn qualified(path: &str, name: &str) -> String {
    let module = path.split_once("::").map_or("", |(_, module)| module);
    format!("{module}::{name}")
}

/// `Test::plain` or `Test::needing`, named after the function.
#[macro_export]
macro_rules! test {
    ($test:ident) => {
        $crate::prerequisite::Test::plain(module_path!(), stringify!($test), $test)
    };
    ($needs:expr, $test:ident) => {
        $crate::prerequisite::Test::needing($needs, module_path!(), stringify!($test), $test)
    };
}

/// The trials of `tests`, each prerequisite looked for once, and only for
/// the tests that `args` selects.
pub fn trials(args: &Arguments, tests: Vec<Test>) -> Vec<Trial> {
    let ci = std::env::var("CI").is_ok_and(|value| value == "true");
    // Flagged ignored, the probe is judged by the name filters alone (with
    // `--ignored`, libtest-mimic filters out every test not flagged so).
    let selected = |test: &Test| !args.is_filtered_out(&Trial::test(test.name.clone(), || Ok(())).with_ignored_flag(true));
    let mut found: HashMap<Needs, Found> = HashMap::new();
    for test in tests.iter().filter(|test| selected(test)) {
        if let Run::Needing(needs, _) = test.run {
            found.entry(needs).or_insert_with(|| needs.find());
        }
    }
    tests
        .into_iter()
        .map(|Test { name, run }| match run {
            Run::Plain(test) => Trial::test(name, move || {
                test();
                Ok(())
            }),
            Run::Needing(needs, test) => match found.get(&needs) {
                None => Trial::test(name, || Ok(())), // filtered out: never runs
                Some(Found::Yes(path)) => {
                    let path = path.clone();
                    Trial::test(name, move || {
                        test(&path);
                        Ok(())
                    })
                }
                Some(Found::Missing(why)) => {
                    let why = format!("{why} (under CI=true a missing prerequisite fails; elsewhere the test is skipped)");
                    Trial::test(name, move || Err(Failed::from(why))).with_ignored_flag(!ci)
                }
                Some(Found::Misconfigured(why)) => {
                    let why = why.clone();
                    Trial::test(name, move || Err(Failed::from(why)))
                }
            },
        })
        .collect()
}
