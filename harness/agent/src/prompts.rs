//! The texts the loop itself writes into the conversation, apart from its
//! settings so that a reader comparing loops finds every word the model is
//! told in one place (summary prompts live with compaction, in
//! `context::notes`).

/// OpenCode's message for the step budget's last turn.
pub const MAX_STEPS_MESSAGE: &str = "CRITICAL - MAXIMUM STEPS REACHED. The maximum number of steps allowed for this task has been reached. Tools are disabled until the next user input. Respond with text only: summarize the work done so far and list any remaining tasks.";

/// What the loop tells the model when it repeats itself.
pub fn doom_loop_warning(tool: &str, repeats: usize) -> String {
    format!(
        "You have called `{tool}` with identical arguments {repeats} times in a row and got the same kind of result. Stop repeating it: change your approach, or finish with what you know."
    )
}
