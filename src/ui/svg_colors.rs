//! `export --svg`: a TUI theme's colours as the plain `#rrggbb` data the SVG writer takes (the
//! export knows nothing of themes), and the window and process the picture shows.

use super::error::UiError;
use super::theme::Theme;
use crate::events::Trace;
use crate::export::svg::{SvgColors, SvgOptions};
use crate::timeline::Timeline;
use ratatui::style::Color;

/// xterm's default RGB of the 16 ANSI colours.
const ANSI: [(u8, u8, u8); 16] = [
    (0, 0, 0),
    (205, 0, 0),
    (0, 205, 0),
    (205, 205, 0),
    (0, 0, 238),
    (205, 0, 205),
    (0, 205, 205),
    (229, 229, 229),
    (127, 127, 127),
    (255, 0, 0),
    (0, 255, 0),
    (255, 255, 0),
    (92, 92, 255),
    (255, 0, 255),
    (0, 255, 255),
    (255, 255, 255),
];

/// `#rrggbb` of a terminal colour; `None` for `Reset` (the terminal's own).
pub fn hex(c: Color) -> Option<String> {
    let idx = |i: usize| Some(ANSI[i]);
    let rgb = match c {
        Color::Reset => None,
        Color::Black => idx(0),
        Color::Red => idx(1),
        Color::Green => idx(2),
        Color::Yellow => idx(3),
        Color::Blue => idx(4),
        Color::Magenta => idx(5),
        Color::Cyan => idx(6),
        Color::Gray => idx(7),
        Color::DarkGray => idx(8),
        Color::LightRed => idx(9),
        Color::LightGreen => idx(10),
        Color::LightYellow => idx(11),
        Color::LightBlue => idx(12),
        Color::LightMagenta => idx(13),
        Color::LightCyan => idx(14),
        Color::White => idx(15),
        Color::Rgb(r, g, b) => Some((r, g, b)),
        Color::Indexed(i) if i < 16 => idx(i as usize),
        Color::Indexed(i) if i < 232 => {
            let v = [0u8, 95, 135, 175, 215, 255];
            let k = (i - 16) as usize;
            Some((v[k / 36], v[(k / 6) % 6], v[k % 6]))
        }
        Color::Indexed(i) => {
            let g = 8 + 10 * (i - 232);
            Some((g, g, g))
        }
    }?;
    Some(format!("#{:02x}{:02x}{:02x}", rgb.0, rgb.1, rgb.2))
}

/// CIDs a picture tells apart by colour alone (a 64-CPU process may use every one).
pub const SVG_CIDS: usize = 64;

/// `n` distinct fills: the theme's CID colours, then, where a terminal would repeat them with a
/// pattern, darker and lighter shades of them (a picture has colours to spare).
pub fn distinct_palette(theme: &Theme, n: usize) -> Vec<String> {
    let base: Vec<(u8, u8, u8)> = theme
        .cid_palette
        .iter()
        .filter_map(|&c| hex(c))
        .filter_map(|h| {
            let v = u32::from_str_radix(h.trim_start_matches('#'), 16).ok()?;
            Some(((v >> 16) as u8, (v >> 8) as u8, v as u8))
        })
        .collect();
    if base.is_empty() {
        return Vec::new();
    }
    // each round a shade: (towards white or black, by how much)
    let shades: [(bool, f64); 6] = [
        (false, 0.0),
        (false, 0.35),
        (true, 0.45),
        (false, 0.6),
        (true, 0.7),
        (false, 0.8),
    ];
    let mut out: Vec<String> = Vec::new();
    'all: for &(white, k) in &shades {
        for &(r, g, b) in &base {
            let mix = |c: u8| {
                let target = if white { 255.0 } else { 0.0 };
                (c as f64 + (target - c as f64) * k).round() as u8
            };
            let h = format!("#{:02x}{:02x}{:02x}", mix(r), mix(g), mix(b));
            if !out.contains(&h) {
                out.push(h);
            }
            if out.len() >= n {
                break 'all;
            }
        }
    }
    out
}

/// The theme's colours for a picture; the terminal's own colours (`reset`) become the SVG
/// defaults (dark text on white).
pub fn svg_colors(theme: &Theme) -> SvgColors {
    let d = SvgColors::default();
    let or = |c: Color, dflt: &String| hex(c).unwrap_or_else(|| dflt.clone());
    let palette = distinct_palette(theme, SVG_CIDS);
    SvgColors {
        palette: if palette.is_empty() {
            d.palette.clone()
        } else {
            palette
        },
        text: or(theme.text, &d.text),
        dim: or(theme.dim, &d.dim),
        background: or(theme.background, &d.background),
        free: d.free.clone(),
        weight: or(theme.weight, &d.weight),
        bound: or(theme.bound, &d.bound),
    }
}

/// The picture `export --svg` draws: the window (`--from`/`--to`, offsets from the first
/// event), the process (`--tgid`, else the TUI's first pick) and the theme's colours.
pub fn svg_options(
    trace: &Trace,
    tl: &Timeline,
    window: (Option<u64>, Option<u64>),
    tgid: Option<u32>,
    theme: &Theme,
) -> Result<SvgOptions, UiError> {
    if trace.events.is_empty() {
        return Err(UiError::NothingToDraw {
            path: trace.path.clone(),
        });
    }
    let first = tl.first_ts;
    let from = first + window.0.unwrap_or(0);
    let to = match window.1 {
        Some(t) => first + t,
        None => tl.last_ts.max(first + 1),
    };
    if to <= from {
        return Err(UiError::EmptyWindow {
            from: crate::events::fmt_dur(from - first),
            to: crate::events::fmt_dur(to.saturating_sub(first)),
        });
    }
    let mm = match tgid {
        Some(t) => Some(tl.mm_of_tgid(t).ok_or(UiError::NoSuchTgid(t))?),
        None => tl.first_pick(),
    };
    let label = match mm.and_then(|m| tl.mm_info(m)) {
        Some(i) => format!("{} {}", i.label(), trace.comm_of(i.leader)),
        None => "all tasks".into(),
    };
    Ok(SvgOptions {
        from,
        to,
        mm,
        label,
        colors: svg_colors(theme),
        width: 1200,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terminal_colours_become_hex() {
        assert_eq!(hex(Color::Blue).as_deref(), Some("#0000ee"));
        assert_eq!(hex(Color::Rgb(1, 2, 3)).as_deref(), Some("#010203"));
        assert_eq!(hex(Color::Indexed(196)).as_deref(), Some("#ff0000"));
        assert_eq!(hex(Color::Indexed(232)).as_deref(), Some("#080808"));
        assert_eq!(hex(Color::Reset), None);
        let c = svg_colors(&Theme::default());
        // 64 distinct fills, the theme's own first
        assert_eq!(c.palette.len(), SVG_CIDS);
        assert_eq!(c.palette[0], hex(Theme::default().cid_palette[0]).unwrap());
        for (i, a) in c.palette.iter().enumerate() {
            assert!(!c.palette[i + 1..].contains(a), "{a} twice");
        }
        assert_eq!(c.background, "#ffffff");
    }
}
