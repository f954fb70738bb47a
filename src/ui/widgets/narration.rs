//! The narration pane of a demo: where the presenter is, what this moment shows, and how to go
//! on.

use super::pane::{Pane, Rows};
use crate::events::fmt_dur;
use crate::ui::app::App;
use crate::ui::session::demo::Demo;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph, Widget, Wrap};

pub struct Narration;

impl Pane for Narration {
    /// The rows the narration's text wraps to at the screen's width, over the cursor pane.
    fn rows(&self, app: &App, screen: Rect) -> Rows {
        let Some(d) = app.session_as::<Demo>() else {
            return Rows::Hidden;
        };
        let text = d.steps.get(d.current).map_or(0, |s| s.text.chars().count());
        let inner = screen.width.saturating_sub(4).max(20) as usize;
        Rows::Upto((text.div_ceil(inner) as u16 + 3).min(10))
    }

    fn draw(&self, app: &App, _screen: Rect, area: Rect, buf: &mut Buffer) {
        let theme = &app.theme;
        let Some(d) = app.session_as::<Demo>() else {
            return;
        };
        let Some(step) = d.steps.get(d.current) else {
            return;
        };
        let state = if d.playing {
            format!("▶ playing, {} of trace per second", fmt_dur(d.speed))
        } else {
            "❚❚ stopped".into()
        };
        let title = format!(
            " demo {} — step {} of {}: {} — {state} ",
            d.name,
            d.current + 1,
            d.steps.len(),
            step.title
        );
        let block = Block::default()
            .borders(Borders::ALL)
            .title(Span::styled(
                title,
                theme.mark(theme.title).add_modifier(Modifier::BOLD),
            ))
            .border_style(theme.mark(theme.title));
        let lines = vec![
            Line::raw(step.text.clone()),
            Line::styled(
                "space play/stop · ] next · [ back · > faster · < slower · q quit",
                theme.dim(),
            ),
        ];
        Paragraph::new(lines)
            .wrap(Wrap { trim: true })
            .block(block)
            .render(area, buf);
    }
}
