//! Colours by meaning, not by widget. Themes are JSON files (`themes/*.json`, built into the
//! binary, or any path); a theme may set only some slots, the rest come from `default`.
//! `NO_COLOR` (https://no-color.org) turns colour off: meaning is then carried by reverse video,
//! dimming and the characters themselves.

use ratatui::style::{Color, Modifier, Style};
use std::fmt;

/// The themes shipped in `themes/`, built into the binary so `--theme NAME` works anywhere.
pub const BUILTIN: &[(&str, &str)] = &[
    ("default", include_str!("../../themes/default.json")),
    ("ansi16", include_str!("../../themes/ansi16.json")),
    ("dark", include_str!("../../themes/dark.json")),
    ("light", include_str!("../../themes/light.json")),
    (
        "high-contrast",
        include_str!("../../themes/high-contrast.json"),
    ),
    ("colorblind", include_str!("../../themes/colorblind.json")),
];

#[derive(Clone, Debug, PartialEq)]
pub struct Theme {
    pub name: String,
    /// Background of a slot holding CID n is `cid_palette[n % len]`; where the colours repeat
    /// (n >= len) a pattern tells the CIDs apart ([`Theme::cid_pattern`]).
    pub cid_palette: Vec<Color>,
    /// The models' weight curves (and their names), the k-th model in `curve_palette[k % len]`.
    pub curve_palette: Vec<Color>,
    /// Text drawn on a CID colour.
    pub cid_text: Color,
    /// A CPU that runs nothing of the selected mm (idle, other processes).
    pub free_slot: Color,
    /// A CID shown before the task confirmed it (stale from its previous run), or a Lazy slot.
    pub lazy_slot: Color,
    pub transit_slot: Color,
    pub tick_marker: Color,
    pub resume_marker: Color,
    pub scan_batch: Color,
    pub alarm: Color,
    pub lost: Color,
    pub text: Color,
    pub dim: Color,
    pub background: Color,
    pub cursor: Color,
    pub weight: Color,
    pub bound: Color,
    pub title: Color,
    /// Background of a selected time range.
    pub selection: Color,
    /// Your named markers and the A/B range ends on the ruler.
    pub marker: Color,
    /// No colour at all (NO_COLOR): styles use modifiers only.
    pub monochrome: bool,
}

/// The colour slots a theme file may set, with what each colours.
pub const SLOTS: &[(&str, &str)] = &[
    ("cid_text", "text drawn on a CID colour"),
    ("free_slot", "a CPU running nothing of the selected process"),
    (
        "lazy_slot",
        "a CID not yet confirmed, or a Lazy slot in a model",
    ),
    ("transit_slot", "a TRANSIT slot (owner-mode)"),
    ("tick_marker", "compaction triggered by the tick"),
    ("resume_marker", "compaction triggered on return to user"),
    ("scan_batch", "CPUs of the current scan batch"),
    (
        "alarm",
        "invariant breaks: duplicate CID, CID at or above its bound",
    ),
    ("lost", "lost-event gaps"),
    ("text", "ordinary text"),
    ("dim", "secondary text"),
    ("background", "the background"),
    ("cursor", "the cursor"),
    ("weight", "the cidmask weight graph"),
    ("bound", "the CPU-count bound"),
    ("title", "titles"),
    ("selection", "a selected time range"),
    ("marker", "your named markers and the A/B range ends"),
];

/// Slots that are not CIDs yet share cells with them (lanes, ruler, weight): a theme must never
/// give one of them a colour of `cid_palette`, or a mark would read as a CID (a test checks
/// every built-in theme). `text`, `dim` and `background` are the page itself, and `cid_text`
/// is drawn on the CID colours.
pub const NON_CID_SLOTS: &[&str] = &[
    "free_slot",
    "lazy_slot",
    "transit_slot",
    "tick_marker",
    "resume_marker",
    "scan_batch",
    "alarm",
    "lost",
    "cursor",
    "weight",
    "bound",
    "title",
    "selection",
    "marker",
];

/// A theme that could not be used: which file, which key, what was wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThemeError {
    pub file: String,
    pub key: Option<String>,
    pub message: String,
}

