//! What drives a TUI run: where its data comes from and the keys only it understands. One file
//! per session; the app holds one as a `Box<dyn Session>` and never asks which it is.
//!
//! * [`replay::Replay`]: a capture (or a simulated schedule), read whole or still being read;
//! * [`live::Live`]: a live capture, followed until paused or ended;
//! * [`demo::Demo`]: a narrated teaching demo that steps and plays.

pub mod demo;
pub mod live;
pub mod replay;
pub mod vm;

use super::keys::Action;
use super::state::State;
use std::any::Any;
use std::time::Duration;

pub trait Session: Any {
    /// Takes in new data before a frame: loader deltas, live batches, a demo's playback.
    fn tick(&mut self, st: &mut State);

    /// A session action (pause/follow, next/previous step, faster/slower). False when this
    /// session has no such action: the app then says which session has it.
    fn apply(&mut self, action: Action, st: &mut State) -> bool;

    /// After an action of the app's own moved the cursor or changed the view (a demo's
    /// narration follows the cursor).
    fn after_action(&mut self, _st: &mut State) {}

    /// How long the event loop waits for input before the next tick, after a frame that took
    /// `draw_ms` to draw.
    fn frame_wait(&self, st: &State, draw_ms: u64) -> Duration;
}
