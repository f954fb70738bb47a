//! The process picker overlay: the filter line, then a row per process (comm, tgid, threads,
//! rseq_updates, CIDs seen, born in the capture), the cursor's row highlighted, scrolled so the
//! cursor stays in view.

use crate::ui::app::App;
use crate::ui::process_list::{Picker, PickerRow};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Widget};

pub struct PickerOverlay<'a> {
    pub app: &'a App,
    pub picker: &'a Picker,
}

/// CIDs seen, shortened to `max` characters: `[0, 1, 2]`, `0-15 (16)`.
fn cids_text(cids: &[i32], max: usize) -> String {
    if cids.is_empty() {
        return "-".into();
    }
    let list = format!("{cids:?}");
    if list.chars().count() <= max {
        return list;
    }
    let (a, b) = (cids[0], cids[cids.len() - 1]);
    format!("{a}-{b} ({})", cids.len())
}

fn row_text(r: &PickerRow) -> String {
    let tgid = r.tgid.map_or("-".to_string(), |t| t.to_string());
    let comm = if r.comm.is_empty() {
        r.label.clone()
    } else {
        r.comm.clone()
    };
    let born = match r.sel {
        crate::ui::selection::MmSel::All => "",
        _ if r.born => r.born_by,
        _ => "no",
    };
    format!(
        " {comm:<18.18} {tgid:>8} {:>7} {:>12}  {:<16.16} {born:<4}",
        r.threads,
        r.rseq_updates,
        cids_text(&r.cids, 16)
    )
}

impl Widget for PickerOverlay<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let theme = &self.app.theme;
        let p = self.picker;
        let rows = p.filtered();
        let w = 88.min(area.width);
        let h = (rows.len() as u16 + 5).clamp(7, area.height.saturating_sub(2).max(7));
        let h = h.min(area.height);
        let r = Rect {
            x: area.x + (area.width - w) / 2,
            y: area.y + (area.height - h) / 2,
            width: w,
            height: h,
        };
        Clear.render(r, buf);
        let bold = Style::default().add_modifier(Modifier::BOLD);
        let mut lines = vec![
            Line::from(vec![
                Span::styled(" filter: ", theme.dim()),
                Span::styled(format!("{}▏", p.filter), bold),
                Span::styled(
                    format!("   {} of {} shown", rows.len(), p.rows.len()),
                    theme.dim(),
                ),
            ]),
            Line::styled(
                format!(
                    " {:<18} {:>8} {:>7} {:>12}  {:<16} {}",
                    "comm", "tgid", "threads", "rseq_updates", "CIDs seen", "born in capture"
                ),
                theme.dim().add_modifier(Modifier::UNDERLINED),
            ),
        ];
        // the rows that fit, scrolled so the cursor's row is shown
        let room = h.saturating_sub(2 + 2) as usize;
        let first = p.pos.saturating_sub(room.saturating_sub(1));
        for (k, row) in rows.iter().enumerate().skip(first).take(room) {
            let style = if k == p.pos {
                theme
                    .mark(theme.selection)
                    .add_modifier(Modifier::REVERSED | Modifier::BOLD)
            } else {
                theme.text()
            };
            lines.push(Line::styled(row_text(row), style));
        }
        if rows.is_empty() {
            lines.push(Line::styled(" no process matches", theme.dim()));
        }
        Paragraph::new(lines)
            .style(theme.text())
            .block(
                Block::default()
                    .borders(Borders::ALL)
                    .title(" processes — type to filter, Enter shows, Esc closes ")
                    .border_style(theme.mark(theme.title)),
            )
            .render(r, buf);
    }
}

#[cfg(test)]
mod tests {
    use super::cids_text;

    #[test]
    fn long_cid_lists_are_shortened() {
        assert_eq!(cids_text(&[], 16), "-");
        assert_eq!(cids_text(&[0, 1], 16), "[0, 1]");
        let many: Vec<i32> = (0..16).collect();
        assert_eq!(cids_text(&many, 16), "0-15 (16)");
    }
}
