//! The footer: the keys that matter in the current mode (a prompt, the picker, each overlay, a
//! demo, the main screen), and on its left the last message. The hints are laid out first and
//! never crowded out: the message gives way (cut with `…`), and on a narrow screen the least
//! needed hints go first — `?` (every key) and the way out always stay.

use super::pane::{Pane, Rows};
use crate::ui::app::App;
use crate::ui::keys::{Action, keys_for};
use crate::ui::overlays::{Front, Mode, PromptKind};
use crate::ui::session::demo::Demo;
use crate::ui::session::live::Live;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

pub struct Footer;

/// Hints kept on the narrowest screen (the first ones of each mode).
const ALWAYS: usize = 2;

/// The hints of the current mode, most needed first: (keys, what they do).
pub fn hints(app: &App) -> Vec<(String, String)> {
    let st = &app.state;
    let k = |a: Action| keys_for(&app.bindings, a);
    let h = |keys: String, what: &str| (keys, what.to_string());
    let close = format!("{}/{}", k(Action::Close), k(Action::Quit));
    match &st.overlays.mode {
        Mode::Prompt { kind, .. } => {
            let what = match kind {
                PromptKind::Search => "search",
                PromptKind::Cpus => "show these CPUs",
                PromptKind::GoTo => "go there",
            };
            return vec![
                h("Enter".into(), what),
                h("Esc".into(), "cancel"),
                h("Backspace".into(), "erase"),
            ];
        }
        Mode::SetMark | Mode::JumpMark => {
            return vec![h("a-z 0-9".into(), "the marker"), h("Esc".into(), "cancel")];
        }
        Mode::Picker(_) => {
            return vec![
                h("Esc".into(), "close"),
                h("Enter".into(), "show it"),
                h("↑↓ PgUp PgDn".into(), "move"),
                h("letters".into(), "filter (q too)"),
            ];
        }
        Mode::Normal => {}
    }
    let scroll = format!("{} {}", k(Action::PaneDown), k(Action::PaneUp));
    match st.overlays.front() {
        Some(Front::Help) => {
            return vec![
                h(close, "close the help"),
                h("↑↓ PgUp PgDn".into(), "scroll"),
            ];
        }
        Some(Front::Walk) => {
            return vec![
                h(close, "close the steps"),
                h(k(Action::CidSteps), "next step"),
                h(scroll, "scroll"),
            ];
        }
        Some(Front::Legend) => {
            return vec![h(close, "close the legend"), h(scroll, "scroll")];
        }
        Some(Front::Accounting) => {
            return vec![
                h(close, "close the accounting"),
                h(scroll, "scroll"),
                h(
                    format!("{} {}", k(Action::SetA), k(Action::SetB)),
                    "its range",
                ),
            ];
        }
        Some(Front::Overview) => {
            return vec![
                h(close, "close the overview"),
                h("Enter".into(), "zoom into the region"),
                h("←→".into(), "move it in time"),
                h("↑↓".into(), "over CPUs"),
                h("+ -".into(), "narrow, widen"),
                h("< >".into(), "fewer, more CPUs"),
            ];
        }
        None => {}
    }
    let mut v = vec![h(k(Action::ToggleHelp), "keys"), h(k(Action::Quit), "quit")];
    if let Some(d) = app.session_as::<Demo>() {
        v.push(h(k(Action::NextStep), "next step"));
        v.push(h(k(Action::TogglePause), "play/stop"));
        v.push(h(k(Action::PrevStep), "back"));
        if d.present {
            v.push(h(k(Action::ExportSvg), "SVG of the view"));
        }
    } else if app.session_as::<Live>().is_some() {
        v.push(h(k(Action::TogglePause), "pause/follow"));
    }
    v.push(h(k(Action::Search), "search"));
    v.push(h(k(Action::GoTo), "go to"));
    if !st.sel.mm_list.is_empty() {
        v.push(h(k(Action::PickProcess), "process"));
    }
    if !st.models.views.is_empty() {
        v.push(h(
            format!("{} {}", k(Action::NextTrigger), k(Action::PrevTrigger)),
            "compactions",
        ));
        if st.models.views.len() + usize::from(st.models.show_observed) >= 2 {
            v.push(h(k(Action::NextDiff), "next ≠"));
        }
    }
    v.push(h(k(Action::ToggleOverview), "overview"));
    v.push(h(k(Action::ToggleCidmask), "cidmask"));
    v.push(h(k(Action::CidSteps), "CID steps"));
    v.push(h(k(Action::ToggleLegend), "legend"));
    v.push(h(k(Action::JumpBack), "back"));
    v.push(h(k(Action::ExportSvg), "SVG"));
    v
}

/// The hints that fit `width` columns, as `keys what` separated by two spaces, with their
/// width; the first [`ALWAYS`] are kept whatever the width.
pub fn fitted(hints: &[(String, String)], width: usize) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut used = 0;
    for (i, (k, w)) in hints.iter().enumerate() {
        let len = k.chars().count() + 1 + w.chars().count() + 2;
        if i >= ALWAYS && used + len > width {
            break;
        }
        used += len;
        out.push((k.clone(), w.clone()));
    }
    out
}

impl Pane for Footer {
    fn rows(&self, _app: &App, _screen: Rect) -> Rows {
        Rows::Fixed(1)
    }

    fn draw(&self, app: &App, _screen: Rect, area: Rect, buf: &mut Buffer) {
        let theme = &app.theme;
        let width = area.width as usize;
        let all = hints(app);
        let msg = match &app.state.overlays.mode {
            Mode::Normal => app.state.overlays.message.as_ref().map(|m| format!(" {m}")),
            _ => None,
        };
        // the first hints always; a message before the other hints; they fill what is left
        let must = hints_width(&fitted(&all, 0));
        let msg_room = width.saturating_sub(must + 1);
        let msg = msg.map(|m| {
            if m.chars().count() > msg_room {
                let mut c: String = m.chars().take(msg_room.saturating_sub(1)).collect();
                c.push('…');
                c
            } else {
                m
            }
        });
        let msg_w = msg.as_ref().map_or(0, |m| m.chars().count());
        let shown = fitted(&all, width.saturating_sub(msg_w + 1));
        let hint_w = hints_width(&shown);
        let mut spans = Vec::new();
        if let Some(m) = msg.filter(|m| m.chars().count() > 1) {
            spans.push(Span::styled(
                m,
                theme.mark(theme.title).add_modifier(Modifier::BOLD),
            ));
        }
        spans.push(Span::raw(" ".repeat(width.saturating_sub(msg_w + hint_w))));
        let key = theme.text().add_modifier(Modifier::BOLD);
        for (k, w) in shown {
            spans.push(Span::styled(k, key));
            spans.push(Span::styled(format!(" {w}  "), theme.dim()));
        }
        Line::from(spans).render(area, buf);
    }
}

/// Columns the hints take.
fn hints_width(h: &[(String, String)]) -> usize {
    h.iter()
        .map(|(k, w)| k.chars().count() + 1 + w.chars().count() + 2)
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_hints_stay_and_the_rest_fit() {
        let h: Vec<(String, String)> = [("?", "keys"), ("q", "quit"), ("/", "search")]
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
        assert_eq!(fitted(&h, 100).len(), 3);
        assert_eq!(fitted(&h, 20).len(), 2);
        assert_eq!(fitted(&h, 0).len(), 2);
    }
}
