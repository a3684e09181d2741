//! `--help` says what reloop and each command do for a user (issue 41):
//! not the crate's description for developers, and `serve` names every
//! API it speaks.

use crate::util::{reloop, repo, stdout};

#[test]
fn help_says_what_reloop_and_each_command_do() {
    let top = stdout(&reloop(&repo(), &["--help"]));
    assert!(top.starts_with("Replay LLM agent loops against recorded providers"), "{top}");
    assert!(!top.contains("wiring"), "{top}");
    assert!(top.contains("Start with `reloop run scenarios/"), "{top}");
    let serve = stdout(&reloop(&repo(), &["serve", "--help"]));
    let first = serve.lines().next().unwrap_or_default();
    for api in ["OpenAI (Chat Completions, Responses)", "Anthropic", "Gemini"] {
        assert!(first.contains(api), "serve --help names {api}: {first}");
    }
}
