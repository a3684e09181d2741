//! The loop's own token estimate, which drives compaction decisions before
//! the provider has counted anything (Roku: bytes/4).

use crate::message::Message;
use crate::tools::ToolSpec;

/// Bytes per token of the plain heuristic.
pub const BYTES_PER_TOKEN: u64 = 4;
/// Framing tokens per message (role markers), as in OpenAI's counting guide.
pub const TOKENS_PER_MESSAGE: u64 = 3;

/// Estimated tokens of one text.
pub fn estimate_text(text_len: usize) -> u64 {
    (text_len as u64).div_ceil(BYTES_PER_TOKEN)
}

/// Estimated prompt tokens of a request.
pub fn estimate_prompt(system: &str, messages: &[Message], tools_json_len: usize) -> u64 {
    let framing = TOKENS_PER_MESSAGE * (messages.len() as u64 + 1) + 3;
    framing
        + estimate_text(system.len())
        + estimate_text(tools_json_len)
        + messages.iter().map(|m| estimate_text(m.char_len())).sum::<u64>()
}

/// Serialized length of the tool declarations, for [`estimate_prompt`].
pub fn tools_json_len(tools: &[ToolSpec]) -> usize {
    serde_json::to_string(tools).map(|s| s.len()).unwrap_or(0)
}
