//! The selected mm's cidmask weight over the visible window, with the CPU-count bound drawn.

use super::axis::{TimeAxis, time_under};
use super::pane::{Hit, Pane, Rows};
use crate::ui::app::App;
use crate::ui::glyphs;
use crate::ui::keys::{Action, keys_for};
use crate::ui::models::ModelView;
use crate::ui::selection::MmSel;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Widget};

/// The weight pane: its title (what the bars and lines are) over the graph.
pub struct WeightPane;

/// Rows of the weight pane (its title and the graph): fewer on small screens, where the
/// lanes need them more.
pub fn pane_rows(screen: Rect) -> u16 {
    match screen.height {
        40.. => 7,
        30.. => 6,
        _ => 4,
    }
}

impl Pane for WeightPane {
    fn rows(&self, _app: &App, screen: Rect) -> Rows {
        Rows::Fixed(pane_rows(screen))
    }

    fn draw(&self, app: &App, _screen: Rect, area: Rect, buf: &mut Buffer) {
        let block = Block::default()
            .borders(Borders::TOP)
            .title(title(app))
            .border_style(app.theme.dim());
        let inner = block.inner(area);
        block.render(area, buf);
        WeightGraph { app }.render(inner, buf);
    }

    fn hit(&self, app: &App, _screen: Rect, area: Rect, col: u16, row: u16) -> Option<Hit> {
        let st = &app.state;
        // the lanes' label column, so a column means the same time in both
        let lw = super::axis::lane_label_width(st);
        let inner = Block::default().borders(Borders::TOP).inner(area);
        let t = time_under(inner, lw, st.view.t0, st.view.span, col, row)?;
        Some((None, t))
    }
}

pub struct WeightGraph<'a> {
    pub app: &'a App,
}

