//! The title line: the process shown and the keys to start with.

use super::pane::{Pane, Rows};
use crate::ui::app::App;
use crate::ui::keys::{Action, keys_for};
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
            MmSel::Mm(m) => app.state.mm_label(m),
        };
        let k = |a: Action| keys_for(&app.bindings, a);
        let (count, process_hint) = if sel.mm_list.is_empty() {
            // nothing to cycle: the capture names no process
            ("  (no process known)".to_string(), String::new())
        } else {
            (
                format!("  [{}/{}]", sel.mm_pos, sel.mm_list.len()),
                format!("{}: next process  ", k(Action::NextMm)),
            )
        };
        let hints = format!(
            "   {process_hint}{}: search  {}: legend  {}: keys  {}: quit",
            k(Action::Search),
            k(Action::ToggleLegend),
            k(Action::ToggleHelp),
            k(Action::Quit)
        );
        let used = 11 + shown.chars().count() + count.chars().count();
        // on a narrow screen, the keys that explain the rest
        let hints = if used + hints.chars().count() > area.width as usize {
            format!(
                "  {} keys  {} legend  {} quit",
                k(Action::ToggleHelp),
                k(Action::ToggleLegend),
                k(Action::Quit)
            )
        } else {
            hints
        };
        Line::from(vec![
            Span::styled(
                " cidscope ",
                theme.mark(theme.title).add_modifier(Modifier::BOLD),
            ),
            Span::styled("│ ", theme.dim()),
            Span::styled(shown, Style::default().add_modifier(Modifier::BOLD)),
            Span::styled(count, theme.dim()),
            Span::styled(hints, theme.dim()),
        ])
        .render(area, buf);
    }
}
