//! `cidscope stats`: the headless summary of a capture. Its JSON keys are a contract that tests
//! and scripts rely on: add keys freely, never rename or remove one.

pub mod accounting;
pub mod check;
pub mod cid_metrics;
pub mod live;
pub mod model_summary;
pub mod policy;
pub mod summary;
pub mod task_rows;
pub mod text;

pub use summary::{ProcessSummary, ReusedTask, Stats, TaskSummary};

use crate::events::{EventKind, Tid, Trace};
use crate::model::observed::{Context, CpuSlot, ObservedState, Sink};
use crate::model::{Alarm, MmId, MmInfo, MmOrigin};
use std::collections::BTreeMap;

#[derive(Default)]
struct Collect {
    mms: Vec<MmInfo>,
    alarms: Vec<Alarm>,
    anomalies: crate::model::Anomalies,
    running: cid_metrics::running::Running,
    /// Feed `running` (off: a benchmark's summary without the metrics).
    metrics: bool,
}

impl Sink for Collect {
    fn new_mm(&mut self, _id: MmId, info: MmInfo) {
        self.mms.push(info);
    }
    fn cpu_changed(&mut self, ts: u64, cpu: u16, slot: &CpuSlot) {
        if self.metrics {
            self.running.slot_changed(ts, cpu, slot);
        }
    }
    fn alarm(&mut self, a: Alarm) {
        self.alarms.push(a);
    }
    fn anomaly(&mut self, a: crate::model::Anomaly) {
        self.anomalies.add(a);
    }
}

fn origin_name(o: MmOrigin) -> &'static str {
    match o {
        MmOrigin::Tgid => "tgid",
        MmOrigin::Fork => "fork",
        MmOrigin::Exec => "exec",
        MmOrigin::Anonymous => "anonymous",
    }
}

pub fn compute(trace: &Trace) -> Stats {
    compute_with(trace, true)
}

/// The CID metrics of every process, without the list of every task (what the TUI shows).
pub fn cid_metrics_of(trace: &Trace) -> Vec<cid_metrics::ProcessMetrics> {
    let mut s = Summarizer::new(trace).per_task(false).all_metrics();
    // (a summary reads no switch's next_comm or next_prio: two hash lookups per switch saved)
    s.feed(trace.events.iter_model(), trace);
    s.finish(trace).cid_metrics
}

/// [`compute`], with `per_task` false giving the text summary's form (see
/// [`compute_streaming_with`]).
pub fn compute_with(trace: &Trace, per_task: bool) -> Stats {
    let mut s = Summarizer::new(trace).per_task(per_task);
    // (a summary reads no switch's next_comm or next_prio: two hash lookups per switch saved)
    s.feed(trace.events.iter_model(), trace);
    s.finish(trace)
}

/// The summary of an opened capture, read as a stream: each segment is summarized and
/// dropped, so memory stays flat whatever the size. A capture whose timestamps go backwards is
/// read again whole and sorted, as `compute` needs; an input that cannot be read again (a
/// pipe) keeps its events for that.
pub fn compute_streaming(
    opened: &crate::sources::Opened,
    opts: &crate::sources::LoadOptions,
) -> Result<Stats, crate::sources::SourceError> {
    compute_streaming_with(opened, opts, true)
}

/// [`compute_streaming`], with `per_task` false leaving `tasks` and `reused_tasks` empty (what
/// the text summary never shows: a million tasks cost a string and a list each there).
pub fn compute_streaming_with(
    opened: &crate::sources::Opened,
    opts: &crate::sources::LoadOptions,
    per_task: bool,
) -> Result<Stats, crate::sources::SourceError> {
    let mut meta = Trace::new(&opened.name, opened.format);
    let mut summ: Option<Summarizer> = None;
    // a stream cannot be read again: its events are kept in case they need sorting
    let keep = !opened.rereadable();
    opened.stream(opts, &mut |d| {
        let evs = std::mem::take(&mut d.events);
        meta.apply(d);
        let s = summ.get_or_insert_with(|| Summarizer::new(&meta).per_task(per_task));
        // (by reference: a copied 32-byte event costs a stalled load per event)
        s.feed(evs.iter(), &meta);
        if keep {
            meta.events.extend(evs.iter());
        }
        // hand the buffer back for the reader to reuse
        d.events = evs;
        true
    })?;
    match summ {
        Some(s) if !s.out_of_order => Ok(s.finish(&meta)),
        Some(_) if keep => {
            meta.ensure_sorted();
            Ok(compute_with(&meta, per_task))
        }
        Some(_) => Ok(compute_with(&opened.load(opts)?, per_task)),
        None => Ok(Summarizer::new(&meta).finish(&meta)),
    }
}

