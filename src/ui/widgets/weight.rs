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
pub fn pane_rows(app: &App, screen: Rect) -> u16 {
    match screen.height {
        40.. => 7,
        30.. => 6,
        // a small screen keeps its rows for the lanes (with the bound stated, the bars take
        // the top row too)
        _ => {
            let _ = app;
            3
        }
    }
}

impl Pane for WeightPane {
    fn rows(&self, app: &App, screen: Rect) -> Rows {
        if app.state.overlays.overview.is_some() {
            return Rows::Hidden;
        }
        Rows::Fixed(pane_rows(app, screen))
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
                let msg = "cidmask weight: nothing to show, the capture lacks what it needs (the cursor pane says what and how to record it)".to_string();
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
        // per column: the bars' weight and each curve's
        let columns: Vec<(u64, Vec<u64>)> = (0..cols)
            .map(|x| {
                let (a, b) = axis.range(x);
                let curves = overlays
                    .iter()
                    .enumerate()
                    .map(|(k, m)| {
                        let pyr = sums
                            .and_then(|s| s.models.get(k + first_overlay))
                            .and_then(|p| p.1.as_ref());
                        max_of(pyr, &m.weights, a, b) as u64
                    })
                    .collect();
                (max_of(bar_pyr, series, a, b) as u64, curves)
            })
            .collect();
        let data_max = columns
            .iter()
            .flat_map(|(w, c)| std::iter::once(*w).chain(c.iter().copied()))
            .max()
            .unwrap_or(0);
        // The bound where it fits, as the top row's line (no CID may reach it), the bars under
        // it; else the bound stated on the top row and the bars on every row.
        let mut scale = Scale::new(data_max, bound as u64, area.height - 1);
        if !scale.bound_on_scale {
            scale = Scale::new(data_max, bound as u64, area.height);
        }
        let bars = scale.rows;
        let bound_style = glyphs::BOUND.style(theme, 0);
        let label = |v: u64| format!("{v:>w$} ", w = (lw - 1) as usize);
        if scale.bound_on_scale {
            buf.set_string(area.x, area.y, label(scale.top), bound_style);
            buf.set_string(
                area.x + lw,
                area.y,
                glyphs::BOUND.sym.repeat(cols as usize),
                bound_style,
            );
        } else {
            buf.set_string(area.x, area.y, label(scale.top), theme.dim());
        }
        // labelled ticks: the top, the middle (where it falls on a row boundary) and 0
        for (r, v) in scale.ticks() {
            let y = area.y + area.height - 1 - r;
            buf.set_string(area.x, y, label(v), theme.dim());
        }
        let cursor_col = axis.col_of(st.cursor_ts());
        let weight_style = glyphs::BARS.style(theme, 0);
        for (x, (w, curves)) in (0..cols).zip(&columns) {
            let w = *w;
            if w > bound as u64 {
                buf.set_string(
                    area.x + lw + x,
                    area.y,
                    glyphs::OVER_BOUND.sym,
                    glyphs::OVER_BOUND.style(theme, 0),
                );
            }
            let h = scale.eighths(w);
            for r in 0..bars {
                let y = area.y + area.height - 1 - r;
                let lo = r as u64 * 8;
                let fill = h.saturating_sub(lo).min(8) as usize;
                if fill > 0 {
                    buf.set_string(area.x + lw + x, y, EIGHTHS[fill].to_string(), weight_style);
                }
            }
            // each model's weight as a line at its level, in its colour and its line; where
            // curves meet on a cell they take turns column by column
            let mut by_row: Vec<(u16, Vec<usize>)> = Vec::new();
            for (k, &cw) in curves.iter().enumerate() {
                if cw == 0 {
                    continue;
                }
                let row = scale.row(cw);
                match by_row.iter_mut().find(|(r, _)| *r == row) {
                    Some((_, ks)) => ks.push(k),
                    None => by_row.push((row, vec![k])),
                }
            }
            for (row, ks) in by_row {
                let k = ks[usize::from(x) % ks.len()] + first_overlay;
                let y = area.y + area.height - row;
                // over a bar, on the bar's colour: the bar stays visible under the line
                let under = super::cell::cell_in(buf, area, area.x + lw + x, y)
                    .is_some_and(|c| c.symbol() != " ");
                let mut style = theme.mark(model_color(app, k));
                if under && !theme.monochrome {
                    style = style.bg(theme.weight);
                }
                buf.set_string(area.x + lw + x, y, curve_glyph(k), style);
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
        let tag = if scale.bound_on_scale {
            format!(" bound = {bound} possible CPUs ")
        } else {
            format!(" bound {bound} possible CPUs: above this scale (up to {data_max} here) ")
        };
        if cols as usize > tag.chars().count() + 2 {
            let x0 = area.x + area.width - tag.chars().count() as u16 - 1;
            for (i, ch) in tag.chars().enumerate() {
                let Some(cell) = super::cell::cell_in(buf, area, x0 + i as u16, area.y) else {
                    continue;
                };
                // over a bar (the bars reach the top row when the bound is stated): the text
                // on the bar's colour, so the bar's height still shows
                let on_bar = ["█", "▇", "▆", "▅", "▄"].contains(&cell.symbol());
                let style = if on_bar && !theme.monochrome {
                    ratatui::style::Style::default()
                        .fg(theme.cid_text)
                        .bg(theme.weight)
                } else {
                    bound_style
                };
                cell.set_char(ch);
                cell.set_style(style);
            }
        }
    }
}

/// The graph's vertical scale: the data's highest weight in the window, or the bound where the
/// data reaches half of it (a 3 of 64 is drawn 3 high, not a sliver under a line at 64).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scale {
    /// The weight at the top row.
    pub top: u64,
    /// The top is the bound (drawn as its line); else the bound is stated in words.
    pub bound_on_scale: bool,
    /// Rows of bars under the top row.
    pub rows: u16,
}

impl Scale {
    pub fn new(data_max: u64, bound: u64, rows: u16) -> Scale {
        let bound = bound.max(1);
        if data_max.saturating_mul(2) >= bound {
            return Scale {
                top: bound,
                bound_on_scale: true,
                rows,
            };
        }
        // the data's maximum (a few rows of eighths show a few CIDs exactly), else a multiple
        // of the rows (each row a whole number of CIDs)
        let m = data_max.max(1);
        let r = u64::from(rows.max(1));
        let top = if m <= 4 * r { m } else { m.div_ceil(r) * r };
        Scale {
            top: top.min(bound),
            bound_on_scale: top >= bound,
            rows,
        }
    }

