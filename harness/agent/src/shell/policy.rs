//! The shell policy: every command a line would run is classified, and the
//! line is as risky as its riskiest part. Reads inside the workspace run;
//! writes and the unknown need approval; destruction, code piped into an
//! interpreter, privilege escalation, paths outside the workspace and lines
//! that cannot be parsed are denied.

use super::parse::{Construct, Redirect, Script, SimpleCommand, Word, parse};
use crate::grounding::Workspace;
use crate::risk::Risk;

/// How many `sh -c` / `eval` levels are followed before giving up.
const MAX_NESTING: usize = 3;

/// A verdict with the reason a person (or the model) can act on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assessment {
    /// What may happen.
    pub risk: Risk,
    /// Why, naming the command that decided it.
    pub reason: String,
}

/// One part's verdict, ordered from harmless to refused.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Verdict {
    Read,
    Write(String),
    Unknown(String),
    Denied(String),
}

impl Verdict {
    fn into_assessment(self) -> Assessment {
        match self {
            Self::Read => Assessment { risk: Risk::Safe, reason: "reads inside the workspace only".into() },
            Self::Write(reason) => Assessment { risk: Risk::RequiresApproval, reason: format!("writes: {reason}") },
            Self::Unknown(reason) => Assessment { risk: Risk::RequiresApproval, reason },
            Self::Denied(reason) => Assessment { risk: Risk::Denied, reason },
        }
    }
}

/// Classifies a shell command line run in `workspace`.
pub fn assess(command: &str, workspace: &Workspace) -> Assessment {
    line(command, workspace, 0).into_assessment()
}

fn line(command: &str, workspace: &Workspace, nesting: usize) -> Verdict {
    match parse(command) {
        Ok(script) => script_verdict(&script, workspace, nesting),
        Err(_) => Verdict::Denied("the command cannot be parsed".into()),
    }
}

fn script_verdict(script: &Script, workspace: &Workspace, nesting: usize) -> Verdict {
    let constructs = script.constructs.iter().map(construct);
    let redirects = script.redirects.iter().map(|r| redirect(r, workspace));
    let commands = script.commands.iter().map(|c| simple_command(c, workspace, nesting));
    constructs.chain(redirects).chain(commands).max().unwrap_or(Verdict::Read)
}

fn construct(construct: &Construct) -> Verdict {
    match construct {
        Construct::Expansion => Verdict::Unknown("uses an expansion (`$VAR`, `$(...)`, backticks) whose value is not known in advance".into()),
        Construct::Assignment => Verdict::Unknown("sets or exports variables".into()),
        Construct::Function { recursive: true } => Verdict::Denied("defines a function that calls itself (a fork bomb)".into()),
        Construct::Function { recursive: false } => Verdict::Unknown("defines a function".into()),
        Construct::Other(kind) => Verdict::Unknown(format!("uses shell syntax `{kind}` the policy does not judge")),
    }
}

/// Output redirections write; `/dev/null` and descriptor copies do not.
fn redirect(redirect: &Redirect, workspace: &Workspace) -> Verdict {
    let target = &redirect.target;
    let is_output = redirect.operator.contains('>');
    let is_descriptor = redirect.operator.ends_with('&') && target.text.chars().all(|c| c.is_ascii_digit() || c == '-');
    if target.is_static && (is_descriptor || HARMLESS_DEVICES.contains(&target.text.as_str())) {
        return Verdict::Read;
    }
    if target.is_static && target.text.starts_with("/dev/") {
        return Verdict::Denied(format!("redirects to the device `{}`", target.text));
    }
    if let Some(escape) = outside(target, workspace) {
        return escape;
    }
    if is_output { Verdict::Write(format!("redirects output to `{}`", target.text)) } else { Verdict::Read }
}

/// Devices a redirection may name without effect.
const HARMLESS_DEVICES: [&str; 4] = ["/dev/null", "/dev/stdout", "/dev/stderr", "/dev/stdin"];

/// Commands that only read the files they name.
const READ_ONLY: [&str; 24] = [
    "ls",
    "cat",
    "head",
    "tail",
    "wc",
    "grep",
    "egrep",
    "fgrep",
    "rg",
    "find",
    "pwd",
    "stat",
    "file",
    "tree",
    "which",
    "diff",
    "du",
    "sort",
    "cut",
    "nl",
    "realpath",
    "sha256sum",
    "md5sum",
    "cmp",
];

/// Commands that touch no file at all: their arguments are just text.
const TEXT_ONLY: [&str; 5] = ["echo", "printf", "true", "false", "tr"];

/// Commands that change files.
const WRITERS: [&str; 17] =
    ["cp", "mv", "rm", "rmdir", "mkdir", "touch", "chmod", "chown", "chgrp", "ln", "truncate", "install", "rsync", "shred", "patch", "tee", "xargs"];

