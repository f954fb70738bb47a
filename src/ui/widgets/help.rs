//! The help overlay (`?`): every key, generated from the key table so it can never disagree
//! with the keys, then every glyph, mark and colour, generated from the glyph table the panes
//! draw from. Nothing is cut: descriptions wrap, the text flows into two columns where the
//! screen is wide enough, and it scrolls where it is not tall enough.

use crate::ui::app::App;
use crate::ui::glyphs::{self, Group};
use crate::ui::keys::{Action, help_rows, keys_for};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Widget};

pub struct Help<'a> {
    pub app: &'a App,
}

const MOUSE: &str = "Mouse: click puts the cursor, drag selects an A–B range, the wheel zooms \
                     around the pointer, hovering a lane names the task and CID under it.";

/// One entry: its left part (keys or a glyph sample) and its text, wrapped into `width`
/// columns with the text indented past the left part.
pub fn entry<'a>(
    left: Vec<Span<'a>>,
    left_w: usize,
    text: &str,
    width: usize,
) -> Vec<Vec<Span<'a>>> {
    entry_styled(left, left_w, &[(text, Style::default())], width)
}

/// Like [`entry`], with a text of differently styled parts (each wraps by words).
pub fn entry_styled<'a>(
    left: Vec<Span<'a>>,
    left_w: usize,
    text: &[(&str, Style)],
    width: usize,
) -> Vec<Vec<Span<'a>>> {
    let room = width.saturating_sub(left_w).max(12);
    // rows of (text, style) runs
    let mut rows: Vec<(usize, Vec<(String, Style)>)> = vec![(0, Vec::new())];
    for &(part, style) in text {
        for word in part.split_whitespace() {
            let w = word.chars().count();
            let (used, runs) = rows.last_mut().expect("one row at least"); // invariant: starts with one
            let sep = usize::from(*used > 0);
            if *used > 0 && *used + sep + w > room {
                rows.push((w, vec![(word.to_string(), style)]));
                continue;
            }
            match runs.last_mut() {
                Some((t, s)) if *s == style => {
                    t.push(' ');
                    t.push_str(word);
                }
                _ => runs.push((format!("{}{word}", if sep == 1 { " " } else { "" }), style)),
            }
            *used += sep + w;
        }
    }
    let mut out = Vec::new();
    for (i, (_, runs)) in rows.into_iter().enumerate() {
        let mut spans = if i == 0 {
            let mut l = left.clone();
            let w: usize = l.iter().map(|s| s.width()).sum();
            l.push(Span::raw(" ".repeat(left_w.saturating_sub(w))));
            l
        } else {
            vec![Span::raw(" ".repeat(left_w))]
        };
        spans.extend(runs.into_iter().map(|(t, s)| Span::styled(t, s)));
        out.push(spans);
    }
    out
}

/// Flows entries into `ncols` columns of `width`, keeping each entry whole in one column.
fn flow<'a>(entries: Vec<Vec<Vec<Span<'a>>>>, ncols: usize, width: usize) -> Vec<Line<'a>> {
    let total: usize = entries.iter().map(Vec::len).sum();
    let per_col = total.div_ceil(ncols.max(1));
    let mut cols: Vec<Vec<Vec<Span>>> = vec![Vec::new()];
    for e in entries {
        let cur = cols.last().map_or(0, Vec::len);
        if cur > 0 && cur + e.len() > per_col && cols.len() < ncols {
            cols.push(Vec::new());
        }
        cols.last_mut().expect("a column").extend(e); // invariant: starts with one
    }
    let rows = cols.iter().map(Vec::len).max().unwrap_or(0);
    (0..rows)
        .map(|r| {
            let mut spans = Vec::new();
            for (c, col) in cols.iter().enumerate() {
                let cell = col.get(r).cloned().unwrap_or_default();
                let w: usize = cell.iter().map(|s| s.width()).sum();
                spans.extend(cell);
                if c + 1 < cols.len() {
                    spans.push(Span::raw(" ".repeat(width.saturating_sub(w) + 2)));
                }
            }
            Line::from(spans)
        })
        .collect()
}