/// The summary built slice by slice: a streaming load feeds each segment's events and drops
/// them, so `stats` on a large text capture never holds every event at once.
pub struct Summarizer {
    /// Per [`EventKind::index`].
    kind_counts: [u64; EventKind::NAMES.len()],
    other_counts: rustc_hash::FxHashMap<u32, u64>,
    /// Per [`crate::events::Probe`], by its position in `Probe::ALL`.
    probe_counts: [u64; crate::events::Probe::ALL.len()],
    /// CPUs with events, one bit each.
    cpus: Vec<u64>,
    first: Option<u64>,
    last: Option<u64>,
    events: u64,
    lost_events: u64,
    lost_markers: u64,
    cpu_unknown: u64,
    /// Per task: its rseq_update count, CIDs, mm at its last update (a task that exited is
    /// gone from the observed state by the end) and the accounting's counts.
    tasks: task_rows::TaskRows,
    /// The calls of task_mm_cid_work (function_graph, CID probes).
    calls: cid_metrics::scan_calls::ScanCalls,
    state: ObservedState,
    sink: Collect,
    accounting: accounting::Accumulator,
    /// Highest CPU seen + 1.
    seen_cpus: u32,
    prev_ts: u64,
    /// Timestamps went backwards: the walk of the observed state needs the sorted stream.
    pub out_of_order: bool,
    /// Runs of records sharing a time on their CPU (a clock that stalls).
    stamps: crate::model::coverage::StampRuns,
    /// Whether [`Stats::tasks`] is built.
    per_task: bool,
    /// Make the CID metrics of this many processes only, most updates first (the text's).
    metrics_shown: Option<usize>,
}

impl Summarizer {
    pub fn new(meta: &Trace) -> Summarizer {
        let hint = meta
            .ncpus_hint
            .filter(|&n| n <= Trace::MAX_CPUS)
            .unwrap_or(0);
        Summarizer {
            kind_counts: [0; EventKind::NAMES.len()],
            other_counts: Default::default(),
            probe_counts: Default::default(),
            cpus: vec![0; (Trace::MAX_CPUS as usize).div_ceil(64)],
            first: None,
            last: None,
            events: 0,
            lost_events: 0,
            lost_markers: 0,
            cpu_unknown: 0,
            tasks: Default::default(),
            calls: Default::default(),
            state: ObservedState::new(hint.max(1) as usize),
            sink: Collect {
                metrics: true,
                ..Default::default()
            },
            accounting: accounting::Accumulator::default(),
            seen_cpus: 0,
            prev_ts: 0,
            out_of_order: false,
            stamps: Default::default(),
            per_task: true,
            metrics_shown: None,
        }
    }

    /// The summary without `cid_metrics`' span, latency and scan calls (they stay empty): what
    /// they cost is measured against it (`cargo bench --bench pipeline -- stats_summary`).
    pub fn without_cid_metrics(mut self) -> Summarizer {
        self.sink.metrics = false;
        self
    }

    /// Whether the summary lists every task (`--json`), or only counts them per process.
    /// (Without the list, the CID metrics of the processes the text shows only: see
    /// [`Self::all_metrics`].)
    pub fn per_task(mut self, on: bool) -> Summarizer {
        self.per_task = on;
        self.accounting.overall_only = !on;
        self.metrics_shown = (!on).then_some(cid_metrics::render::SHOWN);
        self
    }

    /// The CID metrics of every process, whether or not every task is listed.
    pub fn all_metrics(mut self) -> Summarizer {
        self.metrics_shown = None;
        self
    }

