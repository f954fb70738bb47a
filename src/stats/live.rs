//! Headless summaries of a live capture (`live --json`, `attach --json`). JSON keys are
//! contracts: add freely, never rename or remove.
//!
//! `matched`: a sample (tid, ts, cpu, cid) is matched when an `rseq_update` of that thread at or
//! before `ts` carries the same cpu_id and mm_cid. `matched_last` is stricter: the thread's *last*
//! update at or before `ts` carries them (the update that wrote what the thread read).
//! `duplicates`: instants where two threads of the process ran with one confirmed CID, from the
//! observed model ([`crate::model::ObservedState`]) over the trace.

use crate::events::{EventKind, Tid, fmt_ts};
use crate::model::observed::{Context, CpuSlot, ObservedState, Sink};
use crate::model::{Alarm, AlarmKind, MmId, MmInfo};
use crate::sources::live::rseq_area::Registration;
use crate::sources::live::{LiveCapture, RseqSample};
use rustc_hash::FxHashMap;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

#[derive(Serialize, Debug, Clone)]
pub struct LiveSummary {
    pub pid: u32,
    pub scope: Option<String>,
    pub workload: Option<String>,
    /// `glibc` or `cidscope`: who registered the rseq areas the workload reads.
    pub rseq_registration: Option<String>,
    pub duration_s: f64,
    /// CIDs read from rseq areas (one per change).
    pub rseq_samples: u64,
    pub samples_dropped: u64,
    /// Threads that reported samples.
    pub sample_threads: u64,
    /// Samples whose cpu and cid an rseq_update of the thread at or before the sample carries
    /// (null without a trace).
    pub matched: Option<u64>,
    /// Samples whose values the thread's last rseq_update at or before the sample carries.
    pub matched_last: Option<u64>,
    pub unmatched_samples: Vec<String>,
    /// Highest CID seen (samples and the process's rseq_update events).
    pub max_cid: Option<i32>,
    /// Possible CPUs: every CID must be below it.
    pub cpus: u32,
    /// Samples with a CID outside 0..cpus.
    pub samples_cid_out_of_range: u64,
    /// Instants where two running threads of the process held one CID (null without a trace).
    pub duplicates: Option<u64>,
    pub duplicate_examples: Vec<String>,
    pub cid_out_of_range: Option<u64>,
    pub lost_events: u64,
    pub events: u64,
    pub events_seen: u64,
    /// Decoded events per second over the session.
    pub event_rate: f64,
    pub events_dropped: u64,
    /// rseq_update events of the process.
    pub rseq_updates: Option<u64>,
    pub attached_events: Vec<String>,
    pub cpu_user_s: f64,
    pub cpu_sys_s: f64,
    pub warnings: Vec<String>,
    pub note: Option<String>,
}

#[derive(Default)]
struct Alarms {
    mms: Vec<MmInfo>,
    alarms: Vec<Alarm>,
}

impl Sink for Alarms {
    fn new_mm(&mut self, _id: MmId, info: MmInfo) {
        self.mms.push(info);
    }
    fn cpu_changed(&mut self, _ts: u64, _cpu: u16, _slot: &CpuSlot) {}
    fn alarm(&mut self, a: Alarm) {
        self.alarms.push(a);
    }
}

/// Per thread, its rseq_update events (ts, cpu_id, mm_cid) in time order.
fn updates_by_tid(c: &LiveCapture) -> FxHashMap<Tid, Vec<(u64, i32, i32)>> {
    let mut m: FxHashMap<Tid, Vec<(u64, i32, i32)>> = FxHashMap::default();
    for e in &c.trace.events {
        if let EventKind::RseqUpdate { cpu_id, mm_cid, .. } = e.kind {
            m.entry(e.tid).or_default().push((e.ts, cpu_id, mm_cid));
        }
    }
    m
}

/// (last update at or before the sample matches, some update at or before it matches).
pub fn match_sample(updates: &[(u64, i32, i32)], s: &RseqSample) -> (bool, bool) {
    let n = updates.partition_point(|u| u.0 <= s.ts);
    let want = (s.cpu as i32, s.cid);
    let last = n
        .checked_sub(1)
        .is_some_and(|i| (updates[i].1, updates[i].2) == want);
    let any = updates[..n].iter().any(|u| (u.1, u.2) == want);
    (last, any)
}

