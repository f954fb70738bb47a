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
