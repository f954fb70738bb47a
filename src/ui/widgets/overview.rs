//! The dense overview (`w`), in place of the lanes and the graph: every CPU over the whole
//! capture, a half cell per CPU and column (`▀`: the upper CPU in the foreground colour, the
//! lower in the background), coloured by the CID the selected process holds there. 64 CPUs
//! take 32 rows. The region Enter zooms into is shown by its time labels reversed and its CPUs'
//! labels marked.

use super::axis::TimeAxis;
use super::lanes::{Admit, Shown, cells};
use super::pane::{Pane, Rows};
use super::ruler::ruler_labels;
use crate::timeline::SegLane;
use crate::ui::app::App;
use crate::ui::overlays::Region;
use crate::ui::overview::{cpu_rows, per_row};
use crate::ui::viewport::full_window;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::widgets::{Block, Borders, Widget};

pub struct Overview;

/// The lanes the overview draws: the observed set, else (sim, a demo of models) the first
/// model's slots. (name, lanes, admission, summary pyramids).
fn primary(
    app: &App,
) -> (
    String,
    &[SegLane],
    Admit,
    Option<&[crate::timeline::summary::LanePyramid]>,
) {
    let st = &app.state;
    let sums = st
        .derived
        .summaries
        .as_ref()
        .filter(|s| s.sel == st.sel.selected());
    match st.models.views.first() {
        Some(m) if !st.models.show_observed => (
            format!("{} model", m.run.policy.id()),
            &m.lanes[..],
            if m.mm.is_some() {
                Admit::Slots
            } else {
                Admit::AllTasks
            },
            sums.and_then(|s| s.models.first()).map(|p| &p.0[..]),
        ),
        _ => (
            "observed".into(),
            &st.timeline.lanes[..],
            Admit::Selection,
            sums.map(|s| &s.observed[..]),
        ),
    }
}

/// The colour a cell of a CPU shows (`None`: nothing of the process there).
fn color(app: &App, shown: Shown) -> Option<Color> {
    match shown {
        Shown::Free => None,
        Shown::NoCid => Some(app.theme.dim),
        Shown::Cid { cid, .. } => Some(app.theme.cid_color(cid)),
    }
}

impl Pane for Overview {
    fn rows(&self, app: &App, screen: Rect) -> Rows {
        if app.state.overlays.overview.is_none() {
            return Rows::Hidden;
        }
        let n = app.state.visible_cpus().len();
        // its border, the time row and the CPUs
        Rows::Fixed(2 + cpu_rows(n, screen.height))
    }

