//! The mock's request parse over the replay workload, whole or reusing the previous request's
//! parse (`reloop_wire::history_prefix`), to count its instructions alone:
//!
//! ```sh
//! cargo build --release -p reloop-wire --example decode_history
//! valgrind --tool=callgrind target/release/examples/decode_history whole
//! valgrind --tool=callgrind target/release/examples/decode_history reusing
//! valgrind --tool=callgrind target/release/examples/decode_history build   # the bodies alone
//! valgrind --tool=callgrind target/release/examples/decode_history reusing gemini
//! ```
//!
//! The bodies are those of `reloop-generate --scenarios 20 --steps 50 --result-chars 2000`
//! (`benches/src/workload.rs`) as the client encodes them (in OpenAI Chat, or Gemini when asked): each request of a conversation
//! carries the system prompt, the task and every `read_file` call and result so far. Kept in
//! the wire crate so that its release build needs only the wire's few dependencies.

use std::time::Instant;

use reloop_wire::codec::{self, Reusable};
use reloop_wire::{Format, Message, Prompt, ToolCall};

fn main() {
    let mode = std::env::args().nth(1).unwrap_or_else(|| "reusing".to_owned());
    let format = if std::env::args().nth(2).as_deref() == Some("gemini") { Format::Gemini } else { Format::OpenaiChat };
    let (scenarios, steps, result_chars) = (20, 50, 2000);
    let line = "pub fn handle(request: &Request) -> Result<Response, Error> { let user = authenticate(request)?; Ok(Response::ok(render(&user))) }\n";
    let result: String = line.chars().cycle().take(result_chars).collect();
    let started = Instant::now();
    let (mut bytes, mut messages) = (0, 0);
    for _ in 0..scenarios {
        let mut prompt =
            Prompt { model: "replay".into(), system: Some("You are a coding agent.".into()), stream: true, include_usage: true, ..Prompt::default() };
        prompt.messages.push(Message::User { text: "Read every module.".into() });
        let mut previous: Option<Reusable<Vec<u8>>> = None;
        for step in 1..=steps {
            let body = codec::encode_request(format, prompt.clone(), |_| Vec::new()).expect("plain JSON");
            bytes += body.len();
            let decoded = match mode.as_str() {
                "whole" => Some(codec::decode_request(format, &body, "replay", true).expect("the client's body")),
                "reusing" => {
                    let (decoded, kept) = codec::decode_request_reusing(format, body, "replay", true, previous.take()).expect("the client's body");
                    previous = kept;
                    Some(decoded)
                }
                _ => None,
            };
            messages += decoded.map_or(0, |decoded| decoded.prompt.messages.len());
            let id = format!("call_{step}");
            let call = ToolCall { id: id.as_str().into(), name: "read_file".into(), arguments: format!("{{\"path\":\"src/module_{step}.rs\"}}").into() };
            prompt.messages.push(Message::assistant("", vec![call]));
            prompt.messages.push(Message::ToolResult { call_id: id.into(), tool_name: "read_file".into(), content: result.as_str().into(), is_error: false });
        }
    }
    println!(
        "{mode} {format:?}: {scenarios} conversations, {} requests, {bytes} bytes, {messages} messages decoded, {:?}",
        scenarios * steps as usize,
        started.elapsed()
    );
}
