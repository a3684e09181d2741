//! The one way reloop learns it must stop: the first Ctrl-C, SIGTERM or
//! SIGHUP (a CI timeout, `docker stop`, a closed terminal) sets a flag that
//! batches poll between runs and wakes the servers (`serve`, `record`),
//! which stop accepting, finish what is under way and exit 130. A second
//! signal exits at once. Every command sees the same signals the same way,
//! because this is the only handler installed.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::sync::Notify;

use crate::exit_code;

/// The interrupt state shared by the signal handler and the command.
#[derive(Debug, Clone, Default)]
pub struct Interrupt {
    flag: Arc<AtomicBool>,
    wake: Arc<Notify>,
}

impl Interrupt {
    /// Installs the handler for Ctrl-C, SIGTERM and SIGHUP; `on_first`
    /// says what the command does now.
    pub fn install(on_first: &'static str) -> Self {
        let interrupt = Self::default();
        let handler = interrupt.clone();
        let _ = ctrlc::set_handler(move || {
            if handler.flag.swap(true, Ordering::SeqCst) {
                reloop_eval::black_box::kill_live_agents();
                std::process::exit(exit_code::INTERRUPTED);
            }
            // A stored permit: a server not yet waiting still sees it.
            handler.wake.notify_one();
            eprintln!("\ninterrupt: {on_first} (interrupt again to quit now)");
        });
        interrupt
    }

    /// The flag batches poll (set by the first signal).
    pub fn flag(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.flag)
    }

    /// Resolves at the first signal (at once if it came already).
    pub async fn requested(&self) {
        while !self.flag.load(Ordering::SeqCst) {
            self.wake.notified().await;
        }
    }
}