impl fmt::Display for ThemeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let file = crate::sources::shown_name(&self.file);
        match &self.key {
            Some(k) => write!(f, "theme {file}: key \"{k}\": {}", self.message),
            None => write!(f, "theme {file}: {}", self.message),
        }
    }
}

impl std::error::Error for ThemeError {}

impl Default for Theme {
    fn default() -> Self {
        // The built-in default file is part of the binary; a test checks that it parses.
        Theme::from_json("default", BUILTIN[0].1, None).unwrap_or_else(|_| Theme::fallback())
    }
}

impl Theme {
    /// Plain ANSI colours, used only if the built-in default file were broken.
    fn fallback() -> Theme {
        Theme {
            name: "fallback".into(),
            cid_palette: vec![Color::Blue, Color::Green, Color::Yellow, Color::Magenta],
            curve_palette: vec![Color::White, Color::LightRed],
            cid_text: Color::Black,
            free_slot: Color::DarkGray,
            lazy_slot: Color::Gray,
            transit_slot: Color::LightYellow,
            tick_marker: Color::LightCyan,
            resume_marker: Color::LightMagenta,
            scan_batch: Color::LightGreen,
            alarm: Color::LightRed,
            lost: Color::Red,
            text: Color::Reset,
            dim: Color::DarkGray,
            background: Color::Reset,
            cursor: Color::White,
            weight: Color::Cyan,
            bound: Color::LightRed,
            title: Color::LightCyan,
            selection: Color::Gray,
            marker: Color::Gray,
            monochrome: false,
        }
    }

    /// The NO_COLOR theme.
    pub fn monochrome() -> Theme {
        let mut t = Theme::fallback();
        t.name = "no-color".into();
        t.cid_palette = vec![Color::Reset];
        t.curve_palette = vec![Color::Reset];
        for c in [
            &mut t.cid_text,
            &mut t.free_slot,
            &mut t.lazy_slot,
            &mut t.transit_slot,
            &mut t.tick_marker,
            &mut t.resume_marker,
            &mut t.scan_batch,
            &mut t.alarm,
            &mut t.lost,
            &mut t.text,
            &mut t.dim,
            &mut t.background,
            &mut t.cursor,
            &mut t.weight,
            &mut t.bound,
            &mut t.title,
            &mut t.selection,
            &mut t.marker,
        ] {
            *c = Color::Reset;
        }
        t.monochrome = true;
        t
    }

    /// The colour of a slot named as in theme files (not `cid_palette`).
    pub fn slot(&self, key: &str) -> Option<Color> {
        self.clone().slot_mut(key).map(|c| *c)
    }

    fn slot_mut(&mut self, key: &str) -> Option<&mut Color> {
        Some(match key {
            "cid_text" => &mut self.cid_text,
            "free_slot" => &mut self.free_slot,
            "lazy_slot" => &mut self.lazy_slot,
            "transit_slot" => &mut self.transit_slot,
            "tick_marker" => &mut self.tick_marker,
            "resume_marker" => &mut self.resume_marker,
            "scan_batch" => &mut self.scan_batch,
            "alarm" => &mut self.alarm,
            "lost" => &mut self.lost,
            "text" => &mut self.text,
            "dim" => &mut self.dim,
            "background" => &mut self.background,
            "cursor" => &mut self.cursor,
            "weight" => &mut self.weight,
            "bound" => &mut self.bound,
            "title" => &mut self.title,
            "selection" => &mut self.selection,
            "marker" => &mut self.marker,
            _ => return None,
        })
    }

