//! The title line: the process shown and the model line (the model chosen for the capture:
//! policy, variant, kernel, how well it predicts, trace gaps, probes). The keys are in the
//! footer, which nothing crowds out; here the model line shortens to the width, part by part,
//! least telling first.

use super::pane::{Pane, Rows};
use crate::ui::app::App;
use crate::ui::selection::MmSel;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

pub struct TitleBar;

/// One part of the model line: its text, a shorter form, and how long it stays (parts of a
/// lower `keep` are shortened, then dropped, first).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Part {
    pub text: String,
    pub short: Option<String>,
    pub keep: u8,
}

impl Part {
    pub fn new(text: impl Into<String>, keep: u8) -> Part {
        Part {
            text: text.into(),
            short: None,
            keep,
        }
    }

    pub fn or_short(mut self, short: impl Into<String>) -> Part {
        self.short = Some(short.into());
        self
    }
}

/// Parts of this `keep` are never dropped (only cut with the line).
pub const KEEP_ALWAYS: u8 = 9;

/// A line of parts joined by ` · ` that fits a width: shortened, then thinned, least kept first.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Parts(pub Vec<Part>);

impl Parts {
    pub fn push(&mut self, p: Part) {
        self.0.push(p);
    }

    /// The line at most `width` characters wide, parts joined by ` · `.
    pub fn fit(&self, width: usize) -> String {
        let kept = self.fit_parts(width, " · ");
        let s = kept
            .iter()
            .map(|p| p.1.as_str())
            .collect::<Vec<_>>()
            .join(" · ");
        if s.chars().count() <= width {
            return s;
        }
        let mut cut: String = s.chars().take(width.saturating_sub(1)).collect();
        if width > 0 {
            cut.push('…');
        }
        cut
    }

    /// The parts kept to fit `width` joined by `sep`: (index of the part, its text as kept),
    /// each part in turn, least kept first, shortened and then, if still too long, dropped
    /// (never a part of `keep` [`KEEP_ALWAYS`]).
    pub fn fit_parts(&self, width: usize, sep: &str) -> Vec<(usize, String)> {
        let mut cur: Vec<Option<String>> = self.0.iter().map(|p| Some(p.text.clone())).collect();
        let len = |v: &[Option<String>]| {
            let kept: Vec<&String> = v.iter().flatten().collect();
            kept.iter().map(|t| t.chars().count()).sum::<usize>()
                + sep.chars().count() * kept.len().saturating_sub(1)
        };
        // least kept first (the later of equals first): shortened, then dropped
        let mut order: Vec<usize> = (0..self.0.len()).collect();
        order.sort_by_key(|&i| (self.0[i].keep, std::cmp::Reverse(i)));
        for &i in &order {
            if len(&cur) <= width {
                break;
            }
            if let Some(s) = &self.0[i].short {
                cur[i] = Some(s.clone());
            }
            if len(&cur) > width && self.0[i].keep < KEEP_ALWAYS {
                cur[i] = None;
            }
        }
        cur.into_iter()
            .enumerate()
            .filter_map(|(i, t)| t.map(|t| (i, t)))
            .collect()
    }
}

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
        let count = if sel.mm_list.is_empty() {
            // nothing to cycle: the capture names no process
            "  (no process known)".to_string()
        } else {
            format!("  [{}/{}]", sel.mm_pos, sel.mm_list.len())
        };
        let used = 11 + shown.chars().count() + count.chars().count();
        let room = (area.width as usize).saturating_sub(used + 4);
        let model = model_parts(app).fit(room);
        let mut spans = vec![
            Span::styled(
                " cidscope ",
                theme.mark(theme.title).add_modifier(Modifier::BOLD),
            ),
            Span::styled("│ ", theme.dim()),
            Span::styled(shown, Style::default().add_modifier(Modifier::BOLD)),
            Span::styled(count, theme.dim()),
        ];
        if !model.is_empty() {
            spans.push(Span::styled("  │ ", theme.dim()));
            spans.push(Span::raw(model));
        }
        Line::from(spans).render(area, buf);
    }
}

