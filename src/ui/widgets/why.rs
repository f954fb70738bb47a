//! "Why" at the cursor, in the cursor pane: what caused the cursor task's latest CID change as
//! far as the capture shows (switch-in onto a CPU's slot CID, migration, exec, birth) and as
//! each model shows (a compaction took the old CID, a mode switch, the slot's CID, a new
//! allocation); and each model's compaction nearest the cursor: its trigger, what it freed and
//! lazied, with CPUs. What neither can know is said to be "not in the capture".

use crate::events::{Tid, fmt_dur};
use crate::model::policies::Trigger;
use crate::model::policies::run::Compaction;
use crate::model::policies::why::{ModelCause, SlotCid};
use crate::timeline::why::Cause;
use crate::ui::app::App;
use crate::ui::models::ModelView;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

/// Appends a why line: its lead (`why [model]`) and its text wrapped into `width` columns under
/// the text's start, so nothing of it is cut on a narrow pane.
fn push<'a>(out: &mut Vec<Line<'a>>, lead: Vec<Span<'a>>, text: &str, style: Style, width: u16) {
    let lead_w = lead.iter().map(|s| s.width()).sum();
    for spans in super::help::entry_styled(lead, lead_w, &[(text, style)], width as usize) {
        out.push(Line::from(spans));
    }
}

/// `+1.2 ms before` / `+3 us after` / `at the cursor`, from `ts` to `at`.
fn offset(at: u64, ts: u64) -> String {
    match at.cmp(&ts) {
        std::cmp::Ordering::Less => format!("{} before", fmt_dur(ts - at)),
        std::cmp::Ordering::Greater => format!("{} after", fmt_dur(at - ts)),
        std::cmp::Ordering::Equal => "at the cursor".into(),
    }
}

