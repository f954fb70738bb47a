//! The cursor's detail pane: the time, the event under the cursor, who runs on each CPU with
//! which CID, the selected mm's observed cidmask, and the CID history of the event's task.

use super::pane::{Pane, Rows};
use crate::events::{EventKind, fmt_dur, fmt_ts};
use crate::ui::alarms::{self, Broken, Holder};
use crate::ui::app::App;
use crate::ui::glyphs;
use crate::ui::models::ModelView;
use crate::ui::samples::Samples;
use crate::ui::selection::MmSel;
use crate::ui::words::count;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders};

pub struct Detail;

/// A model at the cursor: its slots of the selected process, weight and triggers, and the
/// scan-batch widget (batch k of N, its CPUs, time since the complete scan began).
fn model_lines<'a>(app: &'a App, k: usize, m: &'a ModelView, ts: u64) -> Vec<Line<'a>> {
    let theme = &app.theme;
    let Some(mm) = m.mm else {
        return Vec::new();
    };
    let color = super::weight::model_color(app, k);
    let mut spans = vec![Span::styled(
        format!("  [{}] ", m.run.policy.id()),
        theme.mark(color).add_modifier(Modifier::BOLD),
    )];
    let slots = m.run.slots_at(mm, ts);
    if slots.iter().all(|s| s.cid.is_none()) {
        spans.push(Span::styled("no slot holds a CID  ", theme.dim()));
    }
    for s in slots.iter().filter(|s| s.cid.is_some()) {
        let cid = s.cid.unwrap_or(0);
        let state = if s.flags.contains(crate::timeline::Segment::LAZY) {
            "lazy"
        } else if s.flags.contains(crate::timeline::Segment::TRANSIT) {
            "transit"
        } else if s.tid != 0 {
            "in use"
        } else {
            "kept"
        };
        spans.push(Span::raw(format!("CPU{} ", s.cpu)));
        spans.push(Span::styled(
            format!(" {cid} "),
            glyphs::CID.style(theme, cid),
        ));
        spans.push(Span::styled(format!(" {state}  "), theme.dim()));
    }
    let (tick, resume) = m.run.compaction_counts(Some(mm));
    spans.push(Span::raw(format!(
        "│ weight {}  │ compactions: {tick} tick, {resume} resume",
        m.run.weight_at(mm, ts)
    )));
    let mut out = vec![Line::from(spans)];
    if !scanning(m, ts) {
        out.extend(scan_line(app, m, ts));
    }
    out
}

/// The scan-batch widget of a model at `ts`: batch k of N, its CPUs, the time since the
/// complete scan began, when the next is due.
fn scan_line<'a>(app: &'a App, m: &'a ModelView, ts: u64) -> Option<Line<'a>> {
    let theme = &app.theme;
    let mut out = None;
    if let Some((p, cpus, next)) = m.scan_at(ts) {
        let width = 16usize;
        let filled = (p.done as usize * width)
            .div_ceil(p.of.max(1) as usize)
            .min(width);
        let cpu_range = match (cpus.first(), cpus.last()) {
            (Some(a), Some(b)) if a != b => format!("CPUs {a}-{b}"),
            (Some(a), _) => format!("CPU {a}"),
            _ => "no CPU".into(),
        };
        let mut s = vec![
            Span::styled("      scan ", theme.dim()),
            Span::raw(format!("batch {} of {} ", p.done, p.of)),
            Span::styled("█".repeat(filled), theme.mark(theme.scan_batch)),
            Span::styled("░".repeat(width - filled), theme.dim()),
            Span::raw(format!(
                " {cpu_range} · {} since the complete scan began",
                fmt_dur(ts.saturating_sub(p.cycle_start))
            )),
        ];
        if p.complete {
            s.push(Span::styled(" · complete", theme.dim()));
        }
        if let Some(n) = next {
            if n > ts {
                s.push(Span::styled(
                    format!(" · next scan due in {}", fmt_dur(n - ts)),
                    theme.dim(),
                ));
            } else {
                s.push(Span::styled(" · next scan due now", theme.dim()));
            }
        }
        out = Some(Line::from(s));
    }
    out
}