    /// Parses a theme file; slots it does not set are taken from `base` (or the fallback).
    pub fn from_json(file: &str, text: &str, base: Option<&Theme>) -> Result<Theme, ThemeError> {
        let err = |key: Option<&str>, message: String| ThemeError {
            file: file.to_string(),
            key: key.map(str::to_string),
            message,
        };
        let v: serde_json::Value =
            serde_json::from_str(text).map_err(|e| err(None, format!("not valid JSON: {e}")))?;
        let obj = v
            .as_object()
            .ok_or_else(|| err(None, "expected a JSON object of colour slots".into()))?;
        let mut t = base.cloned().unwrap_or_else(Theme::fallback);
        t.name = file.to_string();
        for (key, val) in obj {
            match key.as_str() {
                "name" | "description" => {
                    let s = val
                        .as_str()
                        .ok_or_else(|| err(Some(key), "expected a string".into()))?;
                    if key == "name" {
                        t.name = s.to_string();
                    }
                }
                "cid_palette" | "curve_palette" => {
                    let arr = val
                        .as_array()
                        .ok_or_else(|| err(Some(key), "expected an array of colours".into()))?;
                    if arr.is_empty() {
                        return Err(err(Some(key), "expected at least one colour".into()));
                    }
                    let colors = arr
                        .iter()
                        .map(|c| parse_color(c).map_err(|m| err(Some(key), m)))
                        .collect::<Result<_, _>>()?;
                    if key == "cid_palette" {
                        t.cid_palette = colors;
                    } else {
                        t.curve_palette = colors;
                    }
                }
                _ => {
                    let slot = t.slot_mut(key).ok_or_else(|| {
                        let known: Vec<&str> = SLOTS.iter().map(|s| s.0).collect();
                        err(
                            Some(key),
                            format!(
                                "unknown slot; expected one of name, description, cid_palette, curve_palette, {}",
                                known.join(", ")
                            ),
                        )
                    })?;
                    *slot = parse_color(val).map_err(|m| err(Some(key), m))?;
                }
            }
        }
        Ok(t)
    }

    /// Resolves `--theme NAME|PATH` (a built-in name, or a file path).
    pub fn load(spec: &str) -> Result<Theme, ThemeError> {
        let base = Theme::default();
        if let Some((name, text)) = BUILTIN.iter().find(|(n, _)| *n == spec) {
            return Theme::from_json(name, text, Some(&base));
        }
        let text = std::fs::read_to_string(spec).map_err(|e| ThemeError {
            file: spec.to_string(),
            key: None,
            message: format!(
                "cannot read ({e}); expected a file or one of the built-in themes: {}",
                BUILTIN.iter().map(|b| b.0).collect::<Vec<_>>().join(", ")
            ),
        })?;
        Theme::from_json(spec, &text, Some(&base))
    }

    /// The theme to use: `--theme` if given, else monochrome under NO_COLOR, else `ansi16`
    /// on a terminal that names 16 colours or fewer in `TERM` (the Linux console, a vt100),
    /// else default.
    pub fn resolve(spec: Option<&str>, no_color: bool) -> Result<Theme, ThemeError> {
        match spec {
            Some(s) => Theme::load(s),
            None if no_color => Ok(Theme::monochrome()),
            None if few_colors(std::env::var("TERM").ok().as_deref()) => Theme::load("ansi16"),
            None => Ok(Theme::default()),
        }
    }

    pub fn cid_color(&self, cid: i32) -> Color {
        if self.cid_palette.is_empty() {
            return self.text;
        }
        self.cid_palette[cid.unsigned_abs() as usize % self.cid_palette.len()]
    }

    /// The pattern telling apart CIDs whose colours repeat: none for the first round of the
    /// palette, then underlined, then bold underlined, then italic underlined.
    pub fn cid_pattern(&self, cid: i32) -> Modifier {
        let round = cid.unsigned_abs() as usize / self.cid_palette.len().max(1);
        match round % 4 {
            0 => Modifier::empty(),
            1 => Modifier::UNDERLINED,
            2 => Modifier::UNDERLINED | Modifier::BOLD,
            _ => Modifier::UNDERLINED | Modifier::ITALIC,
        }
    }

    /// The colour of the k-th model's curve.
    pub fn curve_color(&self, k: usize) -> Color {
        if self.curve_palette.is_empty() {
            return self.text;
        }
        self.curve_palette[k % self.curve_palette.len()]
    }

    /// The next built-in theme after this one (the run-time theme switch), from the first.
    pub fn next_builtin(&self) -> Theme {
        let at = BUILTIN.iter().position(|(n, _)| *n == self.name);
        let next = at.map_or(0, |i| (i + 1) % BUILTIN.len());
        Theme::load(BUILTIN[next].0).unwrap_or_default()
    }

