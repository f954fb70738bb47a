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

/// Where each shown pane of [`PANES`] goes on a screen of this size, top to bottom.
///
/// Fixed panes get their rows; each run of panes between them shares the rest (at least the
/// sum of its `Fill` minimums): its `Upto` panes take their rows first, in order, as far as
/// they go, and its `Fill` panes share what is left.
pub fn layout(app: &App, screen: Rect) -> Vec<(&'static dyn Pane, Rect)> {
    layout_of(PANES, app, screen)
}

fn layout_of(
    panes: &[&'static dyn Pane],
    app: &App,
    screen: Rect,
) -> Vec<(&'static dyn Pane, Rect)> {
    let shown: Vec<Wants> = panes
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
    if let super::overlays::Mode::Picker(p) = &app.state.overlays.mode {
        super::widgets::picker::PickerOverlay { app, picker: p }.render(screen, f.buffer_mut());
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sources::{LoadOptions, load_bytes};
    use crate::ui::keys::Action;
    use ratatui::buffer::Buffer;

    fn app() -> App {
        let t = load_bytes(
            "x",
            b"a-1 [000] ....  1.000000: rseq_update: cpu_id=0 node_id=0 mm_cid=0\n\
              b-2 [001] ....  2.000000: rseq_update: cpu_id=1 node_id=0 mm_cid=1\n",
            &LoadOptions::default(),
        )
        .expect("trace");
        App::new(t)
    }

    /// A pane that only wants rows.
    struct Wanting(Rows);

    impl Pane for Wanting {
        fn rows(&self, _app: &App, _screen: Rect) -> Rows {
            self.0
        }
        fn draw(&self, _app: &App, _screen: Rect, _area: Rect, _buf: &mut Buffer) {}
    }

    /// (rows wanted, y, height) of each pane laid out on a screen `height` rows high.
    fn placed(panes: &[&'static dyn Pane], height: u16) -> Vec<(Rows, u16, u16)> {
        let a = app();
        let screen = Rect::new(0, 0, 80, height);
        layout_of(panes, &a, screen)
            .into_iter()
            .map(|(p, r)| (p.rows(&a, screen), r.y, r.height))
            .collect()
    }

    #[test]
    fn fixed_panes_get_their_rows_and_the_flexible_ones_share_the_rest() {
        static TOP: Wanting = Wanting(Rows::Fixed(1));
        static NOTE: Wanting = Wanting(Rows::Upto(3));
        static GONE: Wanting = Wanting(Rows::Hidden);
        static REST: Wanting = Wanting(Rows::Fill(2));
        static BOTTOM: Wanting = Wanting(Rows::Fixed(1));
        let panes: [&'static dyn Pane; 5] = [&TOP, &NOTE, &GONE, &REST, &BOTTOM];
        assert_eq!(
            placed(&panes, 10),
            vec![
                (Rows::Fixed(1), 0, 1),
                (Rows::Upto(3), 1, 3),
                (Rows::Fill(2), 4, 5),
                (Rows::Fixed(1), 9, 1),
            ]
        );
        // an Upto pane takes no more than the flexible part holds
        static BIG: Wanting = Wanting(Rows::Upto(20));
        let panes: [&'static dyn Pane; 4] = [&TOP, &BIG, &REST, &BOTTOM];
        assert_eq!(
            placed(&panes, 10),
            vec![
                (Rows::Fixed(1), 0, 1),
                (Rows::Upto(20), 1, 8),
                (Rows::Fill(2), 9, 0),
                (Rows::Fixed(1), 9, 1),
            ]
        );
        // two Fill panes share evenly
        let panes: [&'static dyn Pane; 4] = [&TOP, &REST, &REST, &BOTTOM];
        let p = placed(&panes, 10);
        assert_eq!((p[1].1, p[1].2, p[2].1, p[2].2), (1, 4, 5, 4));
    }

    #[test]
    fn the_screen_is_stacked_without_gaps_and_accounting_takes_the_cursor_pane_place() {
        let mut a = app();
        let screen = Rect::new(0, 0, 120, 40);
        let heights = |a: &App| -> Vec<u16> {
            let l = layout(a, screen);
            let mut y = 0;
            for (_, r) in &l {
                assert_eq!((r.y, r.width), (y, 120), "contiguous, full width");
                y += r.height;
            }
            assert_eq!(y, 40);
            l.iter().map(|(_, r)| r.height).collect()
        };
        let h = heights(&a);
        // title, lanes, weight, cursor pane, status, footer
        assert_eq!((h.len(), h[0], h[2], h[4], h[5]), (6, 1, 7, 1, 1));
        a.apply(Action::ToggleAccounting);
        assert_eq!(heights(&a), h);
    }

    #[test]
    fn hits_name_the_lane_under_the_pointer_and_the_time_in_the_graph() {
        let a = app();
        let screen = Rect::new(0, 0, 120, 40);
        let l = layout(&a, screen);
        let (lanes, weight) = (l[1].1, l[2].1);
        // the lanes: top border, time labels, marks, then two rows per CPU (CIDs, tasks)
        let (_, t0) = hit(screen, &a, 20, lanes.y + 3).expect("on a lane");
        assert_eq!(hit(screen, &a, 20, lanes.y + 3).map(|h| h.0), Some(Some(0)));
        assert_eq!(hit(screen, &a, 20, lanes.y + 4).map(|h| h.0), Some(Some(0)));
        assert_eq!(hit(screen, &a, 20, lanes.y + 5).map(|h| h.0), Some(Some(1)));
        assert_eq!(hit(screen, &a, 20, lanes.y + 1).map(|h| h.0), Some(None));
        assert_eq!(hit(screen, &a, 20, lanes.y + 2).map(|h| h.0), Some(None));
        // the graph shares the lanes' time axis; the label column and the title hit nothing
        assert_eq!(hit(screen, &a, 20, weight.y + 3), Some((None, t0)));
        assert_eq!(hit(screen, &a, 0, lanes.y + 2), None);
        assert_eq!(hit(screen, &a, 20, 0), None);
    }
}