/// Whether a model's scan is under way at `ts` (its widget then goes to the top of the pane).
fn scanning(m: &ModelView, ts: u64) -> bool {
    m.scan_at(ts).is_some_and(|(p, _, _)| !p.complete)
}

/// Live without a kernel trace: what the threads read from their rseq areas.
fn workload_only_lines<'a>(app: &'a App, samples: &'a Samples) -> Vec<Line<'a>> {
    let theme = &app.theme;
    let mut lines = vec![
        Line::raw(format!(
            "workload only: {} by {} (no kernel trace: {})",
            count(samples.trace.events.len() as u64, "CID read"),
            count(samples.trace.tasks.len() as u64, "thread"),
            samples.attach_hint()
        )),
        Line::styled(
            "  last CID each thread read from its rseq area:",
            theme.dim(),
        ),
    ];
    let mut last: std::collections::BTreeMap<crate::events::Tid, (u16, i32, u64)> =
        Default::default();
    for e in &samples.trace.events {
        if let EventKind::RseqUpdate { mm_cid, .. } = e.kind {
            last.insert(e.tid, (e.cpu, mm_cid, e.ts));
        }
    }
    for (tid, (cpu, cid, ts)) in last {
        lines.push(Line::from(vec![
            Span::raw(format!(
                "  {:>8} {:<16} CPU{cpu:<3} ",
                tid,
                samples.trace.comm_of(tid)
            )),
            Span::styled(format!(" CID {cid} "), glyphs::CID.style(theme, cid)),
            Span::styled(
                format!("  at +{}", fmt_dur(ts.saturating_sub(app.state.origin()))),
                theme.dim(),
            ),
        ]));
    }
    lines
}

/// The least rows of the pane under the graph (cursor, legend or accounting) on this screen.
pub fn min_rows(app: &App, screen: Rect) -> u16 {
    match screen.height {
        // a presenter's small screen: the narration says what matters; the lanes it names
        // come first
        ..30 if app.state.models.present => 1,
        50.. => 10,
        30.. => 6,
        _ => 3,
    }
}

/// The guarantees broken at the cursor, explained: who holds which CID where since when, and
/// what it means (wrapped to the pane's `width`: nothing of it is cut).
fn alarm_lines<'a>(app: &'a App, broken: &[Broken], width: u16) -> Vec<Line<'a>> {
    let st = &app.state;
    let theme = &app.theme;
    let alarm = glyphs::ALARM_CELL.style(theme, 0);
    let head = theme.mark(theme.alarm).add_modifier(Modifier::BOLD);
    let holder = |h: &Holder| {
        let since = h.since.map_or(String::new(), |t| {
            format!(", since +{}", fmt_dur(t.saturating_sub(st.origin())))
        });
        Line::from(vec![
            Span::raw(format!(
                "    {}-{} on CPU{} holds ",
                st.trace.comm_of(h.tid),
                h.tid,
                h.cpu
            )),
            Span::styled(format!(" CID {} ", h.cid), alarm),
            Span::styled(since, theme.dim()),
        ])
    };
    let mut out = Vec::new();
    for b in broken {
        let mm = st.mm_label(b.mm());
        match b {
            Broken::Duplicate { cid, holders, .. } => {
                out.push(Line::from(vec![
                    Span::styled("  ⚠ alarm: ", head),
                    Span::styled(
                        format!(
                            "{} running tasks of {mm} hold CID {cid} at once",
                            holders.len()
                        ),
                        head,
                    ),
                ]));
                out.extend(holders.iter().map(holder));
            }
            Broken::OutOfRange {
                holder: h, bound, ..
            } => {
                out.push(Line::from(vec![
                    Span::styled("  ⚠ alarm: ", head),
                    Span::styled(
                        format!(
                            "CID {} of {mm} is at or above its bound {bound} (possible CPUs)",
                            h.cid
                        ),
                        head,
                    ),
                ]));
                out.push(holder(h));
            }
        }
        for l in super::help::entry(vec![], 4, b.meaning(), width as usize) {
            out.push(Line::from(
                l.into_iter()
                    .map(|s| s.style(theme.dim()))
                    .collect::<Vec<_>>(),
            ));
        }
    }
    // a model's own alarms at this instant
    let ts = st.cursor_ts();
    for m in &st.models.views {
        for a in m
            .run
            .alarms
            .iter()
            .filter(|a| a.ts == ts && m.mm.is_none_or(|mm| a.mm() == mm))
        {
            out.push(Line::from(vec![
                Span::styled(format!("  ⚠ [{}] model alarm: ", m.run.policy.id()), head),
                Span::raw(format!("{} (CPU{})", a.describe(), a.cpu)),
            ]));
        }
    }
    out
}

