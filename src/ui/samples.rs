//! Live: the CIDs the workload's threads read from their own rseq areas, as rseq_update events
//! of those threads in a trace of their own, indexed like a capture. They get their own lanes,
//! under the lanes of the kernel's rseq_update events.

use crate::events::{Event, EventKind, Origin, TaskMeta, Trace};
use crate::sources::live::{RseqSample, procfs};
use crate::timeline::Timeline;

/// rseq-area samples are committed once the newest sample is this much younger, so that
/// samples arriving slightly out of order from different threads still land in time order.
const SAMPLE_SLACK_NS: u64 = 20_000_000;

pub struct Samples {
    /// Whether the kernel's events come with them (`live --attach`); without, the samples are
    /// all there is to show.
    pub attached: bool,
    /// Whether this process may attach (root): then only `--attach` is missing.
    pub privileged: bool,
    /// The samples as rseq_update events of their threads (one trace, indexed like a capture).
    pub trace: Trace,
    pub timeline: Timeline,
    pending: Vec<RseqSample>,
    /// Samples that arrived after newer ones were committed (their time was raised).
    pub late_samples: u64,
    /// Weight of the CIDs the threads hold, from the samples (the process is mm 0 there).
    pub weights: Vec<(u64, u16)>,
}

impl Samples {
    pub fn new(pid: u32, attached: bool) -> Samples {
        Samples {
            attached,
            privileged: false,
            trace: Trace::new(format!("rseq areas of process {pid}"), Origin::Live),
            timeline: Timeline::empty(Timeline::DEFAULT_INTERVAL),
            pending: Vec::new(),
            late_samples: 0,
            weights: Vec::new(),
        }
    }

    /// How to get the kernel's rseq_update lanes, which a session without `--attach` lacks.
    pub fn attach_hint(&self) -> &'static str {
        if self.privileged {
            "add --attach for the kernel's rseq_update lanes"
        } else {
            "--attach adds the kernel's rseq_update lanes; it needs root or CAP_PERFMON"
        }
    }

    /// Takes in new samples; commits those old enough (all of them once the session ended).
    /// Threads are named from `names` (the kernel trace, when attached), else from /proc.
    pub fn add(&mut self, new: &[RseqSample], names: &Trace, pid: u32, ncpus: u32, all: bool) {
        self.pending.extend_from_slice(new);
        if self.pending.is_empty() {
            return;
        }
        self.pending.sort_by_key(|s| s.ts);
        let newest = self.pending.last().map_or(0, |s| s.ts);
        let cut = if all {
            self.pending.len()
        } else {
            self.pending
                .partition_point(|s| s.ts + SAMPLE_SLACK_NS <= newest)
        };
        if cut == 0 {
            return;
        }
        let mut last = self.trace.events.last().map_or(0, |e| e.ts);
        for s in self.pending.drain(..cut) {
            let ts = if s.ts < last {
                self.late_samples += 1;
                last
            } else {
                s.ts
            };
            last = ts;
            if !self.trace.tasks.contains_key(&s.tid) {
                // the thread's name from the kernel trace when attached, else from /proc (the
                // workload's threads are this process's own)
                let proc_name = procfs::own_thread_comm(s.tid);
                let name = match names.tasks.get(&s.tid) {
                    Some(m) => names.strings.get(m.comm).to_vec(),
                    None => proc_name.unwrap_or_else(|| b"cidscope-live".to_vec()),
                };
                let comm = self.trace.strings.intern(&name);
                self.trace.tasks.insert(
                    s.tid,
                    TaskMeta {
                        tgid: Some(pid),
                        comm,
                    },
                );
            }
            self.trace.events.push(Event {
                ts,
                tid: s.tid,
                cpu: s.cpu,
                kind: EventKind::RseqUpdate {
                    cpu_id: s.cpu as i32,
                    node_id: 0,
                    mm_cid: s.cid,
                },
            });
        }
        if self.trace.ncpus_hint.is_none() {
            self.trace.ncpus_hint = Some(ncpus);
        }
        self.timeline.extend(&self.trace);
        self.weights = self
            .timeline
            .weight_series(Some(crate::model::MmId(0)))
            .into_iter()
            .next()
            .unwrap_or_default();
    }
}