    pub fn text(&self) -> Style {
        Style::default().fg(self.text).bg(self.background)
    }

    pub fn dim(&self) -> Style {
        if self.monochrome {
            return Style::default().add_modifier(Modifier::DIM);
        }
        Style::default().fg(self.dim)
    }

    /// A marker or highlight in colour `c` (bold under NO_COLOR, where colour is gone).
    pub fn mark(&self, c: Color) -> Style {
        if self.monochrome {
            return Style::default().add_modifier(Modifier::BOLD);
        }
        Style::default().fg(c)
    }
}

/// Whether `TERM` names a terminal of 16 colours or fewer.
pub fn few_colors(term: Option<&str>) -> bool {
    let Some(t) = term else {
        return false;
    };
    if t.contains("256") || t.contains("truecolor") || t.contains("direct") {
        return false;
    }
    matches!(
        t,
        "linux" | "ansi" | "cons25" | "dumb" | "xterm-color" | "xterm-16color"
    ) || t.starts_with("vt")
        || t.ends_with("-16color")
        || t.ends_with("-8color")
}

fn parse_color(v: &serde_json::Value) -> Result<Color, String> {
    let s = v
        .as_str()
        .ok_or_else(|| format!("expected a colour string, found {v}"))?;
    s.parse::<Color>().map_err(|_| {
        format!("expected a colour name (red, lightblue, ...), #rrggbb or 0-255, found \"{s}\"")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_themes_parse_and_set_every_slot() {
        let fallback = Theme::fallback();
        for (name, text) in BUILTIN {
            let t = Theme::from_json(name, text, None).unwrap();
            assert_eq!(&t.name, name);
            // every slot is named in every shipped theme
            let v: serde_json::Value = serde_json::from_str(text).unwrap();
            for (slot, _) in SLOTS {
                assert!(v.get(slot).is_some(), "{name} lacks {slot}");
            }
            assert!(!t.cid_palette.is_empty());
            let _ = fallback.clone();
        }
        assert_eq!(Theme::default().name, "default");
        assert_eq!(Theme::default().alarm, Color::Indexed(196));
    }

    /// No slot that is not a CID may take a colour of the CID palette, in any built-in theme
    /// (nor in the fallback), and no model curve either: a selection, a lost-event mark, an
    /// alarm or a curve would read as a CID. The marks of the ruler, the cursor and the curves
    /// each have a colour of their own (`t` is never `r`, `S` never the cursor, a lost-event
    /// mark never the bound); only `ansi16`, with 8 colours left after its CIDs, lets some marks
    /// share and keeps those pairs apart.
    #[test]
    fn no_slot_reuses_a_cid_colour_and_marks_and_curves_differ() {
        let mut themes: Vec<Theme> = BUILTIN
            .iter()
            .map(|(n, _)| Theme::load(n).expect("builtin"))
            .collect();
        themes.push(Theme::fallback());
        themes.push(Theme::default());
        for t in &themes {
            for key in NON_CID_SLOTS {
                let c = t.slot(key).expect("a slot");
                assert!(
                    !t.cid_palette.contains(&c),
                    "theme {}: {key} = {c:?} is a CID colour",
                    t.name
                );
            }
            for c in &t.curve_palette {
                assert!(!t.cid_palette.contains(c), "theme {}: curve {c:?}", t.name);
            }
            let named = |k: &str| (k.to_string(), t.slot(k).expect("slot"));
            let must_differ: Vec<[&str; 2]> = vec![
                ["tick_marker", "resume_marker"],
                ["scan_batch", "cursor"],
                ["lost", "bound"],
            ];
            for [a, b] in must_differ {
                assert_ne!(named(a).1, named(b).1, "theme {}: {a} = {b}", t.name);
            }
            for c in &t.curve_palette {
                for k in ["tick_marker", "resume_marker"] {
                    assert_ne!(*c, named(k).1, "theme {}: a curve is {k}", t.name);
                }
            }
            if t.name == "ansi16" || t.name == "fallback" {
                continue;
            }
            // every mark of the ruler, the cursor, the bound and each curve: one colour each
            let mut marks: Vec<(String, Color)> = [
                "tick_marker",
                "resume_marker",
                "scan_batch",
                "transit_slot",
                "alarm",
                "lost",
                "cursor",
                "marker",
            ]
            .iter()
            .map(|k| named(k))
            .collect();
            marks.extend(
                t.curve_palette
                    .iter()
                    .enumerate()
                    .map(|(k, &c)| (format!("curve {k}"), c)),
            );
            marks.push(named("weight"));
            for (i, (a, ca)) in marks.iter().enumerate() {
                for (b, cb) in &marks[i + 1..] {
                    assert_ne!(ca, cb, "theme {}: {a} and {b} share a colour", t.name);
                }
            }
            assert_ne!(t.bound, t.lost, "theme {}", t.name);
        }
        // the list is every slot but the page's own and the text drawn on CIDs
        for (key, _) in SLOTS {
            assert!(
                NON_CID_SLOTS.contains(key)
                    || ["cid_text", "text", "dim", "background"].contains(key),
                "{key}"
            );
        }
    }

    /// At least 16 CIDs look different in every built-in theme: by colour, and where the
    /// palette repeats by a pattern (the style of the CID's cells differs).
    #[test]
    fn sixteen_cids_are_told_apart() {
        use crate::ui::glyphs::CID;
        for (name, _) in BUILTIN {
            let t = Theme::load(name).expect("builtin");
            let styles: Vec<Style> = (0..24).map(|c| CID.style(&t, c)).collect();
            for a in 0..24 {
                for b in a + 1..24 {
                    assert_ne!(styles[a], styles[b], "theme {name}: CIDs {a} and {b}");
                }
            }
        }
        assert!(few_colors(Some("linux")) && few_colors(Some("vt100")));
        assert!(!few_colors(Some("xterm-256color")) && !few_colors(Some("tmux-256color")));
        assert!(!few_colors(None) && !few_colors(Some("xterm")));
    }

    #[test]
    fn partial_theme_keeps_the_default_for_the_rest() {
        let t = Theme::from_json(
            "mine.json",
            r##"{"alarm": "#ff00ff"}"##,
            Some(&Theme::default()),
        )
        .unwrap();
        assert_eq!(t.alarm, Color::Rgb(255, 0, 255));
        assert_eq!(t.lost, Theme::default().lost);
        assert_eq!(t.cid_palette, Theme::default().cid_palette);
    }

    #[test]
    fn invalid_theme_names_file_and_key() {
        let e = Theme::from_json("bad.json", r#"{"alarm": "blurple"}"#, None).unwrap_err();
        assert_eq!(e.key.as_deref(), Some("alarm"));
        assert!(
            e.to_string()
                .starts_with("theme bad.json: key \"alarm\": expected a colour"),
            "{e}"
        );
        let e = Theme::from_json("bad.json", r#"{"alarms": "red"}"#, None).unwrap_err();
        assert_eq!(e.key.as_deref(), Some("alarms"));
        assert!(e.message.starts_with("unknown slot"));
        let e = Theme::from_json("bad.json", r#"{"cid_palette": []}"#, None).unwrap_err();
        assert_eq!(e.key.as_deref(), Some("cid_palette"));
        let e = Theme::from_json("bad.json", "{", None).unwrap_err();
        assert_eq!(e.key, None);
        assert!(Theme::load("no-such-theme").is_err());
    }

    #[test]
    fn no_color_is_monochrome_unless_a_theme_is_asked_for() {
        assert!(Theme::resolve(None, true).unwrap().monochrome);
        assert!(!Theme::resolve(Some("dark"), true).unwrap().monochrome);
        assert!(!Theme::resolve(None, false).unwrap().monochrome);
        let m = Theme::monochrome();
        assert_eq!(crate::ui::glyphs::CID.style(&m, 3).bg, None);
        assert!(
            crate::ui::glyphs::CID
                .style(&m, 3)
                .add_modifier
                .contains(Modifier::REVERSED)
        );
    }
}
