//! A replayed capture (or simulated schedule): read whole before the TUI starts, or still being
//! read by a loader thread whose deltas each tick takes in without waiting. No keys of its own.

use super::Session;
use crate::ui::keys::Action;
use crate::ui::state::{LoadMsg, State};
use std::sync::mpsc::Receiver;
use std::time::Duration;

/// How long a tick takes in the reader's deltas before the next frame is drawn.
const TICK_BUDGET: Duration = Duration::from_millis(40);

#[derive(Default)]
pub struct Replay {
    /// The loader thread's deltas, when the capture is read in the background.
    loader: Option<Receiver<LoadMsg>>,
    /// The last tick left deltas waiting (its time was up): the next frame comes at once.
    behind: bool,
}

impl Replay {
    /// A replay of a capture the loader thread is reading.
    pub fn reading(loader: Receiver<LoadMsg>) -> Replay {
        Replay {
            loader: Some(loader),
            behind: false,
        }
    }
}

impl Session for Replay {
    fn tick(&mut self, st: &mut State) {
        // Take what the reader has, without waiting for it, and for a frame's time at most:
        // the screen shows what is read and fills in, rather than waiting for the whole file.
        self.behind = false;
        if let Some(rx) = &self.loader {
            let start = std::time::Instant::now();
            while let Ok(msg) = rx.try_recv() {
                st.on_load(msg);
                // the reader is ahead: draw, then take more at once
                self.behind = st.loading.is_some();
                if start.elapsed() >= TICK_BUDGET {
                    break;
                }
            }
        }
    }

    fn apply(&mut self, _action: Action, _st: &mut State) -> bool {
        false
    }

    fn frame_wait(&self, st: &State, draw_ms: u64) -> Duration {
        Duration::from_millis(if self.behind {
            1
        } else if st.loading.is_some() {
            // Frames of a trace still loading walk its lanes without summaries and share this
            // thread with indexing: spend at most a third of it drawing.
            (2 * draw_ms).clamp(30, 250)
        } else {
            100
        })
    }
}
