//! Input mapped to actions. Bindings are data: defaults here, overridable from a JSON file
//! (`--keys PATH`, or `~/.config/cidscope/keys.json`); the help overlay and docs/keys.md's key
//! table are generated from the same table.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use std::fmt;

macro_rules! actions {
    ($($variant:ident = $name:literal : $help:literal,)*) => {
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Action { $($variant,)* }

        impl Action {
            pub const ALL: &'static [Action] = &[$(Action::$variant,)*];

            /// The name used in key-binding files (kebab-case).
            pub fn name(self) -> &'static str {
                match self { $(Action::$variant => $name,)* }
            }

            pub fn describe(self) -> &'static str {
                match self { $(Action::$variant => $help,)* }
            }

            pub fn from_name(s: &str) -> Option<Action> {
                match s { $($name => Some(Action::$variant),)* _ => None }
            }
        }
    };
}

actions! {
    StepNext = "step-next": "step to the next event",
    StepPrev = "step-prev": "step to the previous event",
    PageForward = "page-forward": "jump a screen forward",
    PageBack = "page-back": "jump a screen back",
    ZoomIn = "zoom-in": "zoom in around the cursor",
    ZoomOut = "zoom-out": "zoom out around the cursor",
    First = "first": "first event",
    Last = "last": "last event",
    GoTo = "go-to": "go to a time (+1.5ms from the start, 1639.2041 s), an event (#1234) or a share of the capture (50%)",
    ZoomRange = "zoom-range": "zoom to the A–B range (set with a and b, or a mouse drag)",
    JumpBack = "jump-back": "back to where the cursor was before the last jump",
    JumpForward = "jump-forward": "forward again after a jump back (Ctrl-i where the terminal tells it from Tab)",
    NextMm = "next-mm": "next process (mm); the first entry shows all tasks",
    PrevMm = "prev-mm": "previous process (mm)",
    PickProcess = "pick-process": "process picker: type to filter by comm or tgid, Enter picks",
    ToggleThreads = "thread-lanes": "thread lanes (a row per thread of the process) or CPU lanes",
    ScrollUp = "scroll-up": "lanes: scroll up a CPU, a thread row or to the lane sets above",
    ScrollDown = "scroll-down": "lanes: scroll down a CPU, a thread row or to the lane sets below",
    ScrollPageUp = "scroll-page-up": "lanes: scroll up a screen of CPUs or thread rows",
    ScrollPageDown = "scroll-page-down": "lanes: scroll down a screen of CPUs or thread rows",
    PaneUp = "pane-up": "scroll the cursor pane (or the legend, accounting, help) up",
    PaneDown = "pane-down": "scroll the cursor pane (or the legend, accounting, help) down",
    Search = "search": "search by tid, comm or CID (tid:N, tgid:N, cid:N, comm:TEXT)",
    SearchNext = "search-next": "next search match",
    SearchPrev = "search-prev": "previous search match",
    NextCidChange = "next-cid-change": "next CID change (a task reports a new CID)",
    PrevCidChange = "prev-cid-change": "previous CID change",
    NextTick = "next-tick": "next tick-triggered compaction (model)",
    PrevTick = "prev-tick": "previous tick-triggered compaction (model)",
    NextResume = "next-resume": "next resume-triggered compaction (model)",
    PrevResume = "prev-resume": "previous resume-triggered compaction (model)",
    NextTrigger = "next-trigger": "next compaction start, by tick or resume (model)",
    PrevTrigger = "prev-trigger": "previous compaction start (model)",
    NextScan = "next-scan": "next start of a complete scan (model)",
    PrevScan = "prev-scan": "previous start of a complete scan (model)",
    NextAlarm = "next-alarm": "next alarm (duplicate CID, CID at or above its bound)",
    PrevAlarm = "prev-alarm": "previous alarm",
    NextLost = "next-lost": "next lost-event gap",
    PrevLost = "prev-lost": "previous lost-event gap",
    NextDiff = "next-diff": "next place the first two lane sets disagree (≠ in the diff row)",
    PrevDiff = "prev-diff": "previous place the first two lane sets disagree",
    SetMark = "set-mark": "set a named marker at the cursor (then a letter)",
    JumpMark = "jump-mark": "jump to a named marker (then its letter)",
    SetA = "set-a": "put range marker A at the cursor",
    SetB = "set-b": "put range marker B at the cursor",
    ClearSelection = "clear-selection": "clear the A/B range",
    FilterCpus = "filter-cpus": "show only some CPUs (e.g. 0-3,7; empty for all)",
    ToggleAccounting = "accounting": "rseq accounting pane: updates, rate, fixups per task",
    ToggleOverview = "overview": "dense overview: a half-cell per CPU and column over the whole capture; Enter zooms into its region",
    ToggleCidmask = "cidmask": "cidmask strip: a row per CID bit of the process over time",
    CidSteps = "cid-steps": "the kernel's steps of the cursor task's CID change, the cidmask before and after (again: next step)",
    CycleTheme = "theme": "switch to the next built-in theme",
    ExportSvg = "export-svg": "export the view (window and process) to an SVG file in the current directory",
    TogglePause = "pause": "live: pause or follow the newest data; demo: play or stop",
    NextStep = "next-step": "demo: next narrated moment",
    PrevStep = "prev-step": "demo: previous narrated moment",
    Faster = "faster": "demo: play faster",
    Slower = "slower": "demo: play slower",
    ToggleLegend = "legend": "show or hide the legend: every glyph, mark and colour",
    ToggleHelp = "help": "show or hide this help",
    Close = "close": "close what is open (help, steps, legend, accounting, overview, picker, prompt); never quits",
    Quit = "quit": "close what is open, as Esc does; with nothing open, quit",
    ForceQuit = "force-quit": "quit from anywhere",
    Suspend = "suspend": "suspend to the shell; fg resumes",
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
    pub const fn ctrl(c: char) -> Key {
        Key {
            code: KeyCode::Char(c),
            mods: KeyModifiers::CONTROL,
        }
    }
    /// A non-character key with Shift (`Shift-↓`); characters carry Shift themselves (`G`).
    pub const fn shift(code: KeyCode) -> Key {
        Key {
            code,
            mods: KeyModifiers::SHIFT,
        }
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
            KeyCode::Backspace => "Backspace".to_string(),
            KeyCode::Char(' ') => "Space".to_string(),
            KeyCode::Char(c) => c.to_string(),
            KeyCode::F(n) => format!("F{n}"),
            _ => "?".to_string(),
        };
        let base = if self.mods.contains(KeyModifiers::SHIFT) && Self::shift_counts(self.code) {
            format!("Shift-{base}")
        } else {
            base
        };
        if self.mods.contains(KeyModifiers::CONTROL) {
            format!("Ctrl-{base}")
        } else {
            base
        }
    }

    /// Parses a key name as written in a bindings file: `Right`, `l`, `Ctrl-c`, `PgDn`, `F1`.
    pub fn parse(s: &str) -> Option<Key> {
        if let Some(rest) = s.strip_prefix("Ctrl-").or_else(|| s.strip_prefix("ctrl-")) {
            let k = Key::parse(rest)?;
            return Some(Key {
                code: k.code,
                mods: KeyModifiers::CONTROL | k.mods,
            });
        }
        if s != "Shift-Tab"
            && let Some(rest) = s
                .strip_prefix("Shift-")
                .or_else(|| s.strip_prefix("shift-"))
        {
            let k = Key::parse(rest)?;
            return Self::shift_counts(k.code).then_some(Key {
                code: k.code,
                mods: KeyModifiers::SHIFT | k.mods,
            });
        }
        let code = match s {
            "Left" | "←" => KeyCode::Left,
            "Right" | "→" => KeyCode::Right,
            "Up" | "↑" => KeyCode::Up,
            "Down" | "↓" => KeyCode::Down,
            "PgUp" | "PageUp" => KeyCode::PageUp,
            "PgDn" | "PageDown" => KeyCode::PageDown,
            "Home" => KeyCode::Home,
            "End" => KeyCode::End,
            "Tab" => KeyCode::Tab,
            "Shift-Tab" | "BackTab" => KeyCode::BackTab,
            "Esc" | "Escape" => KeyCode::Esc,
            "Enter" => KeyCode::Enter,
            "Backspace" => KeyCode::Backspace,
            "Space" => KeyCode::Char(' '),
            _ => {
                let mut chars = s.chars();
                match (chars.next(), chars.next()) {
                    (Some(c), None) => KeyCode::Char(c),
                    (Some('F'), Some(_)) => KeyCode::F(s[1..].parse().ok()?),
                    _ => return None,
                }
            }
        };
        Some(Key::plain(code))
    }

    /// Whether Shift makes a different key of `code`: not for characters, where it is implied
    /// by the character itself ('G', '?', '+'), nor for Shift-Tab, a key code of its own.
    fn shift_counts(code: KeyCode) -> bool {
        !matches!(code, KeyCode::Char(_) | KeyCode::BackTab)
    }

    fn matches(&self, ev: &KeyEvent) -> bool {
        if self.code != ev.code {
            return false;
        }
        let relevant = |m: KeyModifiers| {
            let m = m & (KeyModifiers::CONTROL | KeyModifiers::SHIFT | KeyModifiers::ALT);
            if Self::shift_counts(self.code) {
                m
            } else {
                m - KeyModifiers::SHIFT
            }
        };
        relevant(ev.modifiers) == relevant(self.mods)
    }
}

