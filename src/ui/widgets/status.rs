//! The bottom line: a prompt or the last message when there is one, else the status bar (file,
//! format, event count, visible window, lost events, warnings; a load's progress; a live
//! session's counters).

use super::pane::{Pane, Rows};
use super::title::{KEEP_ALWAYS, Part, Parts};
use crate::events::{fmt_dur, fmt_ts};
use crate::ui::app::App;
use crate::ui::overlays::Mode;
use crate::ui::session::live::Live;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

pub struct StatusLine;

impl Pane for StatusLine {
    fn rows(&self, _app: &App, _screen: Rect) -> Rows {
        Rows::Fixed(1)
    }

    fn draw(&self, app: &App, _screen: Rect, area: Rect, buf: &mut Buffer) {
        let theme = &app.theme;
        let ov = &app.state.overlays;
        let prompt = match &ov.mode {
            Mode::Prompt { kind, text } => Some(format!("{}{text}▏", kind.label())),
            Mode::SetMark => Some("set marker: press a letter or digit (Esc cancels)".into()),
            Mode::JumpMark => {
                let names: String = app.state.sel.marks.keys().collect();
                Some(format!(
                    "jump to marker: press one of {names} (Esc cancels)"
                ))
            }
            Mode::Picker(_) => Some(
                "pick a process: type to filter (comm or tgid) · ↑↓ PgUp PgDn Home End · Enter shows it · Esc closes".into(),
            ),
            // messages are the footer's: the status bar stays
            Mode::Normal => None,
        };
        match prompt {
            Some(p) => Line::styled(
                format!(" {p}"),
                theme.mark(theme.title).add_modifier(Modifier::BOLD),
            )
            .render(area, buf),
            None => StatusBar { app }.render(area, buf),
        }
    }
}

pub struct StatusBar<'a> {
    pub app: &'a App,
}

