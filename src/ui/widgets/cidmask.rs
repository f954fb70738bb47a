//! The cidmask strip (`M`), under the weight graph: the selected process's cidmask itself, a
//! row per CID bit over the window — a cell in the CID's colour where the bit is set (a CPU of
//! the set shows that CID there), `·` where it is clear. Many bits share rows two by two (half
//! cells); more than the strip holds are cut, the title says which are shown. `e` walks the
//! kernel's steps of the cursor's CID change with the bitmap before and after.

use super::axis::TimeAxis;
use super::lanes::{Admit, Shown, cells};
use super::pane::{Pane, Rows};
use crate::timeline::SegLane;
use crate::ui::app::App;
use crate::ui::keys::{Action, keys_for};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::widgets::{Block, Borders, Widget};

pub struct CidmaskStrip;

/// Rows the strip may take for its bits on this screen.
fn max_rows(screen: Rect) -> u16 {
    match screen.height {
        40.. => 8,
        30.. => 5,
        _ => 3,
    }
}

/// The bits of the strip: CIDs 0 to the highest the set shows the process holding.
fn bits(app: &App) -> usize {
    let st = &app.state;
    let Some(mm) = st.sel.selected_mm() else {
        return 0;
    };
    let observed = st
        .timeline
        .mm_stats
        .get(mm.0 as usize)
        .and_then(|s| s.cids.last().copied());
    let model = st.models.views.iter().filter_map(|m| m.max_cid).max();
    let top = match first_model(app) {
        Some(_) => model.or(observed),
        None => observed.max(model),
    };
    top.map_or(1, |c| c.max(0) as usize + 1)
}

/// The model whose lanes the strip reads, when the capture's own are not shown (sim, demos of
/// models): the first.
fn first_model(app: &App) -> Option<usize> {
    let m = &app.state.models;
    (!m.show_observed && !m.views.is_empty()).then_some(0)
}

/// (rows for the bits, bits per row, bits shown).
fn shape(app: &App, screen: Rect) -> (u16, usize, usize) {
    let n = bits(app);
    let room = max_rows(screen) as usize;
    if n <= room {
        (n as u16, 1, n)
    } else {
        let shown = n.min(2 * room);
        (shown.div_ceil(2) as u16, 2, shown)
    }
}

/// Rows of the strip (0 when hidden), for the lanes' plan.
pub fn pane_rows(app: &App, screen: Rect) -> u16 {
    let ov = &app.state.overlays;
    if !ov.show_cidmask || ov.overview.is_some() || app.state.sel.selected_mm().is_none() {
        return 0;
    }
    1 + shape(app, screen).0
}

impl Pane for CidmaskStrip {
    fn rows(&self, app: &App, screen: Rect) -> Rows {
        match pane_rows(app, screen) {
            0 => Rows::Hidden,
            n => Rows::Fixed(n),
        }
    }

    fn draw(&self, app: &App, screen: Rect, area: Rect, buf: &mut Buffer) {
        let st = &app.state;
        let theme = &app.theme;
        let (rows, per_row, shown) = shape(app, screen);
        let total = bits(app);
        let model = first_model(app);
        let (name, lanes, admit): (String, &[SegLane], Admit) = match model {
            Some(k) => {
                let m = &st.models.views[k];
                (
                    format!("{} model", m.run.policy.id()),
                    &m.lanes,
                    Admit::Slots,
                )
            }
            _ => (
                "observed: CIDs its running tasks confirmed".into(),
                &st.timeline.lanes,
                Admit::Selection,
            ),
        };
        let label = st
            .sel
            .selected_mm()
            .map_or(String::new(), |m| st.mm_label(m));
        let cut = if shown < total {
            format!(" · bits 0-{} of {total} shown", shown - 1)
        } else {
            String::new()
        };
        let title = format!(
            " cidmask of {label} ({name}): a row per CID bit{cut} · {}: the kernel's steps of a CID change ",
            keys_for(&app.bindings, Action::CidSteps)
        );
        let block = Block::default()
            .borders(Borders::TOP)
            .title(title)
            .border_style(theme.dim());
        let inner = block.inner(area);
        block.render(area, buf);
        let lw = super::axis::lane_label_width(st);
        let axis = TimeAxis {
            t0: st.view.t0,
            span: st.view.span,
            cols: inner.width.saturating_sub(lw),
        };
        // per column, the bits set: a CPU of the set shows that CID (any CPU the filter shows)
        let mut set = vec![vec![false; shown]; axis.cols as usize];
        let pyramids = st
            .derived
            .summaries
            .as_ref()
            .filter(|s| s.sel == st.sel.selected());
        for cpu in st.visible_cpus() {
            let lane = lanes.get(cpu).unwrap_or(SegLane::empty());
            let pyr = match model {
                Some(k) => pyramids
                    .and_then(|s| s.models.get(k))
                    .and_then(|p| p.0.get(cpu)),
                None => pyramids.and_then(|s| s.observed.get(cpu)),
            };
            for (x, (cell, _)) in cells(app, lane, st.timeline.last_ts, admit, axis, pyr)
                .into_iter()
                .enumerate()
            {
                if let Shown::Cid { cid, .. } = cell
                    && cid >= 0
                    && (cid as usize) < shown
                {
                    set[x][cid as usize] = true;
                }
            }
        }
        let cursor = axis.col_of(st.cursor_ts());
        for r in 0..rows.min(inner.height) {
            let y = inner.y + r;
            let b0 = r as usize * per_row;
            let text = if per_row == 1 {
                format!("bit{b0}")
            } else {
                format!("{b0}-{}", b0 + 1)
            };
            buf.set_stringn(inner.x, y, text, lw as usize - 1, theme.dim());
            for (x, col) in set.iter().enumerate() {
                let bx = inner.x + lw + x as u16;
                let on = |b: usize| col.get(b).copied().unwrap_or(false);
                let (sym, style) = if per_row == 1 {
                    if on(b0) {
                        (" ", crate::ui::glyphs::CID.style(theme, b0 as i32))
                    } else {
                        ("·", crate::ui::glyphs::FREE.style(theme, 0))
                    }
                } else {
                    let c = |b: usize| on(b).then(|| theme.cid_color(b as i32));
                    match (c(b0), c(b0 + 1)) {
                        (None, None) => ("·", crate::ui::glyphs::FREE.style(theme, 0)),
                        (Some(a), None) => ("▀", Style::default().fg(a)),
                        (None, Some(b)) => ("▄", Style::default().fg(b)),
                        (Some(a), Some(b)) => ("▀", Style::default().fg(a).bg(b)),
                    }
                };
                buf.set_string(bx, y, sym, style);
                if Some(x as u16) == cursor
                    && let Some(cell) = super::cell::cell_in(buf, inner, bx, y)
                {
                    let s = cell
                        .style()
                        .add_modifier(ratatui::style::Modifier::REVERSED);
                    cell.set_style(s);
                }
            }
        }
    }
}
