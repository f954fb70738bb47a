//! The legend (`L`): every glyph, mark and colour the panes draw, each drawn as the panes draw
//! it, with what it means, the keys that reach it and the theme slot that colours it. It is
//! generated from the glyph table the lanes, ruler and graph draw from, and takes the cursor
//! pane's place.

use super::pane::{Pane, Rows};
use crate::ui::app::App;
use crate::ui::glyphs::{self, Glyph, Group, Slot};
use crate::ui::keys::keys_for;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

pub struct Legend;

/// Width of the sample column.
const SAMPLE_W: usize = 10;

/// A glyph's sample as the panes draw it (CIDs in their own colours, models in theirs).
fn sample<'a>(app: &'a App, g: &Glyph) -> Vec<Span<'a>> {
    let theme = &app.theme;
    let pad = |spans: Vec<Span<'a>>| {
        let w: usize = spans.iter().map(|s| s.width()).sum();
        let mut spans = spans;
        spans.push(Span::raw(" ".repeat(SAMPLE_W.saturating_sub(w) + 1)));
        spans
    };
    if *g == glyphs::CID {
        // the first CIDs, each on its colour
        let n = theme.cid_palette.len().clamp(1, 3) as i32;
        return pad((0..n)
            .map(|c| Span::styled(format!("{c} "), g.style(theme, c)))
            .collect());
    }
    if *g == glyphs::CURVE {
        let n = app.state.models.views.len().clamp(1, 3);
        return pad((0..n)
            .map(|k| Span::styled("━━ ", theme.mark(super::weight::model_color(app, k))))
            .collect());
    }
    let cid = if g.slot == Slot::Cid { 1 } else { 0 };
    pad(vec![Span::styled(g.sym.to_string(), g.style(theme, cid))])
}

/// The legend's lines: a heading per group, a line per glyph, then the CID colours and the
/// models' colours in this view.
pub fn lines(app: &App, width: usize) -> Vec<Line<'_>> {
    let theme = &app.theme;
    let dim = theme.dim();
    let head = theme.mark(theme.title).add_modifier(Modifier::BOLD);
    let mut out = Vec::new();
    for group in Group::ALL {
        out.push(Line::styled(format!(" {}", group.title()), head));
        for g in glyphs::ALL.iter().filter(|g| g.group == group) {
            let mut left = vec![Span::raw("   ")];
            left.extend(sample(app, g));
            let keys = g.keys.map(|(a, b)| {
                format!(
                    "[{} {}]",
                    keys_for(&app.bindings, a),
                    keys_for(&app.bindings, b)
                )
            });
            let slot = if *g == glyphs::CURVE {
                "(tick_marker, resume_marker, … but never weight)".to_string()
            } else {
                format!("({})", g.slot.key())
            };
            let mut text = vec![(g.meaning, Style::default())];
            if let Some(k) = &keys {
                text.push((k.as_str(), Style::default().add_modifier(Modifier::BOLD)));
            }
            text.push((slot.as_str(), dim));
            for spans in super::help::entry_styled(left, SAMPLE_W + 4, &text, width) {
                out.push(Line::from(spans));
            }
        }
    }
    // the colours of this view: every CID colour, every model's
    out.push(Line::styled(" colours in this view", head));
    let n = theme.cid_palette.len();
    let per_row = (width.saturating_sub(10) / 4).max(1);
    for (r, row) in (0..n as i32)
        .collect::<Vec<_>>()
        .chunks(per_row)
        .enumerate()
    {
        let mut cids = vec![Span::raw(if r == 0 { "   CIDs " } else { "        " })];
        for &c in row {
            cids.push(Span::styled(
                format!(" {c:<2}"),
                glyphs::CID.style(theme, c),
            ));
            cids.push(Span::raw(" "));
        }
        out.push(Line::from(cids));
    }
    for l in super::help::entry(
        vec![],
        8,
        &format!("CID n and n+{n} share a colour; the number tells them apart"),
        width,
    ) {
        out.push(Line::from(
            l.into_iter().map(|s| s.style(dim)).collect::<Vec<_>>(),
        ));
    }
    let models = &app.state.models;
    for (k, m) in models.views.iter().enumerate() {
        let style = theme
            .mark(super::weight::model_color(app, k))
            .add_modifier(Modifier::BOLD);
        let left = vec![
            Span::raw("   "),
            Span::styled(format!("━━ {}", m.run.policy.id()), style),
        ];
        for spans in super::help::entry(
            left,
            SAMPLE_W + 12,
            "its weight curve, and its name in the cursor pane",
            width,
        ) {
            out.push(Line::from(spans));
        }
    }
    let note = format!(
        "theme {}: --theme NAME|FILE sets these colours; NO_COLOR draws the marks bold instead",
        theme.name
    );
    for l in super::help::entry(vec![], 3, &note, width) {
        out.push(Line::from(
            l.into_iter().map(|s| s.style(dim)).collect::<Vec<_>>(),
        ));
    }
    out
}

impl Pane for Legend {
    fn rows(&self, app: &App, screen: Rect) -> Rows {
        let ov = &app.state.overlays;
        // the steps of a CID change, when also asked for, are in front
        if ov.show_legend && ov.walk.is_none() {
            Rows::Fill(super::detail::min_rows(app, screen))
        } else {
            Rows::Hidden
        }
    }

    fn draw(&self, app: &App, _screen: Rect, area: Rect, buf: &mut Buffer) {
        let title = format!(
            "legend — {} closes",
            keys_for(&app.bindings, crate::ui::keys::Action::ToggleLegend)
        );
        super::scrolled::draw(app, &title, lines(app, area.width as usize), area, buf);
    }

    fn scroll_len(&self, app: &App, area: Rect) -> Option<(usize, u16)> {
        Some((
            lines(app, area.width as usize).len(),
            area.height.saturating_sub(1),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sources::{LoadOptions, load_bytes};

    /// Every glyph of the table has its line, with its meaning.
    #[test]
    fn the_legend_lists_every_glyph() {
        let t = load_bytes(
            "x",
            b"a-1 [000] ....  1.000000: rseq_update: cpu_id=0 node_id=0 mm_cid=0\n",
            &LoadOptions::default(),
        )
        .expect("trace");
        let app = App::new(t);
        for width in [80, 200] {
            let text: String = lines(&app, width)
                .iter()
                .map(|l| {
                    assert!(l.width() <= width, "{width}: {l:?}");
                    l.spans
                        .iter()
                        .map(|s| s.content.as_ref())
                        .collect::<String>()
                        + " "
                })
                .collect();
            let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
            for g in glyphs::ALL {
                assert!(flat.contains(g.meaning), "{width}: {} missing", g.sym);
            }
        }
    }
}
