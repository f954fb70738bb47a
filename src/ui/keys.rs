//! Input mapped to actions. Bindings are data: the help overlay and the README's key table are
//! generated from [`default_bindings`].

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Action {
    StepNext,
    StepPrev,
    PageForward,
    PageBack,
    ZoomIn,
    ZoomOut,
    First,
    Last,
    NextMm,
    PrevMm,
    ToggleHelp,
    /// Closes an overlay first; quits from the main view.
    Quit,
    /// Quits from anywhere.
    ForceQuit,
}

impl Action {
    pub fn describe(self) -> &'static str {
        match self {
            Action::StepNext => "step to the next event",
            Action::StepPrev => "step to the previous event",
            Action::PageForward => "jump a screen forward",
            Action::PageBack => "jump a screen back",
            Action::ZoomIn => "zoom in around the cursor",
            Action::ZoomOut => "zoom out around the cursor",
            Action::First => "first event",
            Action::Last => "last event",
            Action::NextMm => "next process (mm); the first entry shows all tasks",
            Action::PrevMm => "previous process (mm)",
            Action::ToggleHelp => "show or hide this help",
            Action::Quit => "close the overlay, or quit",
            Action::ForceQuit => "quit from anywhere",
        }
    }
}

/// A key as written in bindings and help: `Right`, `l`, `PgDn`, `Ctrl-c`, `Shift-Tab`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Key {
    pub code: KeyCode,
    pub mods: KeyModifiers,
}

impl Key {
    pub const fn plain(code: KeyCode) -> Key {
        Key {
            code,
            mods: KeyModifiers::NONE,
        }
    }
    pub const fn ch(c: char) -> Key {
        Key::plain(KeyCode::Char(c))
    }

    pub fn name(&self) -> String {
        let base = match self.code {
            KeyCode::Left => "←".to_string(),
            KeyCode::Right => "→".to_string(),
            KeyCode::Up => "↑".to_string(),
            KeyCode::Down => "↓".to_string(),
            KeyCode::PageUp => "PgUp".to_string(),
            KeyCode::PageDown => "PgDn".to_string(),
            KeyCode::Home => "Home".to_string(),
            KeyCode::End => "End".to_string(),
            KeyCode::Tab => "Tab".to_string(),
            KeyCode::BackTab => "Shift-Tab".to_string(),
            KeyCode::Esc => "Esc".to_string(),
            KeyCode::Enter => "Enter".to_string(),
            KeyCode::Char(' ') => "Space".to_string(),
            KeyCode::Char(c) => c.to_string(),
            KeyCode::F(n) => format!("F{n}"),
            _ => "?".to_string(),
        };
        if self.mods.contains(KeyModifiers::CONTROL) {
            format!("Ctrl-{base}")
        } else {
            base
        }
    }

    fn matches(&self, ev: &KeyEvent) -> bool {
        if self.code != ev.code {
            return false;
        }
        // Shift is implied by the character itself ('G', '?', '+').
        let mods = ev.modifiers - KeyModifiers::SHIFT;
        mods == self.mods - KeyModifiers::SHIFT
    }
}

#[derive(Clone, Debug)]
pub struct Binding {
    pub keys: Vec<Key>,
    pub action: Action,
}

pub fn default_bindings() -> Vec<Binding> {
    use KeyCode::*;
    let b = |keys: Vec<Key>, action| Binding { keys, action };
    vec![
        b(vec![Key::plain(Right), Key::ch('l')], Action::StepNext),
        b(vec![Key::plain(Left), Key::ch('h')], Action::StepPrev),
        b(vec![Key::plain(PageDown)], Action::PageForward),
        b(vec![Key::plain(PageUp)], Action::PageBack),
        b(vec![Key::ch('+'), Key::ch('=')], Action::ZoomIn),
        b(vec![Key::ch('-'), Key::ch('_')], Action::ZoomOut),
        b(vec![Key::plain(Home), Key::ch('g')], Action::First),
        b(vec![Key::plain(End), Key::ch('G')], Action::Last),
        b(vec![Key::plain(Tab)], Action::NextMm),
        b(vec![Key::plain(BackTab)], Action::PrevMm),
        b(vec![Key::ch('?')], Action::ToggleHelp),
        b(vec![Key::ch('q'), Key::plain(Esc)], Action::Quit),
        b(
            vec![Key {
                code: Char('c'),
                mods: KeyModifiers::CONTROL,
            }],
            Action::ForceQuit,
        ),
    ]
}

/// The action bound to a key press, if any.
pub fn action_for(bindings: &[Binding], ev: &KeyEvent) -> Option<Action> {
    bindings
        .iter()
        .find(|b| b.keys.iter().any(|k| k.matches(ev)))
        .map(|b| b.action)
}

/// Rows of the help overlay / README key table: (keys, what they do).
pub fn help_rows(bindings: &[Binding]) -> Vec<(String, &'static str)> {
    bindings
        .iter()
        .map(|b| {
            let keys: Vec<String> = b.keys.iter().map(Key::name).collect();
            (keys.join(" "), b.action.describe())
        })
        .collect()
}

/// The README's key table, generated from the bindings (a test keeps the README in step).
pub fn markdown_table(bindings: &[Binding]) -> String {
    let mut s = String::from("| keys | action |\n| --- | --- |\n");
    for (k, d) in help_rows(bindings) {
        let keys: Vec<String> = k.split(' ').map(|k| format!("`{k}`")).collect();
        s.push_str(&format!("| {} | {d} |\n", keys.join(" ")));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(code: KeyCode, mods: KeyModifiers) -> KeyEvent {
        KeyEvent::new(code, mods)
    }

    #[test]
    fn keys_map_to_actions() {
        let b = default_bindings();
        assert_eq!(
            action_for(&b, &key(KeyCode::Right, KeyModifiers::NONE)),
            Some(Action::StepNext)
        );
        assert_eq!(
            action_for(&b, &key(KeyCode::Char('G'), KeyModifiers::SHIFT)),
            Some(Action::Last)
        );
        assert_eq!(
            action_for(&b, &key(KeyCode::Char('c'), KeyModifiers::CONTROL)),
            Some(Action::ForceQuit)
        );
        assert_eq!(
            action_for(&b, &key(KeyCode::Char('c'), KeyModifiers::NONE)),
            None
        );
    }

    #[test]
    fn every_action_has_a_key_and_help_row() {
        let b = default_bindings();
        let rows = help_rows(&b);
        assert_eq!(rows.len(), b.len());
        assert!(rows.iter().any(|(k, _)| k == "q Esc"));
        assert!(rows.iter().any(|(k, _)| k == "Ctrl-c"));
    }
}