    /// Height of weight `w` in eighths of a row (at most every row).
    pub fn eighths(&self, w: u64) -> u64 {
        (w.min(self.top) * u64::from(self.rows) * 8).div_ceil(self.top.max(1))
    }

    /// The row (1 = bottom) where a curve at weight `w` is drawn.
    pub fn row(&self, w: u64) -> u16 {
        let r = (w.min(self.top) * u64::from(self.rows)).div_ceil(self.top.max(1));
        r.clamp(1, u64::from(self.rows)) as u16
    }

    /// Labelled ticks under the top: (row from the bottom, 0-based, weight at its top edge);
    /// 0 on the bottom row and the middle where it falls on a whole weight.
    pub fn ticks(&self) -> Vec<(u16, u64)> {
        let mut v = vec![(0, 0)];
        let n = u64::from(self.rows);
        if n >= 3 {
            let mid = n / 2;
            // row `mid` (0-based from the bottom) tops out at (mid + 1) / n of the scale
            let at = (mid + 1) * self.top;
            if at.is_multiple_of(n) && at / n < self.top {
                v.push((mid as u16, at / n));
            }
        }
        v
    }
}

/// A weight series and its summary pyramid, if built.
struct Series<'a> {
    points: &'a [(u64, u16)],
    pyramid: Option<&'a crate::timeline::summary::MaxPyramid>,
}

/// The colour of the k-th model (its weight curve, its name in the titles and the cursor
/// pane): the theme's `curve_palette`, which shares no colour with a CID or a mark.
pub fn model_color(app: &App, k: usize) -> ratatui::style::Color {
    app.theme.curve_color(k)
}

/// The line of the k-th model's weight curve: with its colour, it tells the curves apart where
/// colour is gone (NO_COLOR) or where two meet.
pub fn curve_glyph(k: usize) -> &'static str {
    ["━", "═", "─", "┅"][k % 4]
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
        spans.push(Span::styled(
            format!("{} {}", curve_glyph(k), m.run.policy.id()),
            style,
        ));
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
    fn the_scale_follows_the_data_and_states_a_far_bound() {
        // 3 of 64 on 3 rows: each row one CID, the bound stated; on 2 rows too (in eighths)
        assert_eq!(Scale::new(3, 64, 2).top, 3);
        let s = Scale::new(3, 64, 3);
        assert_eq!((s.top, s.bound_on_scale), (3, false));
        assert_eq!(
            (s.eighths(3), s.eighths(1), s.row(1), s.row(3)),
            (24, 8, 1, 3)
        );
        // half the bound or more: the bound is the top
        let s = Scale::new(1, 2, 6);
        assert_eq!((s.top, s.bound_on_scale), (2, true));
        let s = Scale::new(40, 64, 6);
        assert_eq!((s.top, s.bound_on_scale), (64, true));
        // far more than the rows: a multiple of them
        let s = Scale::new(27, 128, 6);
        assert_eq!(s.top, 30);
        assert_eq!(s.ticks(), vec![(0, 0), (3, 20)]);
        let s = Scale::new(19, 128, 6);
        assert_eq!((s.top, s.bound_on_scale), (19, false));
        assert_eq!(s.ticks(), vec![(0, 0)]);
        // nothing in the window still draws a scale
        assert_eq!(Scale::new(0, 64, 3).top, 1);
    }

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
