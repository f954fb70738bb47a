//! The title line: the process shown, the model chosen for the capture (policy, variant,
//! kernel, trace gaps), and the keys to start with.

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
        let model = model_text(app);
        let used = 11 + shown.chars().count() + count.chars().count() + model.chars().count();
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
            Span::raw(model),
            Span::styled(hints, theme.dim()),
        ])
        .render(area, buf);
    }
}

/// `  │ lazy-compact 6.4 · kernel 6.12.117 · 3 trace gaps`: the model chosen for the capture
/// (`model_agreement`'s policy, variant and kernel_version; `--policy` when the flag chose it)
/// and the untraced steps its replay placed; empty without a chosen model.
pub fn model_text(app: &App) -> String {
    let Some(c) = &app.state.models.chosen else {
        return String::new();
    };
    let mut t = format!("  │ {}", c.policy);
    if let Some(v) = c.variant {
        t.push_str(&format!(" {}", v.id()));
    }
    match &c.kernel_version {
        Some(k) if c.chosen_because.starts_with("--policy") => {
            t.push_str(&format!(" (--policy) · kernel {k}"))
        }
        Some(k) => t.push_str(&format!(" · kernel {k}")),
        None => t.push_str(" (--policy)"),
    }
    let agreement = app
        .state
        .models
        .views
        .first()
        .and_then(|v| v.run.agreement.as_ref());
    let gaps = agreement.map_or(0, |a| a.trace_gaps.len());
    if gaps > 0 {
        t.push_str(&format!(
            " · {gaps} trace gap{}",
            if gaps == 1 { "" } else { "s" }
        ));
    }
    // a capture with CID probes: how much of the kernel's state they read the model holds too
    if let Some(p) = agreement.map(|a| &a.probe_checks).filter(|p| p.checked > 0) {
        t.push_str(&format!(" · probes {}/{}", p.matched, p.checked));
    }
    t
}
