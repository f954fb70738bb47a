//! The help overlay, generated from the key table so it can never disagree with the keys.
//! It flows into two columns when one would not fit the screen.

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

const NOTES: [&str; 3] = [
    "Lanes: the CID a task of the selected process holds on each CPU; ░ not yet confirmed",
    "since the switch-in, · not running, - no CID. Ruler: ▼ cursor, ! lost events, X alarm,",
    "A/B range, letters = your markers. Mouse: click, drag a range, wheel zooms, hover names.",
];

impl Widget for Help<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let theme = &self.app.theme;
        let rows = help_rows(&self.app.bindings);
        let key_w = rows.iter().map(|r| r.0.chars().count()).max().unwrap_or(0);
        let avail = area.height.saturating_sub(4 + NOTES.len() as u16 + 1) as usize;
        let ncols = if rows.len() > avail { 2 } else { 1 };
        // In two columns, descriptions are cut to fit the screen.
        let longest = rows.iter().map(|r| r.1.chars().count()).max().unwrap_or(0);
        let room = (area.width as usize).saturating_sub(4) / ncols;
        let desc_w = longest.min(room.saturating_sub(key_w + 4)).max(8);
        let per_col = rows.len().div_ceil(ncols);
        let entry = |(k, d): &(String, &'static str)| {
            let d: String = if d.chars().count() > desc_w {
                d.chars().take(desc_w - 1).chain(['…']).collect()
            } else {
                d.to_string()
            };
            vec![
                Span::styled(
                    format!(" {k:<key_w$}  "),
                    Style::default().add_modifier(Modifier::BOLD),
                ),
                Span::raw(format!("{d:<desc_w$} ")),
            ]
        };
        let mut lines: Vec<Line> = (0..per_col)
            .map(|r| {
                let mut spans = Vec::new();
                for c in 0..ncols {
                    if let Some(row) = rows.get(c * per_col + r) {
                        spans.extend(entry(row));
                    }
                }
                Line::from(spans)
            })
            .collect();
        lines.push(Line::raw(""));
        for n in NOTES {
            lines.push(Line::styled(format!(" {n}"), theme.dim()));
        }
        let w = (lines.iter().map(|l| l.width()).max().unwrap_or(20) as u16 + 3).min(area.width);
        let h = (lines.len() as u16 + 2).min(area.height);
        let r = Rect {
            x: area.x + (area.width - w) / 2,
            y: area.y + (area.height - h) / 2,
            width: w,
            height: h,
        };
        Clear.render(r, buf);
        Paragraph::new(lines)
            .style(theme.text())
            .block(
                Block::default()
                    .borders(Borders::ALL)
                    .title(" keys — press any key to close ")
                    .border_style(theme.mark(theme.title)),
            )
            .render(r, buf);
    }
}