    /// Adds events (in stream order); `meta` holds the strings and tasks seen so far.
    pub fn feed<I, E>(&mut self, evs: I, meta: &Trace)
    where
        I: IntoIterator<Item = E>,
        E: std::borrow::Borrow<crate::events::Event>,
    {
        self.accounting.prepare(meta);
        let hint = meta
            .ncpus_hint
            .filter(|&n| n <= Trace::MAX_CPUS)
            .unwrap_or(0);
        for ev in evs {
            let ev = ev.borrow();
            if ev.ts < self.prev_ts {
                self.out_of_order = true;
            }
            self.prev_ts = ev.ts;
            self.stamps.see(ev);
            let known = ev.cpu != crate::events::CPU_UNKNOWN;
            if known {
                self.seen_cpus = self.seen_cpus.max(ev.cpu as u32 + 1);
            }
            // the CID bound as known so far; out-of-range alarms are re-checked at the end
            let ctx = Context {
                tasks: &meta.tasks,
                tgid_changes: &meta.tgid_changes,
                ncpus: self.seen_cpus.max(hint).max(1),
            };
            self.state.apply(ev, &ctx, &mut self.sink);
            if self.sink.metrics {
                self.calls.event(ev, &self.state, meta);
            }
            if let Some((tid, c)) = self.accounting.classify(ev) {
                let state = &self.state;
                (self.tasks)
                    .latest_or(tid, || state.mm_and_incarnation(tid).1)
                    .counts
                    .add(c);
            }
            match ev.kind {
                EventKind::Lost { count } => {
                    self.lost_markers += 1;
                    self.lost_events += count.unwrap_or(0) as u64;
                    continue;
                }
                EventKind::Other { name } | EventKind::Function { name, .. } => {
                    *self.other_counts.entry(name.0).or_default() += 1
                }
                EventKind::Probe { probe, .. } => self.probe_counts[probe as usize] += 1,
                k => self.kind_counts[k.index()] += 1,
            }
            self.events += 1;
            if !known {
                self.cpu_unknown += 1;
            } else if let Some(w) = self.cpus.get_mut(ev.cpu as usize / 64) {
                *w |= 1 << (ev.cpu % 64);
            }
            self.first = Some(self.first.map_or(ev.ts, |f| f.min(ev.ts)));
            self.last = Some(self.last.map_or(ev.ts, |l| l.max(ev.ts)));
            if let (EventKind::RseqUpdate { mm_cid, .. }, false) =
                (ev.kind, ev.tid == crate::events::TID_UNKNOWN)
            {
                let (mm, inc) = self.state.mm_and_incarnation(ev.tid);
                self.tasks.update(ev.tid, inc, ev.ts, mm_cid, mm);
            }
        }
    }

