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
        if let Some(e) = &app.load_error {
            Line::styled(format!(" load stopped: {e}"), theme.mark(theme.alarm)).render(area, buf);
            return;
        }
        let lost = app.trace.lost_events();
        let markers = app.timeline.lost_at.len();
        let sep = Span::styled(" │ ", theme.dim());
        let cols = area.width.saturating_sub(8).max(1) as u64;
        let mut spans = vec![
            Span::styled(
                format!(" {} ", app.trace.path),
                Style::default().add_modifier(Modifier::BOLD),
            ),
            sep.clone(),
            Span::raw(app.trace.format.id()),
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
