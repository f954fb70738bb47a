//! The status bar: file, format, event count, visible window, lost events, warnings.

use crate::events::{fmt_dur, fmt_ts};
use crate::ui::app::App;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

pub struct StatusBar<'a> {
    pub app: &'a App,
}

impl Widget for StatusBar<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let app = self.app;
        let theme = &app.theme;
        if let Some(l) = &app.loading {
            use std::sync::atomic::Ordering;
            let done = l.progress.done.load(Ordering::Relaxed);
            let total = l.progress.total.load(Ordering::Relaxed).max(1);
            let frac = (done as f64 / total as f64).min(1.0);
            let bar_w = 24usize;
            let filled = (frac * bar_w as f64).round() as usize;
            let line = Line::from(vec![
                Span::styled(
                    format!(" loading {} ", app.trace.path),
                    Style::default().add_modifier(Modifier::BOLD),
                ),
                Span::styled("█".repeat(filled), theme.mark(theme.title)),
                Span::styled("░".repeat(bar_w - filled), theme.dim()),
                Span::raw(format!(
                    " {:>3.0}%  {} of {}  {} events so far — q quits at once",
                    frac * 100.0,
                    crate::sources::memory::human(done),
                    crate::sources::memory::human(total),
                    app.trace.events.len()
                )),
            ]);
            line.render(area, buf);
            return;
        }
        if let Some(l) = &app.live {
            let c = &l.counters;
            let state = if l.finished {
                Span::styled(" ■ ENDED ", Style::default().add_modifier(Modifier::BOLD))
            } else if l.paused {
                Span::styled(
                    " ❚❚ PAUSED (capture goes on) ",
                    theme.mark(theme.title).add_modifier(Modifier::BOLD),
                )
            } else {
                Span::styled(
                    " ● LIVE ",
                    theme.mark(theme.alarm).add_modifier(Modifier::BOLD),
                )
            };
            let mut spans = vec![
                state,
                Span::raw(format!(
                    "{:.0} events/s │ {} events │ lost {} │ {} │ {} rseq samples",
                    c.event_rate,
                    app.trace.events.len(),
                    c.lost_events,
                    crate::events::fmt_dur(c.duration_ns),
                    c.rseq_samples
                )),
            ];
            if !l.attached {
                spans.push(Span::styled(
                    " │ workload only (no kernel trace: live --attach, as root)",
                    theme.dim(),
                ));
            }
            spans.push(Span::styled(" │ space: pause/follow", theme.dim()));
            Line::from(spans).render(area, buf);
            return;
        }
        if let Some(e) = &app.load_error {
            Line::styled(format!(" load stopped: {e}"), theme.mark(theme.alarm)).render(area, buf);
            return;
        }
        // the index knows where the lost markers are: no walk over every event per frame
        let lost: u64 = app
            .timeline
            .lost_at
            .iter()
            .filter_map(|&i| match app.trace.events.get(i).map(|e| e.kind) {
                Some(crate::events::EventKind::Lost { count }) => count.map(u64::from),
                _ => None,
            })
            .sum();
        let markers = app.timeline.lost_at.len();
        let sep = Span::styled(" │ ", theme.dim());
        let cols = area.width.saturating_sub(8).max(1) as u64;
        let mut spans = vec![
            Span::styled(
                format!(" {} ", app.trace.path),
                Style::default().add_modifier(Modifier::BOLD),
            ),
            sep.clone(),
            Span::raw(app.trace.origin.id()),
            sep.clone(),
            Span::raw(format!("{} events", app.trace.events.len())),
            sep.clone(),
            Span::raw(format!(
                "window {}–{} ({}, {}/col)",
                fmt_ts(app.t0),
                fmt_ts(app.t1()),
                fmt_dur(app.span),
                fmt_dur(app.span / cols)
            )),
            sep.clone(),
        ];
        if markers > 0 {
            spans.push(Span::styled(
                format!("lost {lost} events ({markers} gaps)"),
                theme.mark(theme.lost),
            ));
        } else {
            spans.push(Span::styled("no lost events", theme.dim()));
        }
        if !app.trace.warnings.is_empty() {
            spans.push(sep);
            spans.push(Span::styled(
                format!(
                    "{} warnings (see `cidscope stats`)",
                    app.trace.warnings.len()
                ),
                theme.mark(theme.alarm),
            ));
        }
        Line::from(spans).render(area, buf);
    }
}