pub fn summarize(c: &LiveCapture) -> LiveSummary {
    let cpus = c.ncpus;
    let attached = c.scope.is_some();
    let tids: BTreeSet<Tid> = c.samples.iter().map(|s| s.tid).collect();
    let mut max_cid = c.samples.iter().map(|s| s.cid).max();
    let samples_oor = c
        .samples
        .iter()
        .filter(|s| s.cid < 0 || s.cid as u32 >= cpus)
        .count() as u64;
    let (mut matched, mut matched_last, mut duplicates, mut oor, mut rseq_updates) =
        (None, None, None, None, None);
    let mut unmatched_samples = Vec::new();
    let mut duplicate_examples = Vec::new();
    if attached {
        let ups = updates_by_tid(c);
        let (mut m, mut ma) = (0u64, 0u64);
        for s in &c.samples {
            let (last, any) = ups
                .get(&s.tid)
                .map_or((false, false), |u| match_sample(u, s));
            m += last as u64;
            ma += any as u64;
            if !any && unmatched_samples.len() < 8 {
                let prev = ups
                    .get(&s.tid)
                    .and_then(|u| u[..u.partition_point(|x| x.0 <= s.ts)].last().copied());
                unmatched_samples.push(format!(
                    "{} tid {} read cpu {} cid {}; last rseq_update before: {}",
                    fmt_ts(s.ts),
                    s.tid,
                    s.cpu,
                    s.cid,
                    match prev {
                        Some((t, cpu, cid)) => format!("{} cpu_id={cpu} mm_cid={cid}", fmt_ts(t)),
                        None => "none".into(),
                    }
                ));
            }
        }
        matched = Some(ma);
        matched_last = Some(m);
        // The process's updates: those of tasks the capture places in the process.
        let mine = |t: &Tid| c.trace.tasks.get(t).and_then(|m| m.tgid) == Some(c.pid);
        let mut n = 0u64;
        for (t, u) in &ups {
            if mine(t) {
                n += u.len() as u64;
                if let Some(x) = u.iter().map(|x| x.2).max() {
                    max_cid = max_cid.max(Some(x));
                }
            }
        }
        rseq_updates = Some(n);
        let ctx = Context {
            tasks: &c.trace.tasks,
            tgid_changes: &c.trace.tgid_changes,
            ncpus: cpus.max(c.trace.cpu_count()),
        };
        let mut st = ObservedState::new(ctx.ncpus as usize);
        let mut sink = Alarms::default();
        for e in &c.trace.events {
            st.apply(&e, &ctx, &mut sink);
        }
        st.flush(&mut sink);
        let my_mm: BTreeSet<u32> = sink
            .mms
            .iter()
            .enumerate()
            .filter(|(_, m)| m.tgid == Some(c.pid))
            .map(|(i, _)| i as u32)
            .collect();
        let ours = |a: &Alarm| my_mm.contains(&a.mm().0);
        let dups: Vec<&Alarm> = sink
            .alarms
            .iter()
            .filter(|a| ours(a) && matches!(a.kind, AlarmKind::DuplicateCid { .. }))
            .collect();
        duplicates = Some(dups.len() as u64);
        duplicate_examples = dups
            .iter()
            .take(8)
            .map(|a| format!("{} cpu {}: {}", fmt_ts(a.ts), a.cpu, a.describe()))
            .collect();
        oor = Some(
            sink.alarms
                .iter()
                .filter(|a| ours(a) && matches!(a.kind, AlarmKind::CidOutOfRange { .. }))
                .count() as u64,
        );
    }
    let k = &c.counters;
    let secs = k.duration_ns as f64 / 1e9;
    LiveSummary {
        pid: c.pid,
        scope: c.scope.map(|s| s.describe()),
        workload: c.workload.as_ref().map(|w| w.to_string()),
        rseq_registration: c.registration.map(|r| {
            match r {
                Registration::Glibc => "glibc",
                Registration::Cidscope => "cidscope",
            }
            .to_string()
        }),
        duration_s: secs,
        rseq_samples: c.samples.len() as u64,
        samples_dropped: k.samples_dropped,
        sample_threads: tids.len() as u64,
        matched,
        matched_last,
        unmatched_samples,
        max_cid,
        cpus,
        samples_cid_out_of_range: samples_oor,
        duplicates,
        duplicate_examples,
        cid_out_of_range: oor,
        lost_events: k.lost_events,
        events: c.trace.events.iter().filter(|e| !e.kind.is_lost()).count() as u64,
        events_seen: k.events_seen,
        event_rate: if secs > 0.0 {
            k.events_seen as f64 / secs
        } else {
            0.0
        },
        events_dropped: k.events_dropped,
        rseq_updates,
        attached_events: c.attached_events.clone(),
        cpu_user_s: k.cpu_user_ns as f64 / 1e9,
        cpu_sys_s: k.cpu_sys_ns as f64 / 1e9,
        warnings: c.trace.warnings.iter().map(|w| w.to_string()).collect(),
        note: (!attached).then(|| {
            "workload only: CIDs come from the threads' rseq areas; trace-based lanes \
             (switches, rseq_update per CPU, duplicates) need `--attach`, which needs root or \
             CAP_PERFMON and tracefs access"
                .to_string()
        }),
    }
}