/// The cursor pane's lines, most telling first (a small pane shows the first few).
/// What the capture lacks, what that means and how to record it (once it is read).
fn missing_lines<'a>(app: &'a App, width: u16) -> Vec<Line<'a>> {
    let theme = &app.theme;
    let mut out = Vec::new();
    for m in &app.state.timeline.missing {
        let text = format!("missing from the capture: {}", m.explain());
        for (i, l) in super::weight::wrap(&text, width.max(8) as usize - 4)
            .into_iter()
            .enumerate()
        {
            let indent = if i == 0 { "  " } else { "    " };
            out.push(Line::styled(format!("{indent}{l}"), theme.mark(theme.lost)));
        }
    }
    out
}

/// The CID metrics (docs/metrics.md) of the selected process, and of each capture beside this
/// one (its workload's process), a line each.
fn metrics_lines(app: &App) -> Vec<Line<'static>> {
    let st = &app.state;
    let theme = &app.theme;
    let cmp = &st.compare;
    let mut out = Vec::new();
    let lead = |name: &str| Span::styled(format!("  metrics [{name}] "), theme.dim());
    let first = if cmp.others.is_empty() {
        "this capture".to_string()
    } else {
        crate::ui::compare::capture_name(&st.trace)
    };
    match (&cmp.metrics, st.sel.selected_mm()) {
        (Some(all), Some(mm)) => {
            if let Some(m) = all.iter().find(|m| m.mm == mm.0) {
                out.push(Line::from(vec![
                    lead(&first),
                    Span::raw(crate::ui::compare::metrics_line(m)),
                ]));
            }
        }
        (None, _) if cmp.computing.is_some() => out.push(Line::from(vec![
            lead(&first),
            Span::styled("computing…".to_string(), theme.dim()),
        ])),
        (None, _) if cmp.too_large => out.push(Line::from(vec![
            lead(&first),
            Span::styled(
                "over 5 M events: `cidscope stats` has them".to_string(),
                theme.dim(),
            ),
        ])),
        _ => {}
    }
    for c in &cmp.others {
        let text = c.workload_metrics().map_or(
            "no process with CIDs".to_string(),
            crate::ui::compare::metrics_line,
        );
        out.push(Line::from(vec![lead(&c.name), Span::raw(text)]));
    }
    out
}

