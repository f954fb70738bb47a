//! The experiment's table as text: one column per kernel × vCPUs (the kernels side by side at
//! each CPU count), one row per metric with its median, its spread and over how many runs;
//! then the ratios, the 100 ms answer, the missing runs and the notes.

use super::capacity::Capacity;
use super::record::Missing;
use super::summary::{Group, METRICS, Ratio, Stat, label};
use std::fmt::Write;

fn cell(s: &Option<Stat>, finished: usize) -> String {
    match s {
        None => "-".into(),
        Some(s) if s.n <= 1 || s.min == s.max => format!("{}{}", num(s.median), of(s.n, finished)),
        Some(s) => format!(
            "{} [{}–{}]{}",
            num(s.median),
            num(s.min),
            num(s.max),
            of(s.n, finished)
        ),
    }
}

fn of(n: usize, finished: usize) -> String {
    if n == finished {
        String::new()
    } else {
        format!(" ({n}/{finished})")
    }
}

fn num(x: f64) -> String {
    if x == x.trunc() && x.abs() < 1e9 {
        format!("{}", x as i64)
    } else if x.abs() >= 100.0 {
        format!("{x:.0}")
    } else if x.abs() >= 10.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.2}")
    }
}

/// The whole report.
pub fn text(
    groups: &[Group],
    ratios: &[Ratio],
    capacity: &[Capacity],
    missing: &[Missing],
    notes: &[String],
) -> String {
    let mut o = String::new();
    // kernels side by side at each CPU count
    let mut order: Vec<&Group> = groups.iter().collect();
    order.sort_by_key(|g| g.cpus);
    let heads: Vec<String> = order
        .iter()
        .map(|g| format!("{} ({}/{} runs)", label(g), g.finished, g.planned))
        .collect();
    let rows: Vec<(&str, Vec<String>)> = METRICS
        .iter()
        .map(|(m, _)| {
            (
                *m,
                order
                    .iter()
                    .map(|g| cell(g.metrics.get(m).unwrap_or(&None), g.finished))
                    .collect::<Vec<String>>(),
            )
        })
        .filter(|(_, cells)| cells.iter().any(|c| c != "-"))
        .collect();
    let w0 = rows.iter().map(|r| r.0.len()).max().unwrap_or(6).max(6);
    let widths: Vec<usize> = (0..order.len())
        .map(|i| {
            rows.iter()
                .map(|r| r.1[i].chars().count())
                .chain([heads[i].chars().count()])
                .max()
                .unwrap_or(1)
        })
        .collect();
    let line = |o: &mut String, first: &str, cells: &[String]| {
        let _ = write!(o, "{first:<w0$}");
        for (c, w) in cells.iter().zip(&widths) {
            let pad = w.saturating_sub(c.chars().count());
            let _ = write!(o, "  {}{c}", " ".repeat(pad));
        }
        o.push('\n');
    };
    line(&mut o, "metric", &heads);
    for (m, cells) in &rows {
        line(&mut o, m, cells);
    }
    let _ = writeln!(
        o,
        "(median [min–max] over the finished runs; (n/m) where only n of them measured it)"
    );
    if !ratios.is_empty() {
        let _ = writeln!(o, "\nratios of medians measured in this experiment");
        for r in ratios {
            let _ = writeln!(
                o,
                "  {:<44} {:<26} ×{}  ({} → {})",
                r.what,
                r.metric,
                num(r.ratio),
                num(r.a),
                num(r.b)
            );
        }
    }
    for c in capacity {
        let _ = writeln!(
            o,
            "\n100 ms complete scan, {} in batches of {}{}: a batch call costs {} µs{}",
            c.kernel_release.as_deref().unwrap_or(&c.kernel),
            c.batch_cpus,
            if c.batch_is_kernels_own {
                ""
            } else {
                " (as if it had the patches)"
            },
            num(c.call_us),
            if c.batch_is_kernels_own {
                " (measured)".to_string()
            } else {
                format!(" ({} µs per CPU fitted)", num(c.per_cpu_us))
            }
        );
        let opt = |v: Option<u64>| v.map_or("-".to_string(), |v| v.to_string());
        let _ = writeln!(
            o,
            "  CPUs needed: {} from the scan's own cost; {} with the measured {} µs between batches; {} from the complete scans measured",
            opt(c.cpus_for_100ms_scan_only),
            opt(c.cpus_for_100ms_with_gaps),
            c.gap_us.map_or("-".into(), num),
            opt(c.cpus_for_100ms_from_complete_scans)
        );
    }
    if let Some(c) = capacity.first() {
        let _ = writeln!(o, "  cost model: {}", c.cost_model);
    }
    if !missing.is_empty() {
        let _ = writeln!(o, "\nmissing runs (not in any figure above)");
        for m in missing {
            let _ = writeln!(
                o,
                "  {} at {} vCPUs, repeat {}: {}",
                m.kernel, m.cpus, m.repeat, m.why
            );
        }
    }
    for n in notes {
        let _ = writeln!(o, "\nnote: {n}");
    }
    o
}
