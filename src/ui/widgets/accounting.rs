//! The rseq accounting pane: per task and overall, how often the rseq area was updated, at what
//! rate, per switch-in and per exit to user, and how many critical sections were aborted.

use super::pane::{Pane, Rows};
use crate::events::fmt_dur;
use crate::ui::app::App;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::Line;

/// Shown (`p`) in place of the cursor pane.
pub struct AccountingPane;

fn ratio(r: Option<f64>) -> String {
    r.map_or("-".into(), |v| format!("{v:.2}"))
}

impl Pane for AccountingPane {
    fn rows(&self, app: &App, screen: Rect) -> Rows {
        let ov = &app.state.overlays;
        match ov.accounting {
            // the legend, when also asked for, is in front
            Some(_) if !ov.show_legend && ov.walk.is_none() => {
                Rows::Fill(super::detail::min_rows(app, screen))
            }
            _ => Rows::Hidden,
        }
    }

    fn draw(&self, app: &App, _screen: Rect, area: Rect, buf: &mut Buffer) {
        if let Some((title, lines)) = lines(app) {
            super::scrolled::draw(app, &title, lines, area, buf);
        }
    }

    fn scroll_len(&self, app: &App, area: Rect) -> Option<(usize, u16)> {
        let (_, lines) = lines(app)?;
        Some((lines.len(), area.height.saturating_sub(1)))
    }
}

/// The pane's title and lines.
fn lines(app: &App) -> Option<(String, Vec<Line<'static>>)> {
    {
        let theme = &app.theme;
        let acc = app.state.overlays.accounting.as_ref()?;
        let scope = match app.state.sel.range() {
            Some((a, b)) => format!("range A–B, {}", fmt_dur(b - a)),
            None => format!("whole capture, {}", fmt_dur(acc.span_ns)),
        };
        let title = format!("rseq accounting ({scope}) — p closes");
        let header = format!(
            "  {:>8} {:<16} {:>9} {:>10} {:>7} {:>9} {:>9} {:>9} {:>9}",
            "tid", "comm", "updates", "per s", "fixups", "sw-ins", "upd/sw-in", "exits", "upd/exit"
        );
        let row = |tid: String, comm: String, a: &crate::stats::accounting::Account| {
            format!(
                "  {:>8} {:<16.16} {:>9} {:>10.1} {:>7} {:>9} {:>9} {:>9} {:>9}",
                tid,
                comm,
                a.rseq_updates,
                a.updates_per_s,
                a.rseq_ip_fixups,
                a.switch_ins,
                ratio(a.updates_per_switch_in),
                if acc.has_exit_events {
                    a.exits_to_user.to_string()
                } else {
                    "-".into()
                },
                ratio(a.updates_per_exit)
            )
        };
        let mut lines = vec![
            Line::styled(header, Style::default().add_modifier(Modifier::BOLD)),
            Line::styled(
                row(
                    "all".into(),
                    crate::ui::words::count(acc.tasks.len() as u64, "task"),
                    &acc.overall,
                ),
                Style::default().add_modifier(Modifier::BOLD),
            ),
        ];
        if !acc.has_exit_events {
            lines.push(Line::styled(
                "  (exits to user need raw_syscalls:sys_exit or irq:irq_handler_exit in the capture)",
                theme.dim(),
            ));
        }
        let mut tasks: Vec<_> = acc.tasks.iter().collect();
        tasks.sort_by_key(|(tid, a)| (std::cmp::Reverse(a.rseq_updates), **tid));
        // a frame builds at most this many rows (the busiest tasks); the rest are counted
        const MAX_ROWS: usize = 2000;
        let more = tasks.len().saturating_sub(MAX_ROWS);
        for (tid, a) in tasks.into_iter().take(MAX_ROWS) {
            lines.push(Line::raw(row(
                tid.to_string(),
                app.state.trace.comm_of(*tid),
                a,
            )));
        }
        if more > 0 {
            lines.push(Line::styled(
                format!(
                    "  … and {more} tasks with fewer updates (cidscope stats --json lists all)"
                ),
                theme.dim(),
            ));
        }
        Some((title, lines))
    }
}
