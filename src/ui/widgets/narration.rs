//! The narration pane of a demo: where the presenter is, what this moment shows, and how to go
//! on. On small screens it drops its frame and its key line (the keys go into its title).

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

/// Below this height the narration has no frame and no key line.
const COMPACT_BELOW: u16 = 30;

const KEYS: &str = "space play/stop · ] next · [ back · > faster · < slower · q quit";

/// What a presenter's screen says while a step is asked.
const ASK: &str = "What happens next? Look at the lanes and the marks just after the cursor, \
                   then ] shows the moment and tells it.";

/// Lines `text` takes word-wrapped at `width` columns.
pub fn wrapped_lines(text: &str, width: usize) -> usize {
    let width = width.max(1);
    let mut lines = 1;
    let mut used = 0;
    for word in text.split_whitespace() {
        let w = word.chars().count();
        if used == 0 {
            used = w;
        } else if used + 1 + w <= width {
            used += 1 + w;
        } else {
            lines += 1;
            used = w;
        }
        // a word longer than the line wraps by itself
        while used > width {
            lines += 1;
            used -= width;
        }
    }
    lines
}

/// The rows the narration wants on this screen (0 outside a demo).
pub fn rows_wanted(app: &App, screen: Rect) -> u16 {
    let Some(d) = app.session_as::<Demo>() else {
        return 0;
    };
    let text = if d.asking {
        ASK
    } else {
        d.steps.get(d.current).map_or("", |s| s.text.as_str())
    };
    if screen.height < COMPACT_BELOW {
        let lines = wrapped_lines(text, screen.width as usize) as u16;
        (lines + 1).min(10)
    } else {
        let lines = wrapped_lines(text, screen.width.saturating_sub(2) as usize) as u16;
        (lines + 3).min(10)
    }
}

impl Pane for Narration {
    /// The rows the narration's text wraps to at the screen's width, over the cursor pane.
    fn rows(&self, app: &App, screen: Rect) -> Rows {
        match rows_wanted(app, screen) {
            0 => Rows::Hidden,
            n => Rows::Upto(n),
        }
    }

    fn draw(&self, app: &App, screen: Rect, area: Rect, buf: &mut Buffer) {
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
        let at = if d.before_first {
            format!("before step 1 of {} (] goes to it)", d.steps.len())
        } else {
            format!("step {} of {}", d.current + 1, d.steps.len())
        };
        let (step_title, text) = if d.asking {
            ("what happens next?".to_string(), ASK.to_string())
        } else {
            (step.title.clone(), step.text.clone())
        };
        let compact = screen.height < COMPACT_BELOW;
        let title = if compact {
            format!(" demo {} — {at}: {step_title} — {state} — {KEYS} ", d.name)
        } else {
            format!(" demo {} — {at}: {step_title} — {state} ", d.name)
        };
        let block = Block::default()
            .borders(if compact { Borders::TOP } else { Borders::ALL })
            .title(Span::styled(
                title,
                theme.mark(theme.title).add_modifier(Modifier::BOLD),
            ))
            .border_style(theme.mark(theme.title));
        let mut lines = vec![Line::raw(text)];
        if !compact {
            lines.push(Line::styled(KEYS, theme.dim()));
        }
        Paragraph::new(lines)
            .wrap(Wrap { trim: true })
            .block(block)
            .render(area, buf);
    }
}

#[cfg(test)]
mod tests {
    use super::wrapped_lines;

    #[test]
    fn word_wrapping_is_counted_like_the_paragraph_wraps() {
        assert_eq!(wrapped_lines("", 10), 1);
        assert_eq!(wrapped_lines("aaa bbb", 7), 1);
        assert_eq!(wrapped_lines("aaa bbb", 6), 2);
        assert_eq!(wrapped_lines("aaaa bbbb cccc", 9), 2);
        assert_eq!(wrapped_lines("abcdefghij", 4), 3);
    }
}