/// Commands refused outright: they destroy disks or the machine's state.
const DESTRUCTIVE: [&str; 9] = ["mkfs", "fdisk", "sfdisk", "parted", "wipefs", "shutdown", "reboot", "halt", "poweroff"];

/// Commands that run other people's privileges.
const ESCALATION: [&str; 4] = ["sudo", "su", "doas", "pkexec"];

/// Shells that take a script with `-c`.
const SHELLS: [&str; 6] = ["sh", "bash", "zsh", "dash", "ksh", "fish"];

/// Interpreters that run code fed on standard input.
const INTERPRETERS: [&str; 8] = ["python", "python3", "perl", "ruby", "node", "php", "lua", "osascript"];

/// Read-only `git` subcommands.
const SAFE_GIT: [&str; 5] = ["status", "diff", "log", "show", "blame"];

/// Options that make an otherwise read-only command write or run programs.
const WRITING_OPTIONS: [(&str, &[&str]); 8] = [
    ("find", &["-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprint0", "-fprintf", "-fls"]),
    ("sort", &["-o", "--output"]),
    ("tree", &["-o"]),
    ("file", &["-C", "--compile"]),
    ("rg", &["--pre", "--search-zip", "-z"]),
    ("git", &["--output", "--ext-diff", "--textconv", "-c", "--exec-path", "-C", "--git-dir", "--work-tree"]),
    ("sed", &["-i", "--in-place"]),
    ("diff", &["--to-file", "--from-file"]),
];

fn simple_command(command: &SimpleCommand, workspace: &Workspace, nesting: usize) -> Verdict {
    let Some((name, args)) = command.words.split_first() else { return Verdict::Read };
    if !name.is_static {
        return Verdict::Unknown(format!("the command name `{}` is computed", name.text));
    }
    let program = name.text.as_str();
    if program.contains('/') {
        return Verdict::Unknown(format!("runs the program `{program}` by path"));
    }
    let base = program_verdict(program, args, command.fed_by_pipe, workspace, nesting);
    let environment = if command.has_assignments { Verdict::Unknown(format!("runs `{program}` with variables set before it")) } else { Verdict::Read };
    let paths = path_arguments(program, args).filter_map(|arg| outside(arg, workspace)).max().unwrap_or(Verdict::Read);
    base.max(environment).max(paths)
}

/// The arguments of a known program that name files: all of them, but a
/// search pattern (`grep PATTERN`, unless given by `-e`/`-f`) or `find`'s
/// expression. Unknown programs need approval anyway and their arguments
/// (a `sed` script, an `npm` flag) are not taken for paths.
fn path_arguments<'a>(program: &str, args: &'a [Word]) -> Box<dyn Iterator<Item = &'a Word> + 'a> {
    let takes_files = (READ_ONLY.contains(&program) || WRITERS.contains(&program) || program == "dd" || program == "git") && !TEXT_ONLY.contains(&program);
    if !takes_files {
        return Box::new(std::iter::empty());
    }
    match program {
        "grep" | "egrep" | "fgrep" | "rg" => {
            let pattern_given = args
                .iter()
                .any(|a| matches!(a.text.as_str(), "-e" | "-f" | "--regexp" | "--file") || a.text.starts_with("--regexp=") || a.text.starts_with("--file="));
            let pattern = if pattern_given { None } else { args.iter().position(|a| !a.text.starts_with('-')) };
            Box::new(args.iter().enumerate().filter(move |(i, _)| Some(*i) != pattern).map(|(_, a)| a))
        }
        "find" => Box::new(args.iter().take_while(|a| !a.text.starts_with(['-', '(', '!']))),
        _ => Box::new(args.iter()),
    }
}

/// The verdict a program earns by its name and options.
fn program_verdict(program: &str, args: &[Word], fed_by_pipe: bool, workspace: &Workspace, nesting: usize) -> Verdict {
    if let Some(verdict) = by_options(program, args) {
        return verdict;
    }
    match program {
        _ if DESTRUCTIVE.iter().any(|d| program == *d || program.starts_with(&format!("{d}."))) => Verdict::Denied(format!("`{program}` is never allowed")),
        _ if ESCALATION.contains(&program) => Verdict::Denied(format!("`{program}` runs with other privileges")),
        "rm" if removes_everything(args) => Verdict::Denied("recursive removal of the root, home or everything".into()),
        "dd" if args.iter().any(|a| a.text.starts_with("of=/dev/")) => Verdict::Denied("`dd` onto a device".into()),
        "dd" => Verdict::Write("`dd` copies raw data".into()),
        _ if SHELLS.contains(&program) => nested_shell(program, args, fed_by_pipe, workspace, nesting),
        "eval" => nested_script(&args.iter().collect::<Vec<_>>(), workspace, nesting, "eval"),
        _ if INTERPRETERS.contains(&program) && fed_by_pipe && !runs_file(args) => Verdict::Denied(format!("pipes data into the interpreter `{program}`")),
        "git" => match args.first() {
            Some(sub) if sub.is_static && SAFE_GIT.contains(&sub.text.as_str()) => Verdict::Read,
            _ => Verdict::Unknown("`git` beyond status, diff, log, show and blame".into()),
        },
        "tee" if args.iter().all(|a| a.text.starts_with('-') || a.text == "/dev/null") => Verdict::Read,
        _ if WRITERS.contains(&program) => Verdict::Write(format!("`{program}` changes files")),
        _ if READ_ONLY.contains(&program) || TEXT_ONLY.contains(&program) => Verdict::Read,
        _ => Verdict::Unknown(format!("`{program}` is not a known read-only command")),
    }
}