#[derive(Clone, Debug)]
pub struct Binding {
    pub keys: Vec<Key>,
    pub action: Action,
}

pub fn default_bindings() -> Vec<Binding> {
    use Action as A;
    use KeyCode::*;
    let b = |keys: Vec<Key>, action| Binding { keys, action };
    let c = Key::ch;
    vec![
        b(vec![Key::plain(Right), c('l')], A::StepNext),
        b(vec![Key::plain(Left), c('h')], A::StepPrev),
        b(vec![Key::plain(PageDown)], A::PageForward),
        b(vec![Key::plain(PageUp)], A::PageBack),
        b(vec![c('+'), c('=')], A::ZoomIn),
        b(vec![c('-'), c('_')], A::ZoomOut),
        b(vec![Key::plain(Home), c('g')], A::First),
        b(vec![Key::plain(End), c('G')], A::Last),
        b(vec![c(':')], A::GoTo),
        b(vec![c('Z')], A::ZoomRange),
        b(vec![Key::ctrl('o')], A::JumpBack),
        b(vec![Key::ctrl('i'), Key::ctrl('n')], A::JumpForward),
        b(vec![Key::plain(Tab)], A::NextMm),
        b(vec![Key::plain(BackTab)], A::PrevMm),
        b(vec![c('P'), Key::plain(Enter)], A::PickProcess),
        b(vec![c('v')], A::ToggleThreads),
        b(vec![Key::plain(Up)], A::ScrollUp),
        b(vec![Key::plain(Down)], A::ScrollDown),
        b(vec![Key::shift(Up)], A::ScrollPageUp),
        b(vec![Key::shift(Down)], A::ScrollPageDown),
        b(vec![c('K')], A::PaneUp),
        b(vec![c('J')], A::PaneDown),
        b(vec![c('/')], A::Search),
        b(vec![c('n')], A::SearchNext),
        b(vec![c('N')], A::SearchPrev),
        b(vec![c('c')], A::NextCidChange),
        b(vec![c('C')], A::PrevCidChange),
        b(vec![c('t')], A::NextTick),
        b(vec![c('T')], A::PrevTick),
        b(vec![c('r')], A::NextResume),
        b(vec![c('R')], A::PrevResume),
        b(vec![c('.')], A::NextTrigger),
        b(vec![c(',')], A::PrevTrigger),
        b(vec![c('s')], A::NextScan),
        b(vec![c('S')], A::PrevScan),
        b(vec![c('x')], A::NextAlarm),
        b(vec![c('X')], A::PrevAlarm),
        b(vec![c('o')], A::NextLost),
        b(vec![c('O')], A::PrevLost),
        b(vec![c('d')], A::NextDiff),
        b(vec![c('D')], A::PrevDiff),
        b(vec![c('m')], A::SetMark),
        b(vec![c('\'')], A::JumpMark),
        b(vec![c('a')], A::SetA),
        b(vec![c('b')], A::SetB),
        b(vec![c('u')], A::ClearSelection),
        b(vec![c('f')], A::FilterCpus),
        b(vec![c('p')], A::ToggleAccounting),
        b(vec![c('w')], A::ToggleOverview),
        b(vec![c('M')], A::ToggleCidmask),
        b(vec![c('e')], A::CidSteps),
        b(vec![Key::ctrl('t')], A::CycleTheme),
        b(vec![c('E')], A::ExportSvg),
        b(vec![Key::ch(' ')], A::TogglePause),
        b(vec![c(']')], A::NextStep),
        b(vec![c('[')], A::PrevStep),
        b(vec![c('>')], A::Faster),
        b(vec![c('<')], A::Slower),
        b(vec![c('L')], A::ToggleLegend),
        b(vec![c('?')], A::ToggleHelp),
        b(vec![Key::plain(Esc)], A::Close),
        b(vec![c('q')], A::Quit),
        b(vec![Key::ctrl('c')], A::ForceQuit),
        b(vec![Key::ctrl('z')], A::Suspend),
    ]
}

