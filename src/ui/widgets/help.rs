//! The help overlay, generated from the key table so it can never disagree with the keys.

use crate::ui::app::App;
use crate::ui::keys::help_rows;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Widget};

pub struct Help<'a> {
    pub app: &'a App,
}

impl Widget for Help<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let theme = &self.app.theme;
        let rows = help_rows(&self.app.bindings);
        let key_w = rows.iter().map(|r| r.0.chars().count()).max().unwrap_or(0);
        let mut lines: Vec<Line> = rows
            .iter()
            .map(|(k, d)| {
                Line::from(vec![
                    Span::styled(
                        format!(" {k:<key_w$}  "),
                        Style::default().add_modifier(Modifier::BOLD),
                    ),
                    Span::raw(*d),
                ])
            })
            .collect();
        lines.push(Line::raw(""));
        lines.push(Line::styled(
            " Lanes: a cell is the CID a task of the selected process holds on that CPU;",
            theme.dim(),
        ));
        lines.push(Line::styled(
            " ░ = not yet confirmed since the task was switched in, · = not running, - = no CID.",
            theme.dim(),
        ));
        lines.push(Line::styled(
            " Ruler: ! lost events, X alarm (duplicate CID or CID ≥ bound), ▼ cursor.",
            theme.dim(),
        ));
        let w = (lines.iter().map(|l| l.width()).max().unwrap_or(20) as u16 + 4).min(area.width);
        let h = (lines.len() as u16 + 2).min(area.height);
        let r = Rect {
            x: area.x + (area.width - w) / 2,
            y: area.y + (area.height - h) / 2,
            width: w,
            height: h,
        };
        Clear.render(r, buf);
        Paragraph::new(lines)
            .block(
                Block::default()
                    .borders(Borders::ALL)
                    .title(" keys — press any key to close ")
                    .border_style(theme.mark(theme.title)),
            )
            .render(r, buf);
    }
}