/// A writing option of a read-only command (`find -delete`, `sed -i`).
fn by_options(program: &str, args: &[Word]) -> Option<Verdict> {
    let (_, options) = WRITING_OPTIONS.iter().find(|(name, _)| *name == program)?;
    let found = args.iter().find(|arg| options.iter().any(|option| matches_option(&arg.text, option)))?;
    Some(Verdict::Write(format!("`{program} {}`", found.text)))
}

/// Whether `arg` is `option`, carries it with a value (`--output=x`,
/// `-ofile`, `-i.bak`), or bundles it with other short flags (`-ni`).
fn matches_option(arg: &str, option: &str) -> bool {
    if arg == option {
        return true;
    }
    if option.starts_with("--") || (option.len() > 2 && arg.starts_with('-') && !arg.starts_with("--")) {
        return option.starts_with("--") && arg.strip_prefix(option).is_some_and(|rest| rest.starts_with('='));
    }
    let Some(letter) = option.strip_prefix('-').and_then(|l| l.chars().next()) else { return false };
    arg.starts_with('-') && !arg.starts_with("--") && arg[1..].contains(letter)
}

/// `rm -r` aimed at `/`, `~`, `*` or the like.
fn removes_everything(args: &[Word]) -> bool {
    let recursive = args.iter().any(|a| a.text == "--recursive" || (a.text.starts_with('-') && !a.text.starts_with("--") && a.text.contains(['r', 'R'])));
    recursive && args.iter().any(|a| matches!(a.text.as_str(), "/" | "/*" | "~" | "~/" | "~/*" | "*" | "." | "./" | ".."))
}

/// `sh -c 'script'` is judged by its script; a shell reading a piped
/// stream runs code from elsewhere; a shell running a file is unknown.
fn nested_shell(program: &str, args: &[Word], fed_by_pipe: bool, workspace: &Workspace, nesting: usize) -> Verdict {
    if let Some(position) = args.iter().position(|a| a.text.starts_with('-') && !a.text.starts_with("--") && a.text.contains('c')) {
        return match args.get(position + 1) {
            Some(script) => nested_script(&[script], workspace, nesting, program),
            None => Verdict::Denied(format!("`{program} -c` without a script")),
        };
    }
    if fed_by_pipe && !runs_file(args) {
        Verdict::Denied(format!("pipes data into the shell `{program}`"))
    } else {
        Verdict::Unknown(format!("`{program}` runs a script"))
    }
}

/// Whether an interpreter is given a file to run (else it reads its input).
fn runs_file(args: &[Word]) -> bool {
    args.iter().any(|a| !a.text.starts_with('-'))
}

/// A script given as words (`eval a b`, `sh -c 'a b'`), judged as a line.
fn nested_script(words: &[&Word], workspace: &Workspace, nesting: usize, via: &str) -> Verdict {
    if nesting >= MAX_NESTING {
        return Verdict::Unknown(format!("`{via}` nested too deep to judge"));
    }
    if words.iter().any(|w| !w.is_static) {
        return Verdict::Unknown(format!("`{via}` runs a computed script"));
    }
    let script = words.iter().map(|w| w.text.as_str()).collect::<Vec<_>>().join(" ");
    line(&script, workspace, nesting + 1)
}

/// `Some(denial)` when the word names a path outside the workspace (for an
/// option, its value: `--file=/etc/x`).
fn outside(word: &Word, workspace: &Workspace) -> Option<Verdict> {
    if !word.is_static {
        return None;
    }
    let text = word.text.as_str();
    let candidate = match text.strip_prefix("--") {
        Some(long) => long.split_once('=')?.1,
        None if text.starts_with('-') => return None,
        None => text.split_once('=').map_or(text, |(_, value)| value),
    };
    if candidate.is_empty() || HARMLESS_DEVICES.contains(&candidate) {
        return None;
    }
    workspace.resolve(candidate).err().map(|_| Verdict::Denied(format!("`{text}` is outside the workspace")))
}
