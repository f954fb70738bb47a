//! Colours by meaning, not by widget. The default uses only the 16 ANSI colours so it works on
//! any terminal.

use ratatui::style::{Color, Modifier, Style};

#[derive(Clone, Debug, PartialEq)]
pub struct Theme {
    /// Background of a slot holding CID n is `cid_palette[n % len]`.
    pub cid_palette: Vec<Color>,
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
}

impl Default for Theme {
    fn default() -> Self {
        Theme {
            cid_palette: vec![
                Color::Blue,
                Color::Green,
                Color::Yellow,
                Color::Magenta,
                Color::Cyan,
                Color::Red,
                Color::LightBlue,
                Color::LightGreen,
                Color::LightYellow,
                Color::LightMagenta,
                Color::LightCyan,
                Color::LightRed,
            ],
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
            bound: Color::Red,
            title: Color::LightCyan,
        }
    }
}

impl Theme {
    pub fn cid_color(&self, cid: i32) -> Color {
        if self.cid_palette.is_empty() {
            return self.text;
        }
        self.cid_palette[cid.unsigned_abs() as usize % self.cid_palette.len()]
    }

    /// A confirmed CID: its colour as background.
    pub fn cid_style(&self, cid: i32) -> Style {
        Style::default().bg(self.cid_color(cid)).fg(self.cid_text)
    }

    /// An unconfirmed (stale) CID: its colour as foreground only.
    pub fn cid_stale_style(&self, cid: i32) -> Style {
        Style::default()
            .fg(self.cid_color(cid))
            .add_modifier(Modifier::DIM)
    }

    pub fn text(&self) -> Style {
        Style::default().fg(self.text).bg(self.background)
    }

    pub fn dim(&self) -> Style {
        Style::default().fg(self.dim)
    }
}