/// `lazy-compact 6.4 · kernel 6.12.117 · predicted 90/100 (90.0%), 99/100 (99.0%) with 2
/// inferred steps · 3 trace gaps · probes 10/12`: the model chosen for the capture
/// (`model_agreement`'s policy, variant and kernel_version; `--policy` when the flag chose it),
/// its prediction by itself and with the inferred steps (`replaying…` while its thread runs),
/// the untraced steps its replay placed and its probe checks; empty without a chosen model. Another part (how well it predicts) is one more `push` with its `keep`.
pub fn model_parts(app: &App) -> Parts {
    let mut parts = Parts::default();
    let Some(c) = &app.state.models.chosen else {
        return parts;
    };
    let mut policy = c.policy.to_string();
    if let Some(v) = c.variant {
        policy.push_str(&format!(" {}", v.id()));
    }
    let by_flag = c.chosen_because.starts_with("--policy");
    if by_flag || c.kernel_version.is_none() {
        policy.push_str(" (--policy)");
    }
    parts.push(Part::new(policy, KEEP_ALWAYS));
    if let Some(k) = &c.kernel_version {
        // `6.18.15+deb13-cloud-amd64` → `6.18.15`
        let short: String = k.split(['+', '-']).next().unwrap_or(k.as_str()).to_string();
        parts.push(Part::new(format!("kernel {k}"), 5).or_short(format!("kernel {short}")));
    }
    let agreement = app
        .state
        .models
        .views
        .first()
        .and_then(|v| v.run.agreement.as_ref());
    // how well it predicts: by itself, then with the steps the inference placed (given up
    // before the kernel on a narrow screen: the model's lane set says it in its title too)
    if app.state.models.running.is_some() {
        parts.push(Part::new("replaying…", 4));
    } else if let Some(a) = agreement.filter(|a| a.checked > 0) {
        let (p, n, k) = (a.predicted.agreed, a.checked, a.inferred_steps.len());
        let full = crate::stats::policy::figures(p, a.agreed, n, k);
        let short = crate::stats::policy::figures_brief(p, a.agreed, n, k);
        parts.push(Part::new(full, 4).or_short(short));
    }
    let gaps = agreement.map_or(0, |a| a.trace_gaps.len());
    if gaps > 0 {
        parts.push(
            Part::new(
                format!("{gaps} trace gap{}", if gaps == 1 { "" } else { "s" }),
                2,
            )
            .or_short(format!("{gaps} gap{}", if gaps == 1 { "" } else { "s" })),
        );
    }
    // a capture with CID probes: how much of the kernel's state they read the model holds too
    // (and what the plain replay read, where an inferred step changed it)
    if let Some(a) = agreement.filter(|a| a.probe_checks.checked > 0) {
        let (p, plain) = (&a.probe_checks, a.predicted_probe_checks);
        let now = format!("probes {}/{}", p.matched, p.checked);
        parts.push(if plain.matched == p.matched {
            Part::new(now, 1)
        } else {
            Part::new(
                format!(
                    "probes predicted {}/{}, {}/{}",
                    plain.matched, plain.checked, p.matched, p.checked
                ),
                1,
            )
            .or_short(now)
        });
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_model_line_shortens_then_thins_least_kept_first() {
        let mut p = Parts::default();
        p.push(Part::new("lazy-compact 6.14", 9));
        p.push(Part::new("kernel 6.18.15+deb13-cloud-amd64", 5).or_short("kernel 6.18.15"));
        p.push(Part::new("1 trace gap", 2).or_short("1 gap"));
        p.push(Part::new("probes 10/12", 1));
        let full =
            "lazy-compact 6.14 · kernel 6.18.15+deb13-cloud-amd64 · 1 trace gap · probes 10/12";
        assert_eq!(p.fit(200), full);
        assert_eq!(
            p.fit(64),
            "lazy-compact 6.14 · kernel 6.18.15+deb13-cloud-amd64 · 1 gap"
        );
        assert_eq!(p.fit(45), "lazy-compact 6.14 · kernel 6.18.15");
        assert_eq!(p.fit(20), "lazy-compact 6.14");
        assert_eq!(p.fit(10), "lazy-comp…");
        assert!(p.fit(0).is_empty());
    }
}