/// A bindings file that could not be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeysError {
    pub file: String,
    pub key: String,
    pub message: String,
}

impl fmt::Display for KeysError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "keys {}: \"{}\": {}", self.file, self.key, self.message)
    }
}

impl std::error::Error for KeysError {}

/// Applies a bindings file: `{"action-name": ["key", ...], ...}` replaces the keys of each
/// named action; actions it does not name keep their defaults.
pub fn apply_overrides(bindings: &mut [Binding], file: &str, text: &str) -> Result<(), KeysError> {
    let err = |key: &str, message: String| KeysError {
        file: file.to_string(),
        key: key.to_string(),
        message,
    };
    let v: serde_json::Value =
        serde_json::from_str(text).map_err(|e| err("", format!("not valid JSON: {e}")))?;
    let obj = v
        .as_object()
        .ok_or_else(|| err("", "expected an object of action: [keys]".into()))?;
    for (name, keys) in obj {
        let action = Action::from_name(name).ok_or_else(|| {
            let all: Vec<&str> = Action::ALL.iter().map(|a| a.name()).collect();
            err(
                name,
                format!("unknown action; expected one of {}", all.join(", ")),
            )
        })?;
        let list = keys
            .as_array()
            .ok_or_else(|| err(name, "expected an array of key names".into()))?;
        let mut parsed = Vec::new();
        for k in list {
            let s = k
                .as_str()
                .ok_or_else(|| err(name, format!("expected a key name, found {k}")))?;
            parsed.push(Key::parse(s).ok_or_else(|| {
                err(
                    name,
                    format!(
                        "unknown key \"{s}\"; expected a character, Left, PgDn, Ctrl-x, F1, ..."
                    ),
                )
            })?);
        }
        if let Some(b) = bindings.iter_mut().find(|b| b.action == action) {
            b.keys = parsed;
        }
    }
    // One key, one action: the first binding would win and the other action lose its key
    // without a word (`q` bound to step-next stops quitting).
    for (i, b) in bindings.iter().enumerate() {
        for k in &b.keys {
            if let Some(other) = bindings[i + 1..].iter().find(|o| o.keys.contains(k)) {
                return Err(err(
                    &k.name(),
                    format!(
                        "bound to two actions, {} and {}; bind it to one (rebind the other in the same file)",
                        b.action.name(),
                        other.action.name()
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// Default bindings with the user's file applied: `path` if given, else
/// `$XDG_CONFIG_HOME/cidscope/keys.json` or `~/.config/cidscope/keys.json` when it exists.
pub fn load_bindings(path: Option<&str>) -> Result<Vec<Binding>, KeysError> {
    let mut b = default_bindings();
    let file = match path {
        Some(p) => Some(std::path::PathBuf::from(p)),
        None => std::env::var_os("XDG_CONFIG_HOME")
            .map(std::path::PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| std::path::Path::new(&h).join(".config")))
            .map(|d| d.join("cidscope/keys.json"))
            .filter(|p| p.exists()),
    };
    if let Some(f) = file {
        let name = crate::sources::shown_path(&f);
        let text = std::fs::read_to_string(&f).map_err(|e| KeysError {
            file: name.clone(),
            key: String::new(),
            message: format!("cannot read: {e}"),
        })?;
        apply_overrides(&mut b, &name, &text)?;
    }
    Ok(b)
}

/// The action bound to a key press, if any.
pub fn action_for(bindings: &[Binding], ev: &KeyEvent) -> Option<Action> {
    bindings
        .iter()
        .find(|b| b.keys.iter().any(|k| k.matches(ev)))
        .map(|b| b.action)
}

/// The keys bound to `action`, as the help names them (`↓` or `j/k`), for hints on screen.
pub fn keys_for(bindings: &[Binding], action: Action) -> String {
    let names: Vec<String> = bindings
        .iter()
        .filter(|b| b.action == action)
        .flat_map(|b| b.keys.iter().map(Key::name))
        .collect();
    if names.is_empty() {
        format!("({} is unbound)", action.name())
    } else {
        names.join("/")
    }
}

/// Rows of the help overlay / docs/keys.md's key table: (keys, what they do).
pub fn help_rows(bindings: &[Binding]) -> Vec<(String, &'static str)> {
    bindings
        .iter()
        .map(|b| {
            let keys: Vec<String> = b.keys.iter().map(Key::name).collect();
            (keys.join(" "), b.action.describe())
        })
        .collect()
}

/// docs/keys.md's key table, generated from the bindings (tests/readme.rs keeps the page in
/// step).
pub fn markdown_table(bindings: &[Binding]) -> String {
    let mut s = String::from("| keys | action | name in keys.json |\n| --- | --- | --- |\n");
    for b in bindings {
        let keys: Vec<String> = b
            .keys
            .iter()
            .map(|k| match k.name().as_str() {
                "`" => "`` ` ``".to_string(),
                "|" => "`\\|`".to_string(),
                n => format!("`{n}`"),
            })
            .collect();
        s.push_str(&format!(
            "| {} | {} | `{}` |\n",
            keys.join(" "),
            b.action.describe(),
            b.action.name()
        ));
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
            Some(Action::NextCidChange)
        );
        assert_eq!(
            action_for(&b, &key(KeyCode::Char('k'), KeyModifiers::NONE)),
            None
        );
        // Shift makes another key of an arrow, not of a character or of Shift-Tab
        assert_eq!(
            action_for(&b, &key(KeyCode::Down, KeyModifiers::NONE)),
            Some(Action::ScrollDown)
        );
        assert_eq!(
            action_for(&b, &key(KeyCode::Down, KeyModifiers::SHIFT)),
            Some(Action::ScrollPageDown)
        );
        assert_eq!(
            action_for(&b, &key(KeyCode::BackTab, KeyModifiers::SHIFT)),
            Some(Action::PrevMm)
        );
        assert_eq!(
            action_for(&b, &key(KeyCode::Char('J'), KeyModifiers::SHIFT)),
            Some(Action::PaneDown)
        );
        assert_eq!(
            action_for(&b, &key(KeyCode::Esc, KeyModifiers::NONE)),
            Some(Action::Close)
        );
        assert_eq!(Key::parse("Shift-↓"), Some(Key::shift(KeyCode::Down)));
        assert_eq!(Key::shift(KeyCode::Down).name(), "Shift-↓");
        assert_eq!(Key::parse("Shift-x"), None);
    }

    #[test]
    fn every_action_has_a_key_name_and_help_row() {
        let b = default_bindings();
        for a in Action::ALL {
            assert!(b.iter().any(|x| x.action == *a), "{a:?} unbound");
            assert_eq!(Action::from_name(a.name()), Some(*a));
        }
        let rows = help_rows(&b);
        assert_eq!(rows.len(), b.len());
        assert!(rows.iter().any(|(k, _)| k == "q"));
        assert!(rows.iter().any(|(k, _)| k == "Esc"));
        // no key is bound twice
        let mut seen = Vec::new();
        for x in &b {
            for k in &x.keys {
                assert!(!seen.contains(k), "{} bound twice", k.name());
                seen.push(*k);
            }
        }
    }

    #[test]
    fn key_names_round_trip() {
        for x in default_bindings() {
            for k in x.keys {
                assert_eq!(Key::parse(&k.name()), Some(k), "{}", k.name());
            }
        }
        assert_eq!(Key::parse("F5"), Some(Key::plain(KeyCode::F(5))));
        assert_eq!(Key::parse("Wat"), None);
    }

    #[test]
    fn bindings_file_overrides_named_actions_only() {
        let mut b = default_bindings();
        apply_overrides(&mut b, "k.json", r#"{"step-next": ["j", "Ctrl-y"]}"#).unwrap();
        assert_eq!(
            action_for(&b, &key(KeyCode::Char('j'), KeyModifiers::NONE)),
            Some(Action::StepNext)
        );
        assert_eq!(
            action_for(&b, &key(KeyCode::Right, KeyModifiers::NONE)),
            None
        );
        assert_eq!(
            action_for(&b, &key(KeyCode::Left, KeyModifiers::NONE)),
            Some(Action::StepPrev)
        );
        let e = apply_overrides(&mut b, "k.json", r#"{"step-nxt": ["j"]}"#).unwrap_err();
        assert_eq!(e.key, "step-nxt");
        let e = apply_overrides(&mut b, "k.json", r#"{"first": ["Hyper-x"]}"#).unwrap_err();
        assert!(e.to_string().contains("unknown key \"Hyper-x\""), "{e}");
    }

    /// A key bound to two actions is refused, naming the key and both actions: the first
    /// would win, and the other would silently lose it (`q` would stop quitting).
    #[test]
    fn a_key_bound_to_two_actions_is_refused() {
        let mut b = default_bindings();
        let e = apply_overrides(&mut b, "k.json", r#"{"step-next": ["q"]}"#).unwrap_err();
        assert_eq!(e.key, "q");
        let m = e.to_string();
        assert!(m.contains("step-next") && m.contains("quit"), "{m}");
        assert!(m.starts_with("keys k.json: \"q\""), "{m}");
        // two actions of the file itself
        let mut b = default_bindings();
        let e =
            apply_overrides(&mut b, "k.json", r#"{"first": ["z"], "last": ["z"]}"#).unwrap_err();
        assert!(e.to_string().contains("first and last"), "{e}");
        // a swap within the file is fine: each key has one action afterwards
        let mut b = default_bindings();
        apply_overrides(&mut b, "k.json", r#"{"quit": ["x"], "next-alarm": ["q"]}"#).unwrap();
        assert_eq!(
            action_for(&b, &key(KeyCode::Char('q'), KeyModifiers::NONE)),
            Some(Action::NextAlarm)
        );
    }
}
