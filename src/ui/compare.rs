//! Captures side by side: `cidscope A.txt B.txt` (or an experiment's DIR) opens A as usual and
//! stacks each other capture's lane set under it, named by its kernel, on a time axis shared
//! relative to each workload's start (its busiest process's first run), so that scrubbing A
//! scrubs them all. The cursor pane shows each capture's CID metrics (docs/metrics.md).
//!
//! A companion is loaded whole before the TUI starts (they are `cidscope vm` recordings, a few
//! MB); the first capture streams in as any capture does.

use crate::events::Trace;
use crate::model::MmId;
use crate::stats::cid_metrics::ProcessMetrics;
use crate::timeline::Timeline;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, TryRecvError};

/// Captures above this many events get no CID metrics in the TUI (`cidscope stats` has them):
/// their pass would hold up the screen.
pub const METRICS_MAX_EVENTS: usize = 5_000_000;

/// A capture shown beside the first one.
pub struct Companion {
    /// Its kernel's release (else its file name).
    pub name: String,
    pub trace: Trace,
    pub timeline: Timeline,
    /// Its workload's process: the most rseq_updates apart from an init (tgid 1).
    pub mm: Option<MmId>,
    /// When that process first ran.
    pub start: u64,
    pub metrics: Vec<ProcessMetrics>,
}

/// The capture's name as the lane set's title shows it.
pub fn capture_name(t: &Trace) -> String {
    t.kernel_release.clone().unwrap_or_else(|| {
        std::path::Path::new(&t.path)
            .file_name()
            .map_or(t.path.clone(), |f| f.to_string_lossy().into_owned())
    })
}

/// The busiest process apart from the guest's init, and when it first ran.
pub fn workload(tl: &Timeline) -> Option<(MmId, u64)> {
    tl.mms_by_activity()
        .into_iter()
        .find(|m| tl.mms[m.0 as usize].tgid != Some(1) && tl.mms[m.0 as usize].leader != 1)
        .or_else(|| tl.mms_by_activity().first().copied())
        .map(|m| (m, tl.mms[m.0 as usize].first_ts))
}

/// The CID metrics of a loaded capture (none above [`METRICS_MAX_EVENTS`]).
pub fn metrics_of(t: &Trace) -> Option<Vec<ProcessMetrics>> {
    (t.events.len() <= METRICS_MAX_EVENTS).then(|| crate::stats::cid_metrics_of(t))
}

impl Companion {
    pub fn new(trace: Trace) -> Companion {
        let timeline = Timeline::build(&trace);
        let (mm, start) = workload(&timeline).map_or((None, 0), |(m, s)| (Some(m), s));
        Companion {
            name: capture_name(&trace),
            metrics: metrics_of(&trace).unwrap_or_default(),
            trace,
            timeline,
            mm,
            start,
        }
    }

    /// The metrics of its workload's process.
    pub fn workload_metrics(&self) -> Option<&ProcessMetrics> {
        let mm = self.mm?;
        self.metrics.iter().find(|m| m.mm == mm.0)
    }
}

/// The captures beside the first one, and the first one's own metrics.
#[derive(Default)]
pub struct Compare {
    pub others: Vec<Companion>,
    /// The first capture's CID metrics, once it is read (None: still reading, or too large).
    pub metrics: Option<Vec<ProcessMetrics>>,
    /// The thread computing them: a pass over the whole capture, off the drawing path (as the
    /// models' replay); [`Compare::take_metrics`] takes them in.
    pub computing: Option<Receiver<Option<Vec<ProcessMetrics>>>>,
    /// When the first capture's workload first ran (the shared time axis's zero).
    pub start: u64,
    /// The first capture is over [`METRICS_MAX_EVENTS`]: no metrics in the TUI.
    pub too_large: bool,
}

impl Compare {
    /// The first capture is read: its workload's start now, its metrics from a thread.
    pub fn first_read(&mut self, t: &Arc<Trace>, tl: &Timeline) {
        self.start = workload(tl).map_or(0, |w| w.1);
        self.metrics = None;
        self.too_large = t.events.len() > METRICS_MAX_EVENTS;
        if self.too_large {
            return;
        }
        let trace = Arc::clone(t);
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(metrics_of(&trace));
        });
        self.computing = Some(rx);
    }

    /// Takes in the first capture's metrics once their thread is done.
    pub fn take_metrics(&mut self) {
        let Some(rx) = &self.computing else {
            return;
        };
        match rx.try_recv() {
            Ok(m) => {
                self.too_large = m.is_none();
                self.metrics = m;
            }
            Err(TryRecvError::Empty) => return,
            Err(TryRecvError::Disconnected) => {}
        }
        self.computing = None;
    }
}

/// The companions' shift: a time of the first capture + shift is the same moment of the
/// companion's workload.
pub fn shift(first_start: u64, c: &Companion) -> i64 {
    c.start as i64 - first_start as i64
}

/// One line of metrics (what `stats` prints, short): max CID, span excess, compaction latency,
/// compactions by trigger, scan cost; "unknown" where the capture cannot say.
pub fn metrics_line(m: &ProcessMetrics) -> String {
    let mut parts = vec![format!(
        "max CID {}",
        m.max_cid.map_or("?".into(), |c| c.to_string())
    )];
    match (m.span_excess_mean, m.span_excess_max) {
        (Some(a), Some(b)) => parts.push(format!("span excess {a:.2} mean, {b} max")),
        _ => parts.push("span excess unknown".into()),
    }
    if let Some(l) = &m.compaction_latency_ms {
        let open = l.unresolved + l.interrupted;
        parts.push(match l.p50 {
            Some(p) => format!(
                "compaction {p:.1} ms p50 ({} of {} falls)",
                l.count,
                l.count + open
            ),
            None if open > 0 => format!("compaction: {open} falls unresolved"),
            None => "no fall".into(),
        });
    }
    if let Some(c) = &m.compactions {
        parts.push(format!(
            "{} tick / {} resume{} ({})",
            c.tick,
            c.resume,
            if c.unknown > 0 {
                format!(" / {} ?", c.unknown)
            } else {
                String::new()
            },
            c.source
        ));
    }
    if let Some(s) = m.scan_cost_us.as_ref().and_then(|s| s.scanning.as_ref()) {
        parts.push(format!("scan {:.1} µs p50", s.p50));
    }
    parts.join(" · ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_metrics_line_says_unknown_for_what_a_capture_cannot_show() {
        let text = std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/traces/metrics-burst.ftrace.txt"
        ))
        .unwrap();
        let t = crate::sources::load_bytes("b.txt", &text, &Default::default()).unwrap();
        let c = Companion::new(t);
        assert_eq!(c.name, "b.txt");
        let line = metrics_line(c.workload_metrics().unwrap());
        assert_eq!(
            line,
            "max CID 3 · span excess 1.88 mean, 3 max · compaction 250.0 ms p50 (1 of 1 falls)"
        );
    }
}