    fn draw(&self, app: &App, _screen: Rect, area: Rect, buf: &mut Buffer) {
        let st = &app.state;
        let theme = &app.theme;
        let Some(region) = st.overlays.overview else {
            return;
        };
        let visible = st.visible_cpus();
        let (name, lanes, admit, pyramids) = primary(app);
        let origin = st.origin();
        let rel = |t: u64| crate::events::fmt_dur(t.saturating_sub(origin));
        let shown_rows = area.height.saturating_sub(2) as usize;
        let per = per_row(visible.len(), st.view.screen.height);
        let first = region.cpu_top.min(visible.len());
        let last = (first + shown_rows * per).min(visible.len());
        let title = format!(
            " overview ({name}): {} CPUs{}, whole capture, {} per CPU and column · region +{}…+{}, CPUs {}-{} ",
            visible.len(),
            if last - first < visible.len() {
                format!(
                    " ({}-{} shown)",
                    visible.get(first).copied().unwrap_or(0),
                    visible.get(last.saturating_sub(1)).copied().unwrap_or(0)
                )
            } else {
                String::new()
            },
            if per == 2 {
                "a half cell"
            } else {
                "a row of dots"
            },
            rel(region.t0),
            rel(region.t0 + region.span),
            visible.get(region.cpu0).copied().unwrap_or(0),
            visible
                .get(region.cpu0 + region.ncpus - 1)
                .copied()
                .unwrap_or(0),
        );
        let block = Block::default()
            .borders(Borders::TOP)
            .title(title)
            .border_style(theme.dim());
        let inner = block.inner(area);
        block.render(area, buf);
        if inner.height == 0 {
            return;
        }
        let lw = super::axis::lane_label_width(st);
        let (t0, span) = full_window(&st.timeline);
        let axis = TimeAxis {
            t0,
            span,
            cols: inner.width.saturating_sub(lw),
        };
        draw_time_row(app, axis, &region, inner, lw, buf);
        let end = st.timeline.last_ts;
        let lane_cells = |cpu: usize| {
            let lane = lanes.get(cpu).unwrap_or(SegLane::empty());
            let pyr = pyramids.and_then(|p| p.get(cpu));
            cells(app, lane, end, admit, axis, pyr)
        };
        let in_region = |k: usize| k >= region.cpu0 && k < region.cpu0 + region.ncpus;
        for (r, row0) in (first..last).step_by(per).enumerate() {
            let y = inner.y + 1 + r as u16;
            if y >= inner.y + inner.height {
                break;
            }
            let cpus: Vec<usize> = (row0..(row0 + per).min(last)).map(|k| visible[k]).collect();
            let marked = (row0..row0 + per).any(in_region);
            let top = cpus[0];
            let label = if marked || row0 % 8 == 0 || r == 0 {
                format!("{:<w$}", format!("CPU{top}"), w = lw as usize - 1)
            } else {
                " ".repeat(lw as usize - 1)
            };
            let label_style = if marked {
                theme
                    .mark(theme.marker)
                    .add_modifier(Modifier::REVERSED | Modifier::BOLD)
            } else {
                theme.dim()
            };
            buf.set_stringn(inner.x, y, label, lw as usize - 1, label_style);
            let rows: Vec<_> = cpus.iter().map(|&c| lane_cells(c)).collect();
            for x in 0..axis.cols as usize {
                let colors: Vec<Option<Color>> = rows.iter().map(|c| color(app, c[x].0)).collect();
                let (sym, style) = if per == 2 {
                    match (colors[0], colors.get(1).copied().flatten()) {
                        (None, None) => continue,
                        (Some(a), None) => ("▀".to_string(), Style::default().fg(a)),
                        (None, Some(b)) => ("▄".to_string(), Style::default().fg(b)),
                        (Some(a), Some(b)) => ("▀".to_string(), Style::default().fg(a).bg(b)),
                    }
                } else {
                    // a row of two dots per CPU: the dots of braille rows 1-4
                    const DOTS: [u32; 4] = [0x09, 0x12, 0x24, 0xC0];
                    let bits: u32 = colors
                        .iter()
                        .zip(DOTS)
                        .filter(|(c, _)| c.is_some())
                        .map(|(_, d)| d)
                        .sum();
                    let Some(first) = colors.iter().flatten().next() else {
                        continue;
                    };
                    let ch = char::from_u32(0x2800 + bits).unwrap_or('⣿');
                    (ch.to_string(), Style::default().fg(*first))
                };
                let style = if theme.monochrome {
                    Style::default()
                } else {
                    style
                };
                buf.set_string(inner.x + lw + x as u16, y, sym, style);
            }
        }
    }
}

/// The time row of the overview: its labels, the region's columns reversed, the cursor.
fn draw_time_row(
    app: &App,
    axis: TimeAxis,
    region: &Region,
    inner: Rect,
    lw: u16,
    buf: &mut Buffer,
) {
    let theme = &app.theme;
    buf.set_string(
        inner.x,
        inner.y,
        format!("{:<w$}", "time", w = lw as usize),
        theme.dim(),
    );
    let style = crate::ui::glyphs::TIME_LABEL.style(theme, 0);
    for (x, label) in ruler_labels(axis, app.state.origin()) {
        buf.set_string(inner.x + lw + x, inner.y, label, style);
    }
    let from = axis.col_of(region.t0).unwrap_or(0);
    let to = axis
        .col_of(region.t0 + region.span)
        .unwrap_or(axis.cols.saturating_sub(1));
    for x in from..=to.min(axis.cols.saturating_sub(1)) {
        if let Some(cell) = super::cell::cell_in(buf, inner, inner.x + lw + x, inner.y) {
            if cell.symbol() == " " {
                cell.set_symbol("━");
            }
            cell.set_style(theme.mark(theme.marker).add_modifier(Modifier::BOLD));
        }
    }
    if let Some(x) = axis.col_of(app.state.cursor_ts()) {
        buf.set_string(
            inner.x + lw + x,
            inner.y,
            crate::ui::glyphs::CURSOR.sym,
            crate::ui::glyphs::CURSOR.style(theme, 0),
        );
    }
}