fn cursor_lines<'a>(app: &'a App, inner: Rect) -> Vec<Line<'a>> {
    let st = &app.state;
    let theme = &app.theme;
    let Some(ev) = st.cursor_event() else {
        if let Some(samples) = &st.samples {
            return workload_only_lines(app, samples);
        }
        let msg = if st.loading.is_some() {
            "reading the capture…"
        } else {
            "no events in this capture"
        };
        let mut lines = vec![Line::raw(msg)];
        lines.extend(missing_lines(app, inner.width));
        return lines;
    };
    let tl = &st.timeline;
    let bold = Style::default().add_modifier(Modifier::BOLD);
    let mut lines = vec![Line::from(vec![
        Span::styled(format!("{} ", fmt_ts(ev.ts)), bold),
        Span::styled(
            format!(
                "(+{})  event {} of {}",
                fmt_dur(ev.ts.saturating_sub(st.origin())),
                st.view.cursor + 1,
                st.trace.events.len()
            ),
            theme.dim(),
        ),
    ])];
    // a scan under way first (the progress of its batches), then why the selected process's
    // task at the cursor has its CID: they stay in view on the smallest screen
    for m in st.models.views.iter().filter(|m| scanning(m, ev.ts)) {
        if let Some(l) = scan_line(app, m, ev.ts) {
            let mut spans = vec![Span::styled(
                format!("  [{}] scan ", m.run.policy.id()),
                theme.dim(),
            )];
            // its own lead ("scan") is said already
            spans.extend(l.spans.into_iter().skip(1));
            lines.push(Line::from(spans));
        }
    }
    let focus = crate::ui::focus::focus_task(st);
    if let Some(task) = focus {
        lines.extend(super::why::lines(app, task, ev.ts, inner.width));
    }
    lines.extend(metrics_lines(app));
    lines.push(Line::from(format!(
        "  [{}] {}-{}: {}",
        ev.known_cpu().map_or("???".into(), |c| format!("{c:03}")),
        st.trace.comm_of(ev.tid),
        ev.tid,
        ev.describe(&st.trace.strings)
    )));
    lines.extend(missing_lines(app, inner.width));
    let broken = alarms::at_cursor(st);
    let alarm_lines = alarm_lines(app, &broken, inner.width);
    // the CPUs and CIDs of the broken guarantees, drawn in the alarm style below
    let alarming: Vec<(usize, i32)> = broken
        .iter()
        .flat_map(|b| match b {
            Broken::Duplicate { cid, holders, .. } => {
                holders.iter().map(|h| (h.cpu, *cid)).collect::<Vec<_>>()
            }
            Broken::OutOfRange { holder, .. } => vec![(holder.cpu, holder.cid)],
        })
        .collect();
    lines.extend(alarm_lines);
    if let Some(h) = st.describe_hover() {
        lines.push(Line::styled(format!("  {h}"), theme.dim()));
    }
    if let Some((a, b)) = st.sel.range() {
        let (i, j) = st.event_range(a, b);
        lines.push(Line::from(vec![
            Span::styled("  range A–B ", bold),
            Span::raw(format!(
                "Δt {}   {}   {}{}",
                fmt_dur(b - a),
                count((j - i) as u64, "event"),
                count(st.cid_changes_in(a, b) as u64, "CID change"),
                match st.sel.selected() {
                    MmSel::Mm(_) => " (this process)",
                    MmSel::All => "",
                }
            )),
        ]));
    }
    if let Some((q, hits)) = &st.sel.search {
        lines.push(Line::styled(
            format!("  search \"{q}\": {} matches (n / N)", hits.len()),
            theme.dim(),
        ));
    }
    let state = tl.state_after(&st.trace, st.view.cursor);
    let mut task_table = Vec::new();
    let mut cidmask_line = None;
    if let MmSel::Mm(mm) = st.sel.selected() {
        let mask = state.cidmask(mm);
        let mut tids: Vec<_> = state
            .tasks
            .iter()
            .filter(|(_, t)| t.mm == mm && !t.exited)
            .map(|(&tid, t)| (tid, *t))
            .collect();
        tids.sort_by_key(|&(tid, _)| tid);
        for (tid, t) in tids {
            let where_ = match t.on_cpu {
                Some(c) if state.cpus.get(c as usize).is_some_and(|s| s.tid == tid) => {
                    format!("running on CPU{c}")
                }
                _ => "not running".into(),
            };
            let cid = t.cid.map_or("-".to_string(), |c| c.to_string());
            task_table.push(Span::raw(format!(
                " {:>7} {:<16.16} {:>3} {:<18}",
                tid,
                st.trace.comm_of(tid),
                cid,
                where_
            )));
        }
        let stats = &tl.mm_stats[mm.0 as usize];
        let cids: Vec<String> = stats.cids.iter().map(i32::to_string).collect();
        let held: Vec<String> = mask.iter().map(i32::to_string).collect();
        // a simulated schedule's own CIDs are its model's (the model lines say them)
        cidmask_line = st.models.show_observed.then(|| {
            Line::from(vec![
                Span::styled(format!("  {}: ", st.mm_label(mm)), bold),
                Span::raw(format!(
                    "cidmask {{{}}} weight {}/{}   {}, {}, CIDs seen {}",
                    held.join(", "),
                    mask.len(),
                    tl.ncpus,
                    count(tl.mm_tasks(mm).len() as u64, "task"),
                    count(stats.rseq_updates, "rseq_update"),
                    cids.join(" ")
                )),
            ])
        });
    }
    let model_lines: Vec<Line> = st
        .models
        .views
        .iter()
        .enumerate()
        .flat_map(|(k, m)| model_lines(app, k, m, ev.ts))
        .collect();
    // what the lanes show first: the observed cidmask, or (no observed lanes, as in sim) the
    // models and their scan progress
    if st.models.show_observed {
        lines.extend(cidmask_line);
        lines.extend(model_lines);
    } else {
        lines.extend(model_lines);
        lines.extend(cidmask_line);
    }
    let task = focus.unwrap_or(match ev.kind {
        EventKind::SchedSwitch { next_tid, .. } => next_tid,
        _ => ev.tid,
    });
    let many = state.cpus.len() > 8;
    let visible = st.visible_cpus();
    for (cpu, slot) in state.cpus.iter().enumerate() {
        // on big machines, only the CPUs shown that run something
        if many && (slot.tid == 0 || !visible.contains(&cpu)) {
            continue;
        }
        let who = if slot.tid == 0 {
            "<idle>".to_string()
        } else {
            format!("{}-{}", st.trace.comm_of(slot.tid), slot.tid)
        };
        let mut spans = vec![Span::raw(format!("  CPU{cpu:<3} {who:<24} "))];
        spans.push(Span::styled(
            format!("{:<32} ", st.mm_label(slot.mm)),
            theme.dim(),
        ));
        match (slot.tid, slot.cid) {
            (0, _) => {}
            (_, None) => spans.push(Span::styled("no CID reported", theme.dim())),
            (_, Some(c)) if alarming.contains(&(cpu, c)) => spans.push(Span::styled(
                format!(" CID {c} ⚠ "),
                glyphs::ALARM_CELL.style(theme, 0),
            )),
            (_, Some(c)) if slot.confirmed => spans.push(Span::styled(
                format!(" CID {c} "),
                glyphs::CID.style(theme, c),
            )),
            (_, Some(c)) => spans.push(Span::styled(
                format!(" CID {c}? (reported before its switch-in; not confirmed yet)"),
                glyphs::UNCONFIRMED.style(theme, c),
            )),
        }
        lines.push(Line::from(spans));
    }
    let hist = tl.cid_history(&st.trace, task, st.view.cursor, 8);
    if !hist.is_empty() {
        let mut spans = vec![Span::raw(format!("  task {task} CID history: "))];
        for (i, cid) in hist {
            let t = st.trace.events.ts(i).saturating_sub(st.origin());
            spans.push(Span::styled(
                format!(" {cid} "),
                glyphs::CID.style(theme, cid),
            ));
            spans.push(Span::styled(
                format!(" from +{}  ", fmt_dur(t)),
                theme.dim(),
            ));
        }
        lines.push(Line::from(spans));
    }
    if !task_table.is_empty() {
        lines.push(Line::styled(
            format!(
                "  live tasks of this process ({}): tid, comm, last reported CID, where",
                task_table.len()
            ),
            theme.dim(),
        ));
        // two columns of 48 characters where the pane is wide enough
        let per_line = (inner.width as usize / 50).max(1);
        for chunk in task_table.chunks(per_line) {
            lines.push(Line::from(chunk.to_vec()));
        }
    }
    lines
}

impl Pane for Detail {
    /// The rest of the screen, but for the legend or the accounting pane, which take its place.
    fn rows(&self, app: &App, screen: Rect) -> Rows {
        let ov = &app.state.overlays;
        if ov.accounting.is_some() || ov.show_legend || ov.walk.is_some() {
            Rows::Hidden
        } else if ov.overview.is_some() {
            // the overview takes what it needs first
            Rows::Fill(1)
        } else {
            Rows::Fill(min_rows(app, screen))
        }
    }

    fn draw(&self, app: &App, _screen: Rect, area: Rect, buf: &mut Buffer) {
        let inner = Block::default().borders(Borders::TOP).inner(area);
        let lines = cursor_lines(app, inner);
        super::scrolled::draw(app, "cursor", lines, area, buf);
    }

    fn scroll_len(&self, app: &App, area: Rect) -> Option<(usize, u16)> {
        let inner = Block::default().borders(Borders::TOP).inner(area);
        Some((cursor_lines(app, inner).len(), inner.height))
    }
}