/// `CID 1 (CPU0), CID 3 (CPU2)`.
fn slot_list(v: &[SlotCid]) -> String {
    if v.is_empty() {
        return "none".into();
    }
    v.iter()
        .map(|s| match s.cpu {
            Some(c) => format!("CID {} (CPU{c})", s.cid),
            None => format!("CID {}", s.cid),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// What started a compaction, in the kernel's words.
pub fn trigger_text(m: &ModelView, c: &Compaction) -> String {
    use crate::model::policies::PolicyKind;
    let trig = match (c.trigger, m.run.policy) {
        (Trigger::Tick, PolicyKind::LazyCompact) => "tick (task_mm_cid_work)",
        (Trigger::Tick, _) => "tick",
        (Trigger::Resume, _) => "resume (return to user)",
    };
    match c.batch {
        Some((k, n)) => format!("{trig}, scan batch {k} of {n}"),
        None => trig.to_string(),
    }
}

/// The nearest compaction of a model: trigger, where, what it freed and lazied.
pub fn compaction_text(m: &ModelView, c: &Compaction, ts: u64) -> String {
    let (freed, lazied) = m.run.compaction_slots(c);
    format!(
        "nearest compaction {}: {} on CPU{} (tid {}) · freed {} · lazied {} · weight after {}",
        offset(c.ts, ts),
        trigger_text(m, c),
        c.cpu,
        c.tid,
        slot_list(&freed),
        slot_list(&lazied),
        c.weight_after
    )
}

fn model_cause_text(m: &ModelView, cause: &ModelCause, old: Option<i32>, at: u64) -> String {
    match cause {
        ModelCause::First => "its first CID in the model (fork, exec or registration)".into(),
        ModelCause::ModeSwitch(c) => {
            let mode = match (c.percpu, c.transit) {
                (_, true) => "transit",
                (true, false) => "per-CPU",
                (false, false) => "per-task",
            };
            format!(
                "mode switch to {mode} ({}, max_cids {})",
                crate::ui::words::count(c.users, "user"),
                c.max_cids
            )
        }
        ModelCause::Compacted(c) => {
            let what = if old.is_some_and(|o| c.freed.contains(&o)) {
                "freed"
            } else {
                "lazied"
            };
            format!(
                "the compaction {} ({}) {what} the old CID",
                offset(c.ts, at),
                trigger_text(m, c)
            )
        }
        ModelCause::SlotOfCpu(cpu) => format!("switch-in on CPU{cpu} got the slot's CID"),
        ModelCause::Allocated(Some(cpu)) => {
            format!("on CPU{cpu}: a CID its slot did not hold, allocated from the cidmask")
        }
        ModelCause::Allocated(None) => "allocated from the cidmask".into(),
    }
}

/// The why lines for `task` at `ts`, wrapped into `width` columns.
pub fn lines<'a>(app: &'a App, task: Tid, ts: u64, width: u16) -> Vec<Line<'a>> {
    let st = &app.state;
    let theme = &app.theme;
    let mut out = Vec::new();
    if task == 0 {
        return out;
    }
    let label = Span::styled("  why ", theme.dim().add_modifier(Modifier::BOLD));
    // a simulated schedule's CIDs are its model's own: its model lines say why
    let observed = st
        .timeline
        .last_cid_change(&st.trace, task, st.view.cursor)
        .filter(|_| st.models.show_observed);
    if let Some(ch) = observed {
        let at = st.trace.events.ts(ch.idx);
        let mut text = format!(
            "task {task} {}CID {} on CPU{} ({}): {}",
            ch.old.map_or(String::new(), |c| format!("CID {c} → ")),
            ch.new,
            ch.cpu,
            offset(at, ts),
            ch.cause.describe()
        );
        if let Some((a, b)) = ch.migrated {
            text.push_str(&format!(" · migrated CPU{a}→CPU{b}"));
        }
        if ch.cause == Cause::Reassigned
            && let Some((c, t)) = ch.slot_before
        {
            text.push_str(&format!(
                " · CPU{} last showed CID {c} for the process (task {t})",
                ch.cpu
            ));
        }
        let own = st.cursor_event().is_some_and(|e| {
            e.tid == task
                || matches!(e.kind, crate::events::EventKind::SchedSwitch { next_tid, .. } if next_tid == task)
        });
        if !own {
            text.push_str(" · the process's latest CID change before the cursor");
        }
        let lead = vec![label.clone(), Span::styled("[observed] ", theme.dim())];
        push(&mut out, lead, &text, Style::default(), width);
    } else if st.models.show_observed && !st.timeline.cid_changes.is_empty() {
        let lead = vec![label.clone(), Span::styled("[observed] ", theme.dim())];
        let text = format!("task {task} has reported no CID up to the cursor");
        push(&mut out, lead, &text, theme.dim(), width);
    }
    let mm = st.sel.selected_mm();
    for (k, m) in st.models.views.iter().enumerate() {
        let color = super::weight::model_color(app, k);
        let tag = Span::styled(
            format!("[{}] ", m.run.policy.id()),
            theme.mark(color).add_modifier(Modifier::BOLD),
        );
        if let Some(w) = m.run.why_cid(task, ts).filter(|w| w.change.cid.is_none()) {
            let text = format!(
                "task {task} holds no CID in the model ({}){}",
                offset(w.change.ts, ts),
                w.old
                    .map_or(String::new(), |c| format!(": it last held CID {c}"))
            );
            push(
                &mut out,
                vec![label.clone(), tag.clone()],
                &text,
                Style::default(),
                width,
            );
        } else if let Some(w) = m.run.why_cid(task, ts) {
            let text = format!(
                "task {task} {}CID {} ({}): {}",
                match w.old {
                    Some(c) if w.change.cid == Some(c) => "again ".to_string(),
                    Some(c) => format!("CID {c} → "),
                    None => String::new(),
                },
                w.change.cid.map_or("none".into(), |c| c.to_string()),
                offset(w.change.ts, ts),
                model_cause_text(m, &w.cause, w.old, w.change.ts)
            );
            push(
                &mut out,
                vec![label.clone(), tag.clone()],
                &text,
                Style::default(),
                width,
            );
        }
        if let Some(c) = mm.and_then(|mm| m.run.nearest_compaction(mm, ts)) {
            let text = compaction_text(m, c, ts);
            push(
                &mut out,
                vec![label.clone(), tag],
                &text,
                Style::default(),
                width,
            );
        }
    }
    if st.models.views.is_empty() && mm.is_some() {
        push(
            &mut out,
            vec![label],
            "compactions: no tracepoint records them (--policy P shows a model's)",
            theme.dim(),
            width,
        );
    }
    out
}
