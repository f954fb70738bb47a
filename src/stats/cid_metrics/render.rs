//! The `cid metrics` lines of `stats` (text).

use super::ProcessMetrics;
use super::quantiles::Summary;

/// Processes shown in the text (the JSON has them all).
pub const SHOWN: usize = 8;

fn opt<T: std::fmt::Display>(v: Option<T>) -> String {
    v.map_or("unknown".into(), |v| v.to_string())
}

fn summary(s: &Option<Summary>, unit: &str) -> String {
    match s {
        Some(s) => format!(
            "{} calls p50 {} p99 {} max {} {unit}",
            s.count, s.p50, s.p99, s.max
        ),
        None => "none".into(),
    }
}

/// The text; `order` lists the processes most updates first, `omitted` counts the processes
/// whose metrics were not made (the text summary makes only those it shows).
pub fn text(
    o: &mut (impl std::fmt::Write + ?Sized),
    metrics: &[ProcessMetrics],
    notes: &[String],
    order: &[usize],
    omitted: u64,
) -> std::fmt::Result {
    if metrics.is_empty() && notes.is_empty() {
        return Ok(());
    }
    writeln!(o, "\ncid metrics (docs/metrics.md)")?;
    for &i in order.iter().take(SHOWN) {
        let Some(m) = metrics.get(i) else { continue };
        writeln!(o, "  {}: max CID {}", m.label, opt(m.max_cid))?;
        if let (Some(mean), Some(max)) = (m.span_excess_mean, m.span_excess_max) {
            writeln!(
                o,
                "    span excess    mean {mean} max {max} (over {} s running)",
                opt(m.running_s)
            )?;
        }
        if let Some(l) = &m.compaction_latency_ms {
            writeln!(
                o,
                "    compaction     {} falls resolved{}; {} unresolved at the end, {} cut by a new burst",
                l.count,
                match (l.p50, l.max) {
                    (Some(p), Some(x)) => format!(": latency p50 {p} ms, max {x} ms"),
                    _ => String::new(),
                },
                l.unresolved,
                l.interrupted
            )?;
        }
        if let Some(r) = m.cid_changes_per_thread_s {
            writeln!(
                o,
                "    CID changes    {} ({r} per thread-second)",
                m.cid_changes
            )?;
        }
        if let Some(c) = &m.compactions {
            let calls = match (c.calls, c.scanning_calls, c.early_exits) {
                (Some(a), Some(s), Some(e)) => {
                    format!("; {a} calls: {s} scanning, {e} early exits")
                }
                _ => String::new(),
            };
            writeln!(
                o,
                "    compactions    tick {} resume {} unknown {} (from the {}){calls}",
                c.tick, c.resume, c.unknown, c.source
            )?;
        }
        if let Some(s) = &m.scan_cost_us {
            writeln!(
                o,
                "    scan cost      {} calls p50 {} p99 {} max {} µs; scanning: {}; early exits: {}",
                s.count,
                s.p50,
                s.p99,
                s.max,
                summary(&s.scanning, "µs"),
                summary(&s.early_exit, "µs")
            )?;
            for b in &s.per_batch {
                writeln!(
                    o,
                    "      batch {:<3}   {} calls p50 {} p99 {} max {} µs",
                    b.batch, b.cost.count, b.cost.p50, b.cost.p99, b.cost.max
                )?;
            }
            if let Some(g) = &s.batch_gap_us {
                writeln!(
                    o,
                    "      between batches {}; complete scans {}",
                    summary(&Some(g.clone()), "µs").replace(" calls", " gaps"),
                    summary(&s.complete_scan_ms, "ms").replace(" calls", "")
                )?;
            }
        }
        for u in &m.unmeasured {
            writeln!(o, "    not measured: {u}")?;
        }
    }
    let more = metrics.len().saturating_sub(SHOWN) as u64 + omitted;
    if more > 0 {
        writeln!(
            o,
            "  ({more} more processes in `stats --json` under cid_metrics)"
        )?;
    }
    for n in notes {
        writeln!(o, "  not measured: {n}")?;
    }
    Ok(())
}
