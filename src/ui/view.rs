//! The screen: the panes of [`PANES`] stacked top to bottom, the help overlay over them. A pure
//! function of [`App`].

use super::app::App;
use super::widgets::PANES;
use super::widgets::help::Help;
use super::widgets::pane::{Hit, Pane, Rows};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::widgets::{Block, Widget};

/// A pane and the rows it wants.
type Wants = (&'static dyn Pane, Rows);

/// Where each shown pane goes on a screen of this size, top to bottom.
///
/// Fixed panes get their rows; each run of panes between them shares the rest (at least the
/// sum of its `Fill` minimums): its `Upto` panes take their rows first, in order, as far as
/// they go, and its `Fill` panes share what is left.
pub fn layout(app: &App, screen: Rect) -> Vec<(&'static dyn Pane, Rect)> {
    let shown: Vec<Wants> = PANES
        .iter()
        .map(|&p| (p, p.rows(app, screen)))
        .filter(|(_, r)| *r != Rows::Hidden)
        .collect();
    // Runs of consecutive panes: one fixed pane, or the flexible ones between fixed panes.
    let mut runs: Vec<(Constraint, Vec<Wants>)> = Vec::new();
    for (p, rows) in shown {
        match rows {
            Rows::Fixed(n) => runs.push((Constraint::Length(n), vec![(p, rows)])),
            _ => {
                let min = match rows {
                    Rows::Fill(m) => m,
                    _ => 0,
                };
                match runs.last_mut() {
                    Some((Constraint::Min(m), run)) => {
                        *m += min;
                        run.push((p, rows));
                    }
                    _ => runs.push((Constraint::Min(min), vec![(p, rows)])),
                }
            }
        }
    }
    let areas = Layout::vertical(runs.iter().map(|r| r.0)).split(screen);
    let mut out = Vec::new();
    for ((_, run), &area) in runs.iter().zip(areas.iter()) {
        let mut left = area;
        let mut fills = Vec::new();
        for &(p, rows) in run {
            match rows {
                Rows::Fixed(_) => out.push((p, area)),
                Rows::Upto(n) => {
                    let h = n.min(left.height);
                    out.push((p, Rect { height: h, ..left }));
                    left.y += h;
                    left.height -= h;
                }
                _ => {
                    fills.push(out.len());
                    out.push((p, left));
                }
            }
        }
        // the Fill panes share the rows the Upto panes left, in their order
        let shares = Layout::vertical(fills.iter().map(|_| Constraint::Fill(1))).split(left);
        for (&k, &share) in fills.iter().zip(shares.iter()) {
            out[k].1 = share;
        }
    }
    out
}

pub fn draw(f: &mut Frame, app: &App) {
    let screen = f.area();
    f.render_widget(Block::default().style(app.theme.text()), screen);
    for (pane, area) in layout(app, screen) {
        pane.draw(app, screen, area, f.buffer_mut());
    }
    if app.state.overlays.show_help {
        Help { app }.render(screen, f.buffer_mut());
    }
}

/// What is under screen cell (col, row): the CPU lane (if on one) and the time.
pub fn hit(screen: Rect, app: &App, col: u16, row: u16) -> Option<Hit> {
    layout(app, screen)
        .into_iter()
        .find_map(|(pane, area)| pane.hit(app, screen, area, col, row))
}
