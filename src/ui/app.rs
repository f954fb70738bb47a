//! The app: the state the panes draw, the session driving it, the theme and the key bindings.
//! The panes draw from it and change nothing; what each action does to it is in
//! [`super::actions`] (actions that scroll need the screen's layout, so they sit above the
//! panes).

use super::keys::{Binding, default_bindings};
use super::prompt;
use super::session::Session;
use super::session::replay::Replay;
use super::state::{LoadMsg, State};
use super::theme::Theme;
use crate::events::Trace;
use crate::timeline::Timeline;
use std::any::Any;

pub struct App {
    pub state: State,
    pub session: Box<dyn Session>,
    pub theme: Theme,
    pub bindings: Vec<Binding>,
}

impl App {
    /// A replay of a loaded capture.
    pub fn new(trace: Trace) -> App {
        let timeline = Timeline::build(&trace);
        Self::with_timeline(trace, timeline)
    }

    pub fn with_timeline(trace: Trace, timeline: Timeline) -> App {
        Self::with_session(State::new(trace, timeline), Box::new(Replay::default()))
    }

    /// A replay of a capture that is still to be read: deltas arrive through
    /// [`State::on_load`].
    pub fn loading(
        name: &str,
        format: crate::events::Format,
        progress: std::sync::Arc<crate::sources::Progress>,
    ) -> App {
        Self::with_session(
            State::loading(name, format, progress),
            Box::new(Replay::default()),
        )
    }

    pub fn with_session(state: State, session: Box<dyn Session>) -> App {
        App {
            state,
            session,
            theme: Theme::default(),
            bindings: default_bindings(),
        }
    }

    /// The session, when it is an `S`.
    pub fn session_as<S: Session>(&self) -> Option<&S> {
        (&*self.session as &dyn Any).downcast_ref()
    }

    /// The session, when it is an `S`, with the state it acts on.
    pub fn session_mut<S: Session>(&mut self) -> Option<(&mut S, &mut State)> {
        let s = (&mut *self.session as &mut dyn Any).downcast_mut()?;
        Some((s, &mut self.state))
    }

    /// The session, when it is an `S`, once the run is over.
    pub fn into_session<S: Session>(self) -> Option<S> {
        (self.session as Box<dyn Any>).downcast().ok().map(|s| *s)
    }

    /// Takes in what a loader read (see [`State::on_load`]).
    pub fn on_load(&mut self, msg: LoadMsg) {
        self.state.on_load(msg);
    }

    /// A character typed while a prompt or a marker key is pending. Returns true if consumed.
    pub fn type_char(&mut self, c: char) -> bool {
        prompt::type_char(&mut self.state, c)
    }

    pub fn backspace(&mut self) {
        prompt::backspace(&mut self.state);
    }

    pub fn cancel_mode(&mut self) {
        prompt::cancel(&mut self.state);
    }

    /// Enter in a prompt.
    pub fn submit(&mut self) {
        prompt::submit(&mut self.state);
    }
}