    pub fn finish(self, trace: &Trace) -> Stats {
        let Summarizer {
            kind_counts,
            other_counts,
            probe_counts,
            cpus,
            first,
            last,
            events,
            lost_events,
            lost_markers,
            cpu_unknown,
            tasks: task_rows,
            state,
            mut sink,
            accounting,
            seen_cpus,
            mut calls,
            per_task,
            metrics_shown,
            stamps,
            ..
        } = self;
        // (its per-task map goes first: the output is made after it)
        let rseq_accounting = accounting.finish_with(task_rows.counts_per_tid());
        // the tasks with rseq_update
        let updated = || task_rows.rows().iter().filter(|r| r.n > 0);
        let update_of = |tid: Tid, inc: u32| task_rows.get(tid, inc).filter(|r| r.n > 0);
        let mut state = state;
        sink.running.finish(last.unwrap_or(0));
        calls.finish(&state);
        // (duplicates held back until their holder's next record, raised with their own time)
        state.flush(&mut sink);
        // what the rest needs of the observed state: each task's tid, incarnation and mm (the
        // state itself goes before the output is made)
        let live: Vec<(Tid, u32, MmId)> = (state.tasks.iter())
            .map(|(&tid, t)| (tid, t.incarnation, t.mm))
            .collect();
        drop(state);
        sink.alarms.sort_by_key(|a| a.ts);
        let mut coverage = crate::model::Coverage::of_kind_counts(&kind_counts, events);
        coverage.stamps = stamps;
        coverage.facts(trace);
        let checkable = coverage.checkable();
        let missing = coverage.missing();
        // what the capture cannot support is not judged (no CPU column: no bound, no
        // "running at once"; no switches: no "running")
        sink.alarms.retain(|a| checkable.judges(&a.kind));
        if coverage.cpu_unknown {
            sink.anomalies
                .retain(|k| !matches!(k, crate::model::AnomalyKind::CpuIdMismatch { .. }));
        }
        let hint = trace
            .ncpus_hint
            .filter(|&n| n <= Trace::MAX_CPUS)
            .unwrap_or(0);
        let ncpus = seen_cpus.max(hint).max(1);
        // a CID judged out of range before a higher CPU showed up was not
        sink.alarms.retain_mut(|a| match &mut a.kind {
            crate::model::AlarmKind::CidOutOfRange { cid, bound, .. } => {
                *bound = ncpus;
                *cid < 0 || *cid as u32 >= ncpus
            }
            _ => true,
        });
        let mut event_counts: BTreeMap<String, u64> = BTreeMap::new();
        for (k, &n) in kind_counts.iter().enumerate().filter(|(_, n)| **n > 0) {
            *event_counts
                .entry(EventKind::NAMES[k].to_string())
                .or_default() += n;
        }
        for (p, &n) in crate::events::Probe::ALL.iter().zip(&probe_counts) {
            if n > 0 {
                event_counts.insert(p.name().to_string(), n);
            }
        }
        for (id, n) in other_counts {
            *event_counts
                .entry(trace.strings.get_str(crate::events::StrId(id)).to_string())
                .or_default() += n;
        }
        // per process: its updates, tasks (listed or counted) and CIDs, gathered before the
        // summaries are made (with a million processes, the CID metrics are made and the
        // per-task state dropped first: the summaries alone are ~150 bytes a process)
        let n_mms = sink.mms.len();
        let mut proc_updates = vec![0u64; n_mms];
        let mut proc_tasks: Vec<Vec<Tid>> = Vec::new();
        let mut proc_task_count = vec![0u32; n_mms];
        let mut proc_cids = vec![task_rows::CidSet::default(); n_mms];
        let (tasks, reused_tasks, unknown) = if per_task {
            proc_tasks = vec![Vec::new(); n_mms];
            let mut task_mm: rustc_hash::FxHashMap<(Tid, u32), MmId> =
                updated().map(|r| ((r.tid, r.inc), r.mm)).collect();
            for &(tid, inc, mm) in &live {
                task_mm.entry((tid, inc)).or_insert(mm);
            }
            let mut tasks = BTreeMap::new();
            let mut reused_tasks = Vec::new();
            // every task once, in (tid, incarnation) order (a sorted list: a tree of a million tids
            // is ~40 MB)
            let mut all_tids: Vec<(Tid, u32)> = trace
                .tasks
                .keys()
                .map(|&t| (t, 0))
                .chain(updated().map(|r| (r.tid, r.inc)))
                .chain(task_mm.keys().copied())
                .collect();
            all_tids.sort_unstable();
            all_tids.dedup();
            let mut unknown = 0;
            for key in all_tids {
                let (tid, inc) = key;
                let update = update_of(tid, inc);
                let (n, cids) = update.map_or((0, Vec::new()), |u| {
                    (u.n as u64, task_rows.cids(u).to_vec())
                });
                let mm = task_mm.get(&key).copied().unwrap_or(MmId::UNKNOWN);
                let mm_idx = mm.is_real().then_some(mm.0);
                if let Some(i) = mm_idx.map(|i| i as usize).filter(|&i| i < n_mms) {
                    // (the tids come in order, a reused one's incarnations together)
                    let ts = &mut proc_tasks[i];
                    if ts.last() != Some(&tid) {
                        ts.push(tid);
                    }
                    proc_updates[i] += n;
                    if let Some(u) = update {
                        proc_cids[i].union(&task_rows.cids(u));
                    }
                }
                if n > 0 && mm == MmId::UNKNOWN {
                    unknown += 1;
                }
                let mm_tgid = mm_idx
                    .and_then(|i| sink.mms.get(i as usize))
                    .and_then(|m| m.tgid);
                let tgid = if inc == 0 {
                    trace.tasks.get(&tid).and_then(|m| m.tgid).or(mm_tgid)
                } else {
                    mm_tgid
                };
                if !per_task {
                    continue;
                }
                let task = TaskSummary {
                    tgid,
                    comm: trace.comm_of(tid),
                    rseq_updates: n,
                    cids,
                    mm: mm_idx,
                };
                if inc == 0 {
                    tasks.insert(tid, task);
                } else {
                    reused_tasks.push(ReusedTask {
                        tid,
                        incarnation: inc,
                        task,
                    });
                }
            }
            (tasks, reused_tasks, unknown)
        } else {
            // the processes only: each task's updates and CIDs go to its mm straight from the
            // maps (no list of every task, no map of every task's mm: a million tasks); its
            // tasks are counted from one list of (mm, tid) pairs
            let mut unknown = 0;
            let mut pairs: Vec<(u32, Tid)> = Vec::new();
            for u in updated() {
                let i = u.mm.0 as usize;
                if u.mm.is_real() && i < n_mms {
                    pairs.push((u.mm.0, u.tid));
                    proc_updates[i] += u.n as u64;
                    proc_cids[i].union(&task_rows.cids(u));
                } else {
                    unknown += 1;
                }
            }
            for &(tid, inc, mm) in &live {
                if mm.is_real() && (mm.0 as usize) < n_mms && update_of(tid, inc).is_none() {
                    pairs.push((mm.0, tid));
                }
            }
            pairs.sort_unstable();
            pairs.dedup();
            for (mm, _) in pairs {
                proc_task_count[mm as usize] += 1;
            }
            (BTreeMap::new(), Vec::new(), unknown)
        };
        drop(live);
        // the text shows a few processes' metrics: only those are made
        let (cid_metrics, cid_metrics_notes, cid_metrics_omitted) = metrics_of(
            &proc_updates,
            &proc_cids,
            updated(),
            &sink,
            &calls,
            &missing,
            metrics_shown,
        );
        // what is left to make needs neither the tasks' rows nor the running-thread state
        drop(task_rows);
        drop(std::mem::take(&mut sink.running));
        let mut proc_tasks = proc_tasks.into_iter();
        let processes: Vec<ProcessSummary> = (sink.mms.iter().enumerate())
            .map(|(i, m)| {
                let tasks = proc_tasks.next().unwrap_or_default();
                ProcessSummary {
                    mm: i as u32,
                    label: m.label(),
                    tgid: m.tgid,
                    origin: origin_name(m.origin),
                    first_ts_ns: m.first_ts,
                    task_count: if per_task {
                        tasks.len() as u32
                    } else {
                        proc_task_count[i]
                    },
                    tasks,
                    rseq_updates: proc_updates[i],
                    cids: proc_cids[i].to_vec(),
                    compactions: None,
                    model: None,
                }
            })
            .collect();
        drop(proc_cids);
        Stats {
            file: trace.path.clone(),
            format: trace.origin.id(),
            events,
            event_counts,
            cpus: (0..cpus.len() as u32 * 64)
                .filter(|&c| cpus[c as usize / 64] & (1 << (c % 64)) != 0)
                .collect(),
            events_cpu_unknown: cpu_unknown,
            ncpus,
            first_ts_ns: first,
            last_ts_ns: last,
            duration_ns: last.unwrap_or(0) - first.unwrap_or(0),
            lost_events,
            lost_markers,
            coarse_stamp_records: coverage.stamps.deep,
            rseq_irqs_off: trace.rseq_irqs_off,
            kernel_family_shown: crate::model::kernel::family_shown(trace)
                .map(|f| format!("{} ({}): {}", f.family, f.policy, f.because)),
            tasks,
            reused_tasks,
            processes,
            tasks_mm_unknown: unknown,
            alarms: sink.alarms.len() as u64,
            alarm_samples: sink
                .alarms
                .iter()
                .take(10)
                .map(|a| {
                    format!(
                        "{} cpu {}: {}",
                        crate::events::fmt_ts(a.ts),
                        a.cpu,
                        a.describe()
                    )
                })
                .collect(),
            rseq_accounting,
            warnings: trace
                .warnings
                .iter()
                .map(|w| w.to_string())
                .chain(
                    sink.anomalies
                        .warnings(&trace.path)
                        .iter()
                        .map(|w| w.to_string()),
                )
                .chain(missing.iter().map(|m| m.warning()))
                .collect(),
            missing: missing.iter().map(|m| m.code()).collect(),
            model_agreement: None,
            model: None,
            compare: Vec::new(),
            cid_metrics,
            cid_metrics_notes,
            cid_metrics_omitted,
        }
    }
}

