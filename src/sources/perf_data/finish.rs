//! The end of a read: what the ordering still holds applied, the repeated LOST_SAMPLES counted
//! once, the tick inferred, the tasks completed, and everything skipped or assumed said in a
//! warning.

use super::Reader;
use super::records::Stop;
use crate::events::{EventStore, Trace};
use crate::sources::binary::tick;

impl Reader<'_> {
    pub(super) fn finish(mut self, stop: Option<Stop>) -> (Trace, EventStore) {
        let mut out = std::mem::take(&mut self.deliver);
        self.order.finish(&mut out);
        for it in out.drain(..) {
            self.process(it.src, it.attr as usize);
        }
        let name = self.name;
        // perf record ≥ 6.x ends the file with one LOST_SAMPLES per event, repeating as counts
        // per event what the LOST records already reported for the ring buffer: counted only
        // when there are no LOST records (and then they are the kernel's own, e.g. AUX drops).
        let ls = std::mem::take(&mut self.lost_samples);
        if self.lost_records == 0 {
            for (ts, cpu, n) in ls {
                self.lost(ts, cpu, n);
            }
        } else if !ls.is_empty() {
            let n = ls.iter().fold(0u64, |n, x| n.saturating_add(x.2));
            self.trace.warn(
                "lost-samples-repeated",
                format!("{name}: {} LOST_SAMPLES records ({n} samples) repeat per event the loss the {} LOST records report; counted once", ls.len(), self.lost_records),
            );
        }
        match stop {
            Some(Stop::Truncated { offset, need, have }) => self.trace.warn(
                "truncated-record",
                format!(
                    "{name}: the file ends at byte offset {} inside the record at byte offset {offset} ({need} bytes expected, {have} present): the file is truncated; the records before it were loaded, the rest is lost",
                    offset + have
                ),
            ),
            Some(Stop::Corrupt { offset, size }) => self.trace.warn(
                "corrupt-record",
                format!(
                    "{name}: the record at byte offset {offset} declares a size of {size} bytes (below its 8-byte header): the records before it were loaded, the rest of the data was not read"
                ),
            ),
            None => {}
        }
        if self.decoder.is_none() {
            self.trace.warn(
                "no-tracing-data",
                format!("{name}: the file has no tracing data (tracepoint formats); samples are counted by event name only"),
            );
        }
        for (&idx, &n) in &self.non_tracepoint {
            let Some(a) = self.attrs.as_ref().and_then(|a| a.list.get(idx)) else {
                continue;
            };
            let count_name = a.count_name();
            self.trace.warn(
                "non-tracepoint-attribute",
                format!(
                    "{name}: attribute {idx} ({}) is {}, not a tracepoint: its {n} samples are kept as events named {count_name}, without fields (cidscope uses none of them)",
                    a.name.as_deref().unwrap_or(&count_name),
                    a.kind_words(),
                ),
            );
        }
        if self.cpu_unknown > 0 {
            self.trace.warn(
                "cpu-unknown",
                format!(
                    "{name}: {} events carry no CPU (recorded without PERF_SAMPLE_CPU: perf record without -a, -C or --sample-cpu): they are kept on an unknown CPU, counted but in no CPU lane, and place no task on a CPU",
                    self.cpu_unknown
                ),
            );
        }
        if self.read_unchanged + self.read_unknown > 0 {
            self.trace.warn(
                "read-values-dropped",
                format!(
                    "{name}: of the counter values the samples read (PERF_SAMPLE_READ), {} had not changed since the counter's last sample and {} belong to no event of the file: no sample was made of them, as perf makes none",
                    self.read_unchanged, self.read_unknown
                ),
            );
        }
        let (n, at, t) = self.order.unknown_types;
        if n > 0 {
            self.trace.warn(
                "unknown-record-type",
                format!("{name}: {n} records have a type no kernel or perf defines, or one no attribute of the file produces (first: type {t} at byte offset {at}): damage; they were skipped"),
            );
        }
        let (n, at) = self.order.unknown;
        if n > 0 {
            self.trace.warn(
                "unknown-event-id",
                format!("{name}: {n} records name an event id that no attribute lists (first at byte offset {at}); they were skipped"),
            );
        }
        let (n, extra, at) = self.oversized;
        if n > 0 {
            self.trace.warn(
                "oversized-record",
                format!("{name}: {n} samples are {extra} bytes longer than their fields (first at byte offset {at}): a damaged record size, and any records inside those bytes are lost"),
            );
        }
        if self.bad > 0 {
            self.trace.warn(
                "bad-records-skipped",
                format!(
                    "{name}: {} records could not be decoded and were skipped (first: {})",
                    self.bad,
                    self.first_bad.take().unwrap_or_default()
                ),
            );
        }
        if self.order.queue.late > 0 {
            self.trace.warn(
                "records-out-of-round",
                format!(
                    "{name}: {} records are older than records of an earlier finished round (perf reports them as out of order)",
                    self.order.queue.late
                ),
            );
        }
        if self.decoder.as_ref().is_some_and(|d| !d.tick_known()) && !self.ticks.is_empty() {
            let inferred = self.ticks.infer();
            if let Some(inf) = &inferred {
                self.ticks.apply(&mut self.events, inf.function);
            }
            let (code, msg) = tick::warning(inferred.as_ref(), name, "perf.data carries");
            self.trace.warn(code, msg);
        }
        let mentioned = std::mem::take(&mut self.mentioned);
        self.threads
            .complete(&mut self.trace.tasks, mentioned.into_iter());
        // (reserved from the file's size: what was not filled goes back)
        self.events.shrink_to_fit();
        (self.trace, self.events)
    }
}