impl Widget for StatusBar<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let app = self.app;
        let st = &app.state;
        let theme = &app.theme;
        if let Some(l) = &st.loading {
            use std::sync::atomic::Ordering;
            let done = l.progress.done.load(Ordering::Relaxed);
            if l.progress.total.load(Ordering::Relaxed) == 0 {
                // a stream (a pipe, trace_pipe): no size to measure against
                Line::from(vec![
                    Span::styled(
                        format!(" ● reading {} ", st.trace.path),
                        theme.mark(theme.title).add_modifier(Modifier::BOLD),
                    ),
                    Span::raw(format!(
                        " stream: {} read, {} events so far, the view follows — q quits",
                        crate::sources::memory::human(done),
                        st.trace.event_count()
                    )),
                ])
                .render(area, buf);
                return;
            }
            let total = l.progress.total.load(Ordering::Relaxed).max(1);
            let frac = (done as f64 / total as f64).min(1.0);
            let bar_w = 24usize;
            let filled = (frac * bar_w as f64).round() as usize;
            let line = Line::from(vec![
                Span::styled(
                    format!(" loading {} ", st.trace.path),
                    Style::default().add_modifier(Modifier::BOLD),
                ),
                Span::styled("█".repeat(filled), theme.mark(theme.title)),
                Span::styled("░".repeat(bar_w - filled), theme.dim()),
                Span::raw(format!(
                    " {:>3.0}%  {} of {}  {} events so far — q quits at once",
                    frac * 100.0,
                    crate::sources::memory::human(done),
                    crate::sources::memory::human(total),
                    st.trace.event_count()
                )),
            ]);
            line.render(area, buf);
            return;
        }
        if let Some(l) = app.session_as::<Live>() {
            let c = &l.counters;
            let state = if l.finished {
                Span::styled(" ■ ENDED ", Style::default().add_modifier(Modifier::BOLD))
            } else if l.paused {
                Span::styled(
                    " ❚❚ PAUSED (capture goes on) ",
                    theme.mark(theme.title).add_modifier(Modifier::BOLD),
                )
            } else {
                Span::styled(
                    " ● LIVE ",
                    theme.mark(theme.alarm).add_modifier(Modifier::BOLD),
                )
            };
            let mut spans = vec![state];
            if let Some(label) = &l.label {
                spans.push(Span::styled(format!("{label} │ "), theme.dim()));
            }
            spans.push(Span::raw(format!(
                "{:.0} events/s │ {} events │ lost {} │ {}",
                c.event_rate,
                st.trace.events.len(),
                c.lost_events,
                crate::events::fmt_dur(c.duration_ns),
            )));
            if st.samples.is_some() {
                spans.push(Span::raw(format!(" │ {} rseq samples", c.rseq_samples)));
            }
            if let Some(r) = &l.record {
                match r.error() {
                    Some(_) => spans.push(Span::styled(
                        " │ ✖ RECORDING STOPPED (write failed)",
                        theme.mark(theme.alarm).add_modifier(Modifier::BOLD),
                    )),
                    None => spans.push(Span::raw(format!(
                        " │ REC {} ({} events)",
                        r.path,
                        r.events.load(std::sync::atomic::Ordering::Relaxed)
                    ))),
                }
            }
            if let Some(s) = st.samples.as_ref().filter(|s| !s.attached) {
                spans.push(Span::styled(
                    format!(" │ workload only ({})", s.attach_hint()),
                    theme.dim(),
                ));
            }
            spans.push(Span::styled(" │ space: pause/follow", theme.dim()));
            Line::from(spans).render(area, buf);
            return;
        }
        if let Some(e) = &st.load_error {
            Line::styled(
                format!(" load stopped: {e} (events before it are shown)"),
                theme.mark(theme.alarm),
            )
            .render(area, buf);
            return;
        }
        // the index knows where the lost markers are: no walk over every event per frame
        let lost: u64 = st
            .timeline
            .lost_at
            .iter()
            .filter_map(|&i| match st.trace.events.get(i).map(|e| e.kind) {
                Some(crate::events::EventKind::Lost { count }) => count.map(u64::from),
                _ => None,
            })
            .sum();
        let markers = st.timeline.lost_at.len();
        // the columns the lanes' time axis has, so that a column here is one there
        let cols = area
            .width
            .saturating_sub(crate::ui::widgets::axis::lane_label_width(st))
            .max(1) as u64;
        let name = std::path::Path::new(&st.trace.path)
            .file_name()
            .map_or(st.trace.path.clone(), |n| n.to_string_lossy().into_owned());
        let mut parts = Parts::default();
        parts.push(
            Part::new(format!(" {}", st.trace.path), KEEP_ALWAYS).or_short(format!(" {name}")),
        );
        parts.push(Part::new(st.trace.origin.id(), 3));
        parts.push(Part::new(format!("{} events", st.trace.event_count()), 5));
        parts.push(
            Part::new(
                format!(
                    "window {}–{} ({}, {}/col)",
                    fmt_ts(st.view.t0),
                    fmt_ts(st.view.t1()),
                    fmt_dur(st.view.span),
                    fmt_dur(st.view.span / cols)
                ),
                KEEP_ALWAYS,
            )
            .or_short(format!(
                "{} shown, {}/col",
                fmt_dur(st.view.span),
                fmt_dur(st.view.span / cols)
            )),
        );
        let lost_part = parts.0.len();
        if markers > 0 {
            parts.push(Part::new(format!("lost {lost} events ({markers} gaps)"), 7));
        } else {
            parts.push(Part::new("no lost events", 1));
        }
        let warn_part = parts.0.len();
        if !st.trace.warnings.is_empty() {
            let n = st.trace.warnings.len();
            parts.push(
                Part::new(
                    format!(
                        "{n} warning{} (see `cidscope stats`)",
                        if n == 1 { "" } else { "s" }
                    ),
                    6,
                )
                .or_short(format!("{n} warning{}", if n == 1 { "" } else { "s" })),
            );
        }
        let sep = Span::styled(" │ ", theme.dim());
        let mut spans = Vec::new();
        for (k, (i, text)) in parts
            .fit_parts(area.width as usize, " │ ")
            .into_iter()
            .enumerate()
        {
            if k > 0 {
                spans.push(sep.clone());
            }
            spans.push(match i {
                0 => Span::styled(text, Style::default().add_modifier(Modifier::BOLD)),
                i if i == lost_part && markers > 0 => Span::styled(text, theme.mark(theme.lost)),
                i if i == lost_part => Span::styled(text, theme.dim()),
                i if i == warn_part => Span::styled(text, theme.mark(theme.alarm)),
                _ => Span::raw(text),
            });
        }
        Line::from(spans).render(area, buf);
    }
}