/// The CID metrics of the processes with rseq_update events; with `shown`, of that many only,
/// most updates first (what the text shows), and how many were left out.
fn metrics_of<'a>(
    proc_updates: &[u64],
    proc_cids: &[task_rows::CidSet],
    updated: impl Iterator<Item = &'a task_rows::TaskRow>,
    sink: &Collect,
    calls: &cid_metrics::scan_calls::ScanCalls,
    missing: &[crate::model::Missing],
    shown: Option<usize>,
) -> (Vec<cid_metrics::ProcessMetrics>, Vec<String>, u64) {
    let mut chosen: Vec<usize> = (proc_updates.iter().enumerate())
        .filter(|(_, n)| **n > 0)
        .map(|(i, _)| i)
        .collect();
    let mut omitted = 0;
    if let Some(n) = shown.filter(|&n| n < chosen.len()) {
        // (stable: equal counts keep the processes' order, as the text's own sort does)
        chosen.sort_by_key(|&i| std::cmp::Reverse(proc_updates[i]));
        omitted = (chosen.len() - n) as u64;
        chosen.truncate(n);
        chosen.sort_unstable();
    }
    // per chosen process (by its place in `chosen`), its tasks' tallies
    let mut slot = vec![u32::MAX; proc_updates.len()];
    for (k, &i) in chosen.iter().enumerate() {
        slot[i] = k as u32;
    }
    let mut tallies: Vec<Vec<cid_metrics::TaskTally>> = vec![Vec::new(); chosen.len()];
    for u in updated.filter(|u| u.mm.is_real()) {
        let k = slot.get(u.mm.0 as usize).copied().unwrap_or(u32::MAX);
        if let Some(v) = tallies.get_mut(k as usize) {
            v.push(u.tally);
        }
    }
    // (chosen processes are mms the sink made: their facts are there)
    let facts: Vec<(String, Vec<i32>)> = (chosen.iter())
        .map(|&i| (sink.mms[i].label(), proc_cids[i].to_vec()))
        .collect();
    let procs = (chosen.iter().zip(&facts).zip(tallies))
        .map(|((&i, (label, cids)), tallies)| cid_metrics::ProcessIn {
            mm: i as u32,
            tgid: sink.mms[i].tgid,
            label,
            cids,
            tallies,
        })
        .collect();
    let (metrics, notes) = cid_metrics::build(procs, &sink.running, calls, missing);
    (metrics, notes, omitted)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The TUI's metrics (without the task list) are the JSON's; the text makes those it shows.
    #[test]
    fn every_form_makes_the_same_cid_metrics() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("traces");
        let f = "kernels-plain/k6.12.117-c16-forks.ftrace.txt";
        let bytes = std::fs::read(dir.join(f)).unwrap();
        let trace = crate::sources::load_bytes(f, &bytes, &Default::default()).unwrap();
        let json = |m: &[cid_metrics::ProcessMetrics]| serde_json::to_string(m).unwrap();
        let full = compute(&trace);
        assert!(full.cid_metrics.len() > cid_metrics::render::SHOWN, "{f}");
        assert_eq!(json(&cid_metrics_of(&trace)), json(&full.cid_metrics));
        let text = compute_with(&trace, false);
        assert_eq!(text.cid_metrics.len(), cid_metrics::render::SHOWN);
        assert_eq!(
            text.cid_metrics_omitted as usize,
            full.cid_metrics.len() - cid_metrics::render::SHOWN
        );
        assert_eq!(
            crate::stats::text::render_text(&text),
            crate::stats::text::render_text(&compute_with(&trace, true))
        );
    }

    /// The summary's coverage comes from its own per-kind counts: it must equal the one
    /// counted event by event (`--check` and the TUI count that way).
    #[test]
    fn the_summary_coverage_is_the_counted_one() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("traces");
        for f in [
            "cyclictest.ftrace.txt",
            "kernels-plain/k6.12.117-c16-forks.ftrace.txt",
            "lost.perf.data",
        ] {
            let bytes = std::fs::read(dir.join(f)).unwrap();
            let trace = crate::sources::load_bytes(f, &bytes, &Default::default()).unwrap();
            let mut s = Summarizer::new(&trace);
            s.feed(trace.events.iter(), &trace);
            let mut got = crate::model::Coverage::of_kind_counts(&s.kind_counts, s.events);
            got.stamps = s.stamps.clone();
            got.facts(&trace);
            let want = crate::model::Coverage::of(&trace);
            assert_eq!(got, want, "{f}");
            assert!(
                want.rseq_updates > 0 && want.events > want.rseq_updates,
                "{f}"
            );
        }
    }
}
