//! The terminal UI.
//!
//! * state: [`state::State`] holds what the panes draw — the [`viewport`], the [`selection`],
//!   the [`overlays`], the [`models`] and what is [`derived`] from them; [`app::App`] adds the
//!   [`session`] driving the run (replay, live, demo) and maps each action onto them;
//! * input: [`keys`] (bindings → actions), [`input`] (keys and mouse), [`prompt`], [`navigate`];
//! * drawing: [`view`] stacks the panes of [`widgets::PANES`], each a pure function of the app;
//! * running: [`run`] (one entry point per kind of run), [`event_loop`], [`terminal`].

pub mod alarms;
pub mod app;
pub mod derived;
pub mod error;
pub mod event_loop;
pub mod glyphs;
pub mod input;
pub mod keys;
pub mod models;
pub mod navigate;
pub mod options;
pub mod overlays;
pub mod picker;
pub mod prompt;
pub mod run;
pub mod samples;
pub mod search;
pub mod selection;
pub mod session;
pub mod state;
pub mod svg_colors;
mod sys;
pub mod terminal;
pub mod theme;
pub mod view;
pub mod viewport;
pub mod vm;
pub mod widgets;

pub use error::UiError;
pub use options::{ModelChoice, UiOptions};
pub use run::{run_demo, run_live, run_opened, run_sim};