/// The help's lines for a box `width` columns wide inside its frame.
pub fn lines(app: &App, width: usize) -> Vec<Line<'_>> {
    let theme = &app.theme;
    let bold = Style::default().add_modifier(Modifier::BOLD);
    let head = theme.mark(theme.title).add_modifier(Modifier::BOLD);
    let rows = help_rows(&app.bindings);
    let key_w = rows.iter().map(|r| r.0.chars().count()).max().unwrap_or(0) + 3;
    // two columns when each leaves the descriptions 40 columns
    let ncols = if (width.saturating_sub(2)) / 2 >= key_w + 40 {
        2
    } else {
        1
    };
    let col_w = (width.saturating_sub(2 * (ncols - 1))) / ncols;
    let mut out = vec![Line::styled(" keys", head)];
    let keys = rows
        .iter()
        .map(|(k, d)| entry(vec![Span::styled(format!(" {k}"), bold)], key_w, d, col_w))
        .collect();
    out.extend(flow(keys, ncols, col_w));
    for group in Group::ALL {
        out.push(Line::raw(""));
        out.push(Line::styled(format!(" {}", group.title()), head));
        let sample_w = glyphs::ALL
            .iter()
            .map(|g| g.sym.chars().count())
            .max()
            .unwrap_or(1)
            + 3;
        let entries = glyphs::ALL
            .iter()
            .filter(|g| g.group == group)
            .map(|g| {
                let cid = i32::from(g.slot == glyphs::Slot::Cid);
                let text = match g.keys {
                    Some((a, b)) => format!(
                        "{} [{} {}]",
                        g.meaning,
                        keys_for(&app.bindings, a),
                        keys_for(&app.bindings, b)
                    ),
                    None => g.meaning.to_string(),
                };
                entry(
                    vec![
                        Span::raw(" "),
                        Span::styled(g.sym.to_string(), g.style(theme, cid)),
                    ],
                    sample_w,
                    &text,
                    col_w,
                )
            })
            .collect();
        out.extend(flow(entries, ncols, col_w));
    }
    out.push(Line::raw(""));
    for l in entry(vec![], 1, MOUSE, width) {
        out.push(Line::styled(
            l.iter().map(|s| s.content.as_ref()).collect::<String>(),
            theme.dim(),
        ));
    }
    let legend = format!(
        "The legend ({}) shows the glyphs beside the lanes, with this view's colours.",
        keys_for(&app.bindings, Action::ToggleLegend)
    );
    for l in entry(vec![], 1, &legend, width) {
        out.push(Line::styled(
            l.iter().map(|s| s.content.as_ref()).collect::<String>(),
            theme.dim(),
        ));
    }
    out
}

impl Widget for Help<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let app = self.app;
        let theme = &app.theme;
        let width = area.width.saturating_sub(2).min(160);
        let lines = lines(app, width.saturating_sub(1) as usize);
        let content_w = lines.iter().map(Line::width).max().unwrap_or(20) as u16;
        let w = (content_w + 3).min(area.width);
        let h = (lines.len() as u16 + 2).min(area.height);
        let r = Rect {
            x: area.x + (area.width - w) / 2,
            y: area.y + (area.height - h) / 2,
            width: w,
            height: h,
        };
        let inner_h = h.saturating_sub(2);
        let top = super::scrolled::first_line(app.state.overlays.help_scroll, lines.len(), inner_h);
        let mut title = " keys and glyphs — any other key closes ".to_string();
        if lines.len() > inner_h as usize {
            title = format!(
                " keys and glyphs — lines {}-{} of {}: {} {} scroll · any other key closes ",
                top + 1,
                (top as usize + inner_h as usize).min(lines.len()),
                lines.len(),
                keys_for(&app.bindings, Action::ScrollUp),
                keys_for(&app.bindings, Action::ScrollDown),
            );
        }
        Clear.render(r, buf);
        Paragraph::new(lines)
            .style(theme.text())
            .scroll((top, 0))
            .block(
                Block::default()
                    .borders(Borders::ALL)
                    .title(title)
                    .border_style(theme.mark(theme.title)),
            )
            .render(r, buf);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sources::{LoadOptions, load_bytes};

    /// At any width every key's description and every glyph's meaning is there whole.
    #[test]
    fn the_help_is_complete_at_every_width() {
        let t = load_bytes(
            "x",
            b"a-1 [000] ....  1.000000: rseq_update: cpu_id=0 node_id=0 mm_cid=0\n",
            &LoadOptions::default(),
        )
        .expect("trace");
        let app = App::new(t);
        for width in [60, 78, 118, 198] {
            let text: String = lines(&app, width)
                .iter()
                .map(|l| {
                    assert!(l.width() <= width.max(60) + 2, "{width}: {l:?}");
                    l.spans
                        .iter()
                        .map(|s| s.content.as_ref())
                        .collect::<String>()
                        + " "
                })
                .collect();
            let words = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
            let flat = words(&text);
            for (_, d) in help_rows(&app.bindings) {
                // the words of each description appear in order (wrapping may split lines, and
                // a second column may interleave: check each word is there)
                for w in d.split_whitespace() {
                    assert!(flat.contains(w), "{width}: {d}");
                }
            }
            for g in glyphs::ALL {
                for w in g.meaning.split_whitespace() {
                    assert!(flat.contains(w), "{width}: {}", g.meaning);
                }
            }
        }
    }
}
