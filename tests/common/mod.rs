//! Helpers shared by the TUI tests.
#![allow(dead_code)]

use ratatui::buffer::Buffer;
use ratatui::style::{Color, Modifier};

/// The buffer as text with its styles: each line lists runs of equal style as
/// `«fg/bg/mods»text`, so a snapshot shows colours, not only characters.
pub fn styled_dump(buf: &Buffer) -> String {
    let mut out = String::new();
    for y in 0..buf.area.height {
        let mut prev: Option<(Color, Color, Modifier)> = None;
        for x in 0..buf.area.width {
            let c = &buf[(x, y)];
            let st = (c.fg, c.bg, c.modifier);
            if prev != Some(st) {
                out.push_str(&format!(
                    "«{}/{}{}»",
                    short(c.fg),
                    short(c.bg),
                    mods(c.modifier)
                ));
                prev = Some(st);
            }
            out.push_str(c.symbol());
        }
        out.push('\n');
    }
    out
}

fn short(c: Color) -> String {
    match c {
        Color::Reset => "-".into(),
        Color::Rgb(r, g, b) => format!("#{r:02x}{g:02x}{b:02x}"),
        Color::Indexed(i) => format!("@{i}"),
        other => format!("{other:?}").to_lowercase(),
    }
}

fn mods(m: Modifier) -> String {
    if m.is_empty() {
        String::new()
    } else {
        format!("/{m:?}").replace("Modifier(", "").replace(')', "")
    }
}