const EIGHTHS: [char; 9] = [' ', '▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];

/// Highest weight in `[a, b)` of a step series.
pub fn max_in(series: &[(u64, u16)], a: u64, b: u64) -> u16 {
    let start = series.partition_point(|w| w.0 <= a);
    let at_a = start.checked_sub(1).map_or(0, |i| series[i].1);
    series[start..]
        .iter()
        .take_while(|w| w.0 < b)
        .map(|w| w.1)
        .fold(at_a, u16::max)
}

impl Widget for WeightGraph<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let app = self.app;
        let st = &app.state;
        let theme = &app.theme;
        let tl = &st.timeline;
        if area.height < 2 {
            return;
        }
        let bound = tl
            .ncpus
            .max(st.samples.as_ref().map_or(0, |s| s.timeline.ncpus))
            .max(1);
        let lw = super::axis::lane_label_width(st);
        // live without a kernel trace: the weight of the CIDs the threads read
        let live_only = st
            .samples
            .as_ref()
            .filter(|s| !s.attached && !s.weights.is_empty());
        let selected = match (st.sel.selected(), live_only) {
            (_, Some(_)) => Some(crate::model::MmId(0)),
            (MmSel::Mm(mm), None) => Some(mm),
            (MmSel::All, None) => None,
        };
        let Some(_) = selected else {
            if st.sel.mm_list.is_empty() && !tl.missing.is_empty() {
                let codes: Vec<&str> = tl.missing.iter().map(|m| m.code()).collect();
                let msg = format!(
                    "cidmask weight: nothing to show, the capture lacks {} (the cursor pane says what that means and how to record it)",
                    codes.join(", ")
                );
                let width = area.width.saturating_sub(lw).max(1) as usize;
                let lines = wrap(&msg, width);
                let n = lines.len().min(area.height as usize) as u16;
                let top = area.y + (area.height - n) / 2;
                for (i, l) in lines.iter().take(n as usize).enumerate() {
                    buf.set_stringn(area.x + lw, top + i as u16, l, width, theme.dim());
                }
                return;
            }
            let msg = if st.sel.mm_list.is_empty() {
                "cidmask weight is per process; no process with CIDs is known here: all tasks are \
                 shown"
                    .to_string()
            } else {
                format!(
                    "cidmask weight is per process: {} selects one",
                    keys_for(&app.bindings, Action::NextMm)
                )
            };
            buf.set_stringn(
                area.x + lw,
                area.y + area.height / 2,
                msg,
                area.width.saturating_sub(lw) as usize,
                theme.dim(),
            );
            return;
        };
        // the summaries of the series, when built for this selection
        let sums = st
            .derived
            .summaries
            .as_ref()
            .filter(|s| s.sel == st.sel.selected() && live_only.is_none());
        // Bars: the observed weight, or (no observed lanes, e.g. sim) the first model's; the
        // other models are drawn as lines over them.
        let bars = if let Some(l) = live_only {
            Series {
                points: &l.weights[..],
                pyramid: None,
            }
        } else if st.models.show_observed || st.models.views.is_empty() {
            Series {
                points: &st.derived.weights[..],
                pyramid: sums.and_then(|s| s.weight.as_ref()),
            }
        } else {
            Series {
                points: &st.models.views[0].weights[..],
                pyramid: sums
                    .and_then(|s| s.models.first())
                    .and_then(|m| m.1.as_ref()),
            }
        };
        let first_overlay = usize::from(
            live_only.is_none() && !(st.models.show_observed || st.models.views.is_empty()),
        );
        let overlays: &[ModelView] = if live_only.is_some() {
            &[]
        } else {
            &st.models.views[first_overlay..]
        };
        let (series, bar_pyr) = (bars.points, bars.pyramid);
        type Pyr = crate::timeline::summary::MaxPyramid;
        let max_of = |pyr: Option<&Pyr>, s: &[(u64, u16)], a: u64, b: u64| match pyr {
            Some(p) => p.max_in(s, a, b, max_in),
            None => max_in(s, a, b),
        };
        let cols = area.width.saturating_sub(lw);
        let axis = TimeAxis {
            t0: st.view.t0,
            span: st.view.span,
            cols,
        };
        // Top row: the bound (no CID may reach it); the rows below hold the bars.
        let bars = area.height - 1;
        let bound_style = glyphs::BOUND.style(theme, 0);
        buf.set_string(
            area.x,
            area.y,
            format!("{bound:>w$} ", w = (lw - 1) as usize),
            bound_style,
        );
        buf.set_string(
            area.x + lw,
            area.y,
            glyphs::BOUND.sym.repeat(cols as usize),
            bound_style,
        );
        let tag = format!(" bound = {bound} possible CPUs ");
        if cols as usize > tag.len() + 2 {
            buf.set_string(
                area.x + area.width - tag.len() as u16 - 1,
                area.y,
                tag,
                bound_style,
            );
        }
        buf.set_string(
            area.x,
            area.y + area.height - 1,
            format!("{:>w$} ", 0, w = (lw - 1) as usize),
            theme.dim(),
        );
        let cursor_col = axis.col_of(st.cursor_ts());
        let weight_style = glyphs::BARS.style(theme, 0);
        for x in 0..cols {
            let (a, b) = axis.range(x);
            let w = max_of(bar_pyr, series, a, b) as u64;
            if w > bound as u64 {
                buf.set_string(
                    area.x + lw + x,
                    area.y,
                    glyphs::OVER_BOUND.sym,
                    glyphs::OVER_BOUND.style(theme, 0),
                );
            }
            // height in eighths of a row
            let h = (w.min(bound as u64) * bars as u64 * 8).div_ceil(bound as u64);
            for r in 0..bars {
                let y = area.y + area.height - 1 - r;
                let lo = r as u64 * 8;
                let fill = h.saturating_sub(lo).min(8) as usize;
                if fill > 0 {
                    buf.set_string(area.x + lw + x, y, EIGHTHS[fill].to_string(), weight_style);
                }
            }
            // each model's weight as a line at its level, in its own colour
            for (k, m) in overlays.iter().enumerate() {
                let pyr = sums
                    .and_then(|s| s.models.get(k + first_overlay))
                    .and_then(|p| p.1.as_ref());
                let w = max_of(pyr, &m.weights, a, b) as u64;
                if w == 0 {
                    continue;
                }
                let row = ((w.min(bound as u64) * bars as u64).div_ceil(bound as u64)).max(1);
                let y = area.y + area.height - row as u16;
                buf.set_string(
                    area.x + lw + x,
                    y,
                    glyphs::CURVE.sym,
                    theme.mark(model_color(app, k + first_overlay)),
                );
            }
            if Some(x) == cursor_col {
                for r in 0..area.height {
                    let Some(cell) = super::cell::cell_in(buf, area, area.x + lw + x, area.y + r)
                    else {
                        continue;
                    };
                    if cell.symbol() == " " {
                        cell.set_symbol(glyphs::WEIGHT_CURSOR.sym);
                        cell.set_style(glyphs::WEIGHT_CURSOR.style(theme, 0));
                    } else {
                        let st = cell.style().add_modifier(Modifier::REVERSED);
                        cell.set_style(st);
                    }
                }
            }
        }
    }
}

