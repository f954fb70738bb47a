//! The terminal UI.
//!
//! * state: [`state::State`] holds what the panes draw — the [`viewport`], the [`selection`],
//!   the [`overlays`] (with the picker's [`process_list`]), the [`models`] and what is
//!   [`derived`] from them, and the captures beside it ([`compare`]); [`app::App`] adds the [`session`] driving the run (replay, live,
//!   demo), the theme and the key bindings;
//! * drawing: [`view`] stacks the panes of [`widgets::PANES`], each a pure function of the app;
//! * acting: [`actions`] maps each action onto the app (above the panes: scrolling needs the
//!   screen's layout), with [`navigate`] and [`jump`] (the cursor's jumps), [`prompt`] and
//!   [`picker`] (keys typed into a prompt or the picker);
//! * input: [`keys`] (bindings → actions), [`input`] (keys and mouse);
//! * running: [`run`] (one entry point per kind of run), [`event_loop`], [`terminal`].
//!
//! Imports go one way (`tests/architecture.rs` checks there is no cycle): the state and the
//! sessions know nothing of the app; the widgets read the app and the state, never the actions;
//! the actions and the view use the widgets.

pub mod actions;
pub mod alarms;
pub mod app;
pub mod cid_steps;
pub mod compare;
pub mod derived;
pub mod diffs;
pub mod error;
pub mod event_loop;
pub mod export_view;
pub mod focus;
pub mod glyphs;
pub mod goto;
pub mod history;
pub mod input;
pub mod jump;
pub mod keys;
pub mod models;
pub mod navigate;
pub mod options;
pub mod overlays;
pub mod overview;
pub mod picker;
pub mod process_list;
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
pub mod words;

pub use error::UiError;
pub use options::{ModelChoice, UiOptions};
pub use run::{run_demo, run_live, run_opened, run_sim};
