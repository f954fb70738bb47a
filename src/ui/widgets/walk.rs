//! The kernel's steps of a CID change (`e`), in the cursor pane's place: each step named as the
//! kernel names it, the one shown marked, with the cidmask before and after it drawn bit by
//! bit (a set bit in its CID's colour, a bit that changed underlined and marked).

use super::pane::{Pane, Rows};
use crate::events::fmt_dur;
use crate::ui::app::App;
use crate::ui::glyphs;
use crate::ui::keys::{Action, keys_for};
use crate::ui::overlays::{CidStep, Walk};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders};

pub struct WalkPane;

/// The bitmap of a cidmask: bits 0 to `n - 1`, set ones in their CID's colour; bits that
/// differ from `other` marked.
fn bitmap<'a>(app: &'a App, bits: &[i32], other: Option<&[i32]>, n: usize) -> Vec<Span<'a>> {
    let theme = &app.theme;
    let mut out = Vec::new();
    for b in 0..n as i32 {
        let on = bits.contains(&b);
        let changed = other.is_some_and(|o| o.contains(&b) != on);
        let mut style = if on {
            glyphs::CID.style(theme, b)
        } else {
            theme.dim()
        };
        if changed {
            style = style.add_modifier(Modifier::UNDERLINED | Modifier::BOLD);
        }
        let text = if on {
            format!("{b:>2}")
        } else {
            format!("{:>2}", "·")
        };
        out.push(Span::styled(text, style));
        out.push(Span::raw(if changed { "*" } else { " " }));
    }
    out.push(Span::styled(
        format!("  weight {}", bits.len()),
        theme.dim(),
    ));
    out
}

fn step_lines<'a>(app: &'a App, w: &Walk, k: usize, s: &CidStep, width: u16) -> Vec<Line<'a>> {
    let st = &app.state;
    let theme = &app.theme;
    let current = k == w.at;
    let head = if current {
        theme.mark(theme.title).add_modifier(Modifier::BOLD)
    } else {
        theme.dim()
    };
    let mut out = vec![Line::from(vec![
        Span::styled(if current { " ▶ " } else { "   " }, head),
        Span::styled(format!("{}. {} ", k + 1, s.name), head),
        Span::styled(
            format!("at +{}", fmt_dur(s.ts.saturating_sub(st.origin()))),
            theme.dim(),
        ),
    ])];
    let text_style = if current {
        Style::default()
    } else {
        theme.dim()
    };
    out.extend(
        super::help::entry_styled(
            vec![Span::raw("      ")],
            6,
            &[(&s.text, text_style)],
            width as usize,
        )
        .into_iter()
        .map(Line::from),
    );
    if current {
        let n = s
            .before
            .iter()
            .chain(s.after.iter())
            .flat_map(|v| v.iter().copied())
            .max()
            .map_or(0, |m| m.max(0) as usize + 1)
            .max(2);
        for (name, bits, other) in [
            ("before", &s.before, s.after.as_deref()),
            ("after ", &s.after, s.before.as_deref()),
        ] {
            let mut l = vec![Span::styled(format!("      cidmask {name} "), theme.dim())];
            match bits {
                Some(b) => l.extend(bitmap(app, b, other, n)),
                None => l.push(Span::styled("not known here", theme.dim())),
            }
            out.push(Line::from(l));
        }
    }
    out
}

/// The pane's lines: the change, then each step (the current one with its bitmaps).
pub fn lines<'a>(app: &'a App, w: &Walk, width: u16) -> Vec<Line<'a>> {
    let theme = &app.theme;
    let mut out = vec![Line::from(vec![
        Span::styled(
            format!(" {} ", w.title),
            Style::default().add_modifier(Modifier::BOLD),
        ),
        Span::styled(format!("· cidmask bits from the {}", w.source), theme.dim()),
    ])];
    for (k, s) in w.steps.iter().enumerate() {
        out.extend(step_lines(app, w, k, s, width));
    }
    out
}

/// The lines `[start, end)` of the current step (the pane scrolls to them as the walk goes on).
pub fn step_span(app: &App, w: &Walk, width: u16) -> (usize, usize) {
    let at = w.at.min(w.steps.len());
    let start = 1 + w.steps[..at]
        .iter()
        .enumerate()
        .map(|(k, s)| step_lines(app, w, k, s, width).len())
        .sum::<usize>();
    let len = w
        .steps
        .get(at)
        .map_or(0, |s| step_lines(app, w, at, s, width).len());
    (start, start + len)
}

impl Pane for WalkPane {
    fn rows(&self, app: &App, screen: Rect) -> Rows {
        match app.state.overlays.walk {
            Some(_) => Rows::Fill(super::detail::min_rows(app, screen)),
            None => Rows::Hidden,
        }
    }

    fn draw(&self, app: &App, _screen: Rect, area: Rect, buf: &mut Buffer) {
        let Some(w) = &app.state.overlays.walk else {
            return;
        };
        let inner = Block::default().borders(Borders::TOP).inner(area);
        let title = format!(
            "the kernel's steps of a CID change: step {} of {} ({}: next)",
            w.at + 1,
            w.steps.len(),
            keys_for(&app.bindings, Action::CidSteps)
        );
        super::scrolled::draw(app, &title, lines(app, w, inner.width), area, buf);
    }

    fn scroll_len(&self, app: &App, area: Rect) -> Option<(usize, u16)> {
        let w = app.state.overlays.walk.as_ref()?;
        let inner = Block::default().borders(Borders::TOP).inner(area);
        Some((lines(app, w, inner.width).len(), inner.height))
    }
}