/// A weight series and its summary pyramid, if built.
struct Series<'a> {
    points: &'a [(u64, u16)],
    pyramid: Option<&'a crate::timeline::summary::MaxPyramid>,
}

/// The colour of the k-th model (its weight curve, its name in the titles and the cursor
/// pane): the marks' colours, never the bars' colour.
pub fn model_color(app: &App, k: usize) -> ratatui::style::Color {
    let t = &app.theme;
    let mut colors: Vec<ratatui::style::Color> = Vec::new();
    for c in [
        t.tick_marker,
        t.resume_marker,
        t.scan_batch,
        t.transit_slot,
        t.marker,
        t.lost,
    ] {
        if c != t.weight && !colors.contains(&c) {
            colors.push(c);
        }
    }
    if colors.is_empty() {
        return t.text;
    }
    colors[k % colors.len()]
}

/// The weight pane's title: what the bars and the lines are, each in its colour.
pub fn title(app: &App) -> Line<'static> {
    let models = &app.state.models;
    let theme = &app.theme;
    let dim = theme.dim();
    let mut spans = vec![Span::styled(" cidmask weight: ", dim)];
    let bars = glyphs::BARS.style(theme, 0);
    let first_curve = if models.show_observed || models.views.is_empty() {
        spans.push(Span::styled("█ ", bars));
        spans.push(Span::styled(
            "observed (confirmed CIDs of running tasks)",
            dim,
        ));
        0
    } else {
        spans.push(Span::styled("█ ", bars));
        spans.push(Span::styled(
            format!("{} model", models.views[0].run.policy.id()),
            dim,
        ));
        1
    };
    for (k, m) in models.views.iter().enumerate().skip(first_curve) {
        spans.push(Span::styled(", ", dim));
        let style = theme.mark(model_color(app, k)).add_modifier(Modifier::BOLD);
        spans.push(Span::styled(format!("━ {}", m.run.policy.id()), style));
    }
    spans.push(Span::styled(format!(", {} bound ", glyphs::BOUND.sym), dim));
    Line::from(spans)
}

/// `text` cut into lines of at most `width` characters, at spaces where it can.
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut line = String::new();
    for word in text.split(' ') {
        let need = line.chars().count() + usize::from(!line.is_empty()) + word.chars().count();
        if need > width && !line.is_empty() {
            out.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
        while line.chars().count() > width {
            let head: String = line.chars().take(width).collect();
            line = line.chars().skip(width).collect();
            out.push(head);
        }
    }
    if !line.is_empty() {
        out.push(line);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_of_a_step_series_over_a_range() {
        let s = [(10, 1), (20, 3), (25, 0), (40, 2)];
        assert_eq!(max_in(&s, 0, 10), 0);
        assert_eq!(max_in(&s, 10, 20), 1);
        assert_eq!(max_in(&s, 12, 30), 3);
        assert_eq!(max_in(&s, 26, 39), 0);
        assert_eq!(max_in(&s, 26, 41), 2);
        assert_eq!(max_in(&[], 0, 100), 0);
    }
}
