//! The human-readable form of `stats` (without `--json`).

use super::{Stats, cid_metrics};
use crate::sources::shown_name;

/// The text of `stats`.
pub fn render_text(s: &Stats) -> String {
    let mut o = String::new();
    let _ = write_text(s, &mut o);
    o
}

/// The text of `stats`, written as it is made (a capture of a million processes has a million
/// lines: `stats` writes them to stdout instead of holding them).
pub fn write_text(s: &Stats, o: &mut (impl std::fmt::Write + ?Sized)) -> std::fmt::Result {
    writeln!(o, "file        {}", shown_name(&s.file))?;
    writeln!(o, "format      {}", s.format)?;
    writeln!(o, "events      {}", s.events)?;
    writeln!(o, "cpus        {:?} (CID bound {})", s.cpus, s.ncpus)?;
    if s.events_cpu_unknown > 0 {
        writeln!(
            o,
            "            {} events on an unknown CPU (the capture does not say; not in any CPU lane)",
            s.events_cpu_unknown
        )?;
    }
    if let (Some(a), Some(b)) = (s.first_ts_ns, s.last_ts_ns) {
        writeln!(
            o,
            "time        {} .. {} ({})",
            crate::events::fmt_ts(a),
            crate::events::fmt_ts(b),
            crate::events::fmt_dur(b - a)
        )?;
    }
    writeln!(
        o,
        "lost        {} events in {} markers",
        s.lost_events, s.lost_markers
    )?;
    if let Some(f) = &s.kernel_family_shown {
        writeln!(o, "kernel      {f}")?;
    }
    writeln!(o, "\nevent counts")?;
    for (k, v) in &s.event_counts {
        writeln!(o, "  {k:<24} {v:>10}")?;
    }
    writeln!(o, "\nprocesses (mm) with rseq_update")?;
    for p in s.processes.iter().filter(|p| p.rseq_updates > 0) {
        writeln!(
            o,
            "  mm {:<4} {:<28} {:>3} tasks {:>8} updates  CIDs {:?}",
            p.mm, p.label, p.task_count, p.rseq_updates, p.cids
        )?;
    }
    if s.tasks_mm_unknown > 0 {
        writeln!(
            o,
            "  ({} tasks with rseq_update have an unknown mm: capture with options/record-tgid or task:task_newtask)",
            s.tasks_mm_unknown
        )?;
    }
    if !s.reused_tasks.is_empty() {
        writeln!(
            o,
            "  ({} later tasks under reused tids, each counted apart: {})",
            s.reused_tasks.len(),
            s.reused_tasks
                .iter()
                .take(5)
                .map(|r| match r.task.tgid {
                    Some(g) => format!("tid {} in tgid {g}", r.tid),
                    None => format!("tid {}", r.tid),
                })
                .collect::<Vec<_>>()
                .join(", ")
        )?;
    }
    writeln!(o, "\nalarms      {}", s.alarms)?;
    for a in &s.alarm_samples {
        writeln!(o, "  {a}")?;
    }
    let mut order: Vec<usize> = (0..s.cid_metrics.len()).collect();
    let updates = |m: &cid_metrics::ProcessMetrics| {
        s.processes.get(m.mm as usize).map_or(0, |p| p.rseq_updates)
    };
    order.sort_by_key(|&i| std::cmp::Reverse(updates(&s.cid_metrics[i])));
    cid_metrics::render::text(
        o,
        &s.cid_metrics,
        &s.cid_metrics_notes,
        &order,
        s.cid_metrics_omitted,
    )?;
    if !s.warnings.is_empty() {
        writeln!(o, "\nwarnings")?;
        for w in &s.warnings {
            // the messages name the file: its control characters stay escaped
            writeln!(o, "  {}", shown_name(w))?;
        }
    }
    Ok(())
}
