//! The title line: the process shown and the keys to start with.

use super::detail::mm_label;
use super::pane::{Pane, Rows};
use crate::ui::app::App;
use crate::ui::selection::MmSel;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

pub struct TitleBar;

impl Pane for TitleBar {
    fn rows(&self, _app: &App, _screen: Rect) -> Rows {
        Rows::Fixed(1)
    }

    fn draw(&self, app: &App, _screen: Rect, area: Rect, buf: &mut Buffer) {
        let theme = &app.theme;
        let sel = &app.state.sel;
        let shown = match sel.selected() {
            MmSel::All => "all tasks".to_string(),
            MmSel::Mm(m) => mm_label(&app.state, m),
        };
        Line::from(vec![
            Span::styled(
                " cidscope ",
                theme.mark(theme.title).add_modifier(Modifier::BOLD),
            ),
            Span::styled("│ ", theme.dim()),
            Span::styled(shown, Style::default().add_modifier(Modifier::BOLD)),
            Span::styled(
                format!("  [{}/{}]", sel.mm_pos, sel.mm_list.len()),
                theme.dim(),
            ),
            Span::styled(
                "   Tab: next process  /: search  ?: keys  q: quit",
                theme.dim(),
            ),
        ])
        .render(area, buf);
    }
}
