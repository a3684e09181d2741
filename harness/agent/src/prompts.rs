//! The texts the loop itself writes into the conversation, apart from its
//! settings so that a reader comparing loops finds every word the model is
//! told in one place (summary prompts live with compaction, in
//! `context::notes`).

use crate::doom_loop::{DoomLoop, DoomLoopKind};

/// OpenCode's message for the step budget's last turn.
pub const MAX_STEPS_MESSAGE: &str = "CRITICAL - MAXIMUM STEPS REACHED. The maximum number of steps allowed for this task has been reached. Tools are disabled until the next user input. Respond with text only: summarize the work done so far and list any remaining tasks.";

/// What the loop tells the model when it repeats itself, per detector.
pub fn doom_loop_warning(detected: &DoomLoop) -> String {
    let DoomLoop { tool, repeats, period, .. } = detected;
    let what = match detected.kind {
        DoomLoopKind::IdenticalCalls => format!("You have called `{tool}` with identical arguments {repeats} times in a row and got the same kind of result."),
        DoomLoopKind::Cycle => format!("You are going round in circles: the same {period} calls, starting with `{tool}`, {repeats} times over."),
        DoomLoopKind::NoProgress => format!("Your last {repeats} calls differed but all got the same result: they are not making progress."),
    };
    format!("{what} Stop repeating it: change your approach, or finish with what you know.")
}