/// Summary of `cidscope attach`.
#[derive(Serialize, Debug, Clone)]
pub struct AttachSummary {
    pub scope: String,
    pub duration_s: f64,
    pub events: u64,
    pub events_seen: u64,
    /// Decoded events per second over the session (before the process filter).
    pub event_rate: f64,
    pub lost_events: u64,
    pub events_dropped: u64,
    pub decode_errors: u64,
    pub cpus: u32,
    pub event_counts: BTreeMap<String, u64>,
    pub tasks: u64,
    pub rseq_updates: u64,
    pub max_cid: Option<i32>,
    pub cpu_user_s: f64,
    pub cpu_sys_s: f64,
    pub attached_events: Vec<String>,
    pub record: Option<String>,
    pub warnings: Vec<String>,
}

pub fn summarize_attach(c: &LiveCapture, record: Option<String>) -> AttachSummary {
    let mut counts: BTreeMap<String, u64> = BTreeMap::new();
    let mut rseq = 0u64;
    let mut max_cid = None;
    for e in &c.trace.events {
        if e.kind.is_lost() {
            continue;
        }
        *counts
            .entry(e.kind.name(&c.trace.strings).to_string())
            .or_default() += 1;
        if let EventKind::RseqUpdate { mm_cid, .. } = e.kind {
            rseq += 1;
            max_cid = max_cid.max(Some(mm_cid));
        }
    }
    let k = &c.counters;
    let secs = k.duration_ns as f64 / 1e9;
    AttachSummary {
        scope: c.scope.map_or("none".into(), |s| s.describe()),
        duration_s: secs,
        events: counts.values().sum(),
        events_seen: k.events_seen,
        event_rate: if secs > 0.0 {
            k.events_seen as f64 / secs
        } else {
            0.0
        },
        lost_events: k.lost_events,
        events_dropped: k.events_dropped,
        decode_errors: k.decode_errors,
        cpus: c.ncpus,
        event_counts: counts,
        tasks: c.trace.tasks.len() as u64,
        rseq_updates: rseq,
        max_cid,
        cpu_user_s: k.cpu_user_ns as f64 / 1e9,
        cpu_sys_s: k.cpu_sys_ns as f64 / 1e9,
        attached_events: c.attached_events.clone(),
        record,
        warnings: c.trace.warnings.iter().map(|w| w.to_string()).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matching_uses_the_last_update_before_the_sample() {
        let ups = [(10, 0, 0), (20, 1, 1), (30, 0, 1)];
        let s = |ts, cpu, cid| RseqSample {
            ts,
            tid: 1,
            cpu,
            cid,
        };
        assert_eq!(match_sample(&ups, &s(25, 1, 1)), (true, true));
        assert_eq!(match_sample(&ups, &s(30, 0, 1)), (true, true));
        assert_eq!(match_sample(&ups, &s(35, 0, 0)), (false, true));
        assert_eq!(match_sample(&ups, &s(5, 0, 0)), (false, false));
        assert_eq!(match_sample(&[], &s(5, 0, 0)), (false, false));
    }
}
