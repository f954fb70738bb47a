//! Perfetto's own trace format (`export --perfetto-proto OUT.pftrace`): protobuf `TracePacket`s
//! with `TrackEvent`s, which ui.perfetto.dev and `trace_processor` load natively.
//!
//! * a track "CPUs: observed CIDs" with a child track per CPU, and per model (`--policy`,
//!   `--compare`) a track "model NAME: predicted CIDs" with its own child per CPU; on each, a
//!   slice per stretch of one task holding one CID ("CID 1"; args tid, comm, cid, confirmed);
//! * a counter track per process and per source (observed, each model): the cidmask weight,
//!   typed as a count;
//! * flows from a CID's release to its next grant: each slice that begins a new holder of a
//!   process's CID carries that (source, process, CID)'s flow id, so the viewer links it to the
//!   slice that held it before;
//! * instants for lost events, alarms and the models' compactions;
//! * every event name, category and argument name interned once on the sequence.
//!
//! Written packet by packet as it is made: what is held is the interning tables (one entry per
//! distinct name), the lanes' cursors and a flow state per (process, CID), never the slices.

pub mod schema;

use crate::events::{EventKind, Trace};
use crate::model::policies::{PolicyRun, Trigger};
use crate::model::{MmId, SegLane, Segment};
use crate::timeline::Timeline;
use prost::Message;
use rustc_hash::FxHashMap;
use schema::*;
use std::io::{self, Write};

/// What was written, for the caller's summary and the tests.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Written {
    pub packets: u64,
    /// Track descriptors: the roots, the CPU tracks and the counter tracks.
    pub tracks: u64,
    pub cpu_tracks: u64,
    pub counter_tracks: u64,
    /// Slices (each a begin and an end event).
    pub slices: u64,
    pub counter_values: u64,
    pub instants: u64,
    /// Links from a CID's holder to its next holder.
    pub flows: u64,
}

/// The one packet sequence of the file.
const SEQ: u32 = 1;

/// Track uuids: the kind in the top byte, the source (0 observed, 1.. the models) next, then
/// the CPU or the mm.
fn root_uuid(src: u64) -> u64 {
    (1 << 56) | (src << 40)
}
fn cpu_uuid(src: u64, cpu: usize) -> u64 {
    (2 << 56) | (src << 40) | cpu as u64
}
fn counter_uuid(src: u64, mm: MmId) -> u64 {
    (3 << 56) | (src << 40) | mm.0 as u64
}
/// The flow of one (source, mm, CID): a CID below 2^20, an mm below 2^32 (the rest of the bits
/// hash them so that no two chains share an id).
fn flow_id(src: u64, mm: MmId, cid: i32) -> u64 {
    let k = (src << 52) ^ ((mm.0 as u64) << 20) ^ (cid as u32 as u64 & 0xf_ffff);
    k.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1
}

/// Encodes packets into `out` one at a time, interning names as they first appear.
struct Packets<'w, W: Write> {
    out: &'w mut W,
    buf: Vec<u8>,
    names: FxHashMap<String, u64>,
    arg_names: FxHashMap<&'static str, u64>,
    /// Names interned by the packet being built.
    pending: InternedData,
    first: bool,
    /// The category was interned.
    category: bool,
    n: Written,
}

impl<W: Write> Packets<'_, W> {
    fn write(&mut self, mut p: TracePacket) -> io::Result<()> {
        p.trusted_packet_sequence_id = Some(SEQ);
        if self.first {
            p.sequence_flags = Some(SEQ_INCREMENTAL_STATE_CLEARED | SEQ_NEEDS_INCREMENTAL_STATE);
            self.first = false;
        } else if p.track_event.is_some() {
            p.sequence_flags = Some(SEQ_NEEDS_INCREMENTAL_STATE);
        }
        let pending = std::mem::take(&mut self.pending);
        if pending != InternedData::default() {
            p.interned_data = Some(pending);
        }
        self.buf.clear();
        // `Trace { repeated TracePacket packet = 1; }`: each packet is field 1, length-delimited
        prost::encoding::encode_key(1, prost::encoding::WireType::LengthDelimited, &mut self.buf);
        p.encode_length_delimited(&mut self.buf)
            .map_err(io::Error::other)?;
        self.n.packets += 1;
        self.out.write_all(&self.buf)
    }

    fn name(&mut self, name: &str) -> u64 {
        if let Some(&iid) = self.names.get(name) {
            return iid;
        }
        let iid = self.names.len() as u64 + 1;
        self.names.insert(name.to_string(), iid);
        self.pending.event_names.push(Interned {
            iid: Some(iid),
            name: Some(name.to_string()),
        });
        iid
    }

    fn arg(&mut self, name: &'static str) -> u64 {
        if let Some(&iid) = self.arg_names.get(name) {
            return iid;
        }
        let iid = self.arg_names.len() as u64 + 1;
        self.arg_names.insert(name, iid);
        self.pending.debug_annotation_names.push(Interned {
            iid: Some(iid),
            name: Some(name.to_string()),
        });
        iid
    }

    fn track(&mut self, t: TrackDescriptor) -> io::Result<()> {
        self.n.tracks += 1;
        self.write(TracePacket {
            track_descriptor: Some(t),
            ..Default::default()
        })
    }

    fn event(&mut self, ts: u64, mut e: TrackEvent) -> io::Result<()> {
        if !self.category {
            self.category = true;
            self.pending.event_categories.push(Interned {
                iid: Some(1),
                name: Some("cidscope".into()),
            });
        }
        e.category_iids = vec![1];
        self.write(TracePacket {
            timestamp: Some(ts),
            track_event: Some(e),
            ..Default::default()
        })
    }

    fn uint(&mut self, name: &'static str, v: u64) -> DebugAnnotation {
        DebugAnnotation {
            name_iid: Some(self.arg(name)),
            uint_value: Some(v),
            ..Default::default()
        }
    }

    fn int(&mut self, name: &'static str, v: i64) -> DebugAnnotation {
        DebugAnnotation {
            name_iid: Some(self.arg(name)),
            int_value: Some(v),
            ..Default::default()
        }
    }

    fn string(&mut self, name: &'static str, v: String) -> DebugAnnotation {
        DebugAnnotation {
            name_iid: Some(self.arg(name)),
            string_value: Some(v),
            ..Default::default()
        }
    }

    fn instant(
        &mut self,
        ts: u64,
        track: u64,
        name: &str,
        args: Vec<DebugAnnotation>,
    ) -> io::Result<()> {
        self.n.instants += 1;
        let iid = self.name(name);
        self.event(
            ts,
            TrackEvent {
                r#type: Some(TYPE_INSTANT),
                track_uuid: Some(track),
                name_iid: Some(iid),
                debug_annotations: args,
                ..Default::default()
            },
        )
    }
}

/// Writes the Perfetto protobuf trace of `trace` (its timeline `tl` and the model `runs`) to
/// `out` as it goes.
pub fn write(
    trace: &Trace,
    tl: &Timeline,
    runs: &[PolicyRun],
    out: &mut impl Write,
) -> io::Result<Written> {
    let mut p = Packets {
        out,
        buf: Vec::with_capacity(256),
        names: FxHashMap::default(),
        arg_names: FxHashMap::default(),
        pending: InternedData::default(),
        first: true,
        category: false,
        n: Written::default(),
    };
    let sources: Vec<(String, &[SegLane])> = std::iter::once((
        format!("CPUs ({} possible): observed CIDs", tl.ncpus),
        &tl.lanes[..],
    ))
    .chain(runs.iter().map(|r| {
        (
            format!("model {}: predicted CIDs", r.policy.id()),
            &r.lanes[..],
        )
    }))
    .collect();
    // the tracks
    for (src, (name, lanes)) in sources.iter().enumerate() {
        let src = src as u64;
        p.track(TrackDescriptor {
            uuid: Some(root_uuid(src)),
            name: Some(name.clone()),
            child_ordering: Some(CHILD_ORDERING_EXPLICIT),
            sibling_order_rank: Some(src as i32),
            ..Default::default()
        })?;
        for cpu in 0..lanes.len().max(tl.lanes.len()) {
            p.n.cpu_tracks += 1;
            p.track(TrackDescriptor {
                uuid: Some(cpu_uuid(src, cpu)),
                name: Some(format!("CPU {cpu}")),
                parent_uuid: Some(root_uuid(src)),
                sibling_order_rank: Some(cpu as i32),
                ..Default::default()
            })?;
        }
        for (k, info) in tl.mms.iter().enumerate() {
            let mm = MmId(k as u32);
            p.n.counter_tracks += 1;
            p.track(TrackDescriptor {
                uuid: Some(counter_uuid(src, mm)),
                name: Some(format!(
                    "cidmask weight: {} {}",
                    info.label(),
                    trace.comm_of(info.leader)
                )),
                parent_uuid: Some(root_uuid(src)),
                sibling_order_rank: Some(lanes.len() as i32 + k as i32),
                counter: Some(CounterDescriptor {
                    unit: Some(UNIT_COUNT),
                    unit_name: Some("CIDs".into()),
                }),
                ..Default::default()
            })?;
        }
    }
    // the slices and flows, source by source
    for (src, (_, lanes)) in sources.iter().enumerate() {
        slices(&mut p, trace, tl, src as u64, lanes)?;
    }
    // the weights
    let mut failed = Ok(());
    tl.for_each_weight_change(None, |mm, ts, w| {
        if failed.is_ok() {
            failed = counter(&mut p, ts, counter_uuid(0, mm), w as i64);
        }
    });
    failed?;
    for (i, r) in runs.iter().enumerate() {
        for w in &r.weights {
            counter(
                &mut p,
                w.ts,
                counter_uuid(i as u64 + 1, w.mm),
                w.weight as i64,
            )?;
        }
    }
    // the instants
    for &i in &tl.lost_at {
        if let Some(e) = trace.events.get(i) {
            let count = match e.kind {
                EventKind::Lost { count } => count,
                _ => None,
            };
            let args = count
                .map(|n| p.uint("count", n as u64))
                .into_iter()
                .collect();
            p.instant(e.ts, cpu_uuid(0, e.cpu as usize), "lost events", args)?;
        }
    }
    for a in &tl.alarms {
        let args = vec![p.string("detail", a.describe())];
        p.instant(a.ts, cpu_uuid(0, a.cpu as usize), "alarm", args)?;
    }
    for (i, r) in runs.iter().enumerate() {
        for c in r.compactions.iter().filter(|c| c.scanned) {
            let trigger = match c.trigger {
                Trigger::Tick => "compaction (tick)",
                Trigger::Resume => "compaction (resume)",
            };
            let args = vec![
                p.uint("mm", c.mm.0 as u64),
                p.uint("tid", c.tid as u64),
                p.uint("cpus_scanned", c.cpus_scanned.len() as u64),
                p.uint("freed", c.freed.len() as u64),
                p.uint("lazied", c.lazied.len() as u64),
            ];
            p.instant(c.ts, cpu_uuid(i as u64 + 1, c.cpu as usize), trigger, args)?;
        }
    }
    Ok(p.n)
}

fn counter<W: Write>(p: &mut Packets<W>, ts: u64, track: u64, v: i64) -> io::Result<()> {
    p.n.counter_values += 1;
    p.event(
        ts,
        TrackEvent {
            r#type: Some(TYPE_COUNTER),
            track_uuid: Some(track),
            counter_value: Some(v),
            ..Default::default()
        },
    )
}

/// The slices of one source's lanes, merged across CPUs in time order (so that each CID's
/// holders come in the order they held it), with the flows between holders.
fn slices<W: Write>(
    p: &mut Packets<W>,
    trace: &Trace,
    tl: &Timeline,
    src: u64,
    lanes: &[SegLane],
) -> io::Result<()> {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    let mut heap: BinaryHeap<Reverse<(u64, usize, usize)>> = lanes
        .iter()
        .enumerate()
        .filter_map(|(c, l)| l.first().map(|s| Reverse((s.start, c, 0))))
        .collect();
    // per CPU, the slice open there; per (mm, CID), its last holder (tid, CPU)
    let mut open: Vec<bool> = vec![false; lanes.len()];
    let mut holder: FxHashMap<(MmId, i32), (u32, usize)> = FxHashMap::default();
    while let Some(Reverse((start, c, i))) = heap.pop() {
        let lane = &lanes[c];
        let Some(s) = lane.get(i) else { continue };
        let next = lane.get(i + 1);
        if let Some(n) = &next {
            heap.push(Reverse((n.start, c, i + 1)));
        }
        let end = next.map_or(tl.last_ts, |n| n.start);
        if open[c] {
            end_slice(p, start, cpu_uuid(src, c))?;
            open[c] = false;
        }
        if s.tid == 0 || end <= s.start {
            continue;
        }
        begin_slice(p, trace, tl, src, c, &s, &mut holder)?;
        open[c] = true;
    }
    for (c, o) in open.iter().enumerate() {
        if *o {
            end_slice(p, tl.last_ts, cpu_uuid(src, c))?;
        }
    }
    Ok(())
}

fn end_slice<W: Write>(p: &mut Packets<W>, ts: u64, track: u64) -> io::Result<()> {
    p.event(
        ts,
        TrackEvent {
            r#type: Some(TYPE_SLICE_END),
            track_uuid: Some(track),
            ..Default::default()
        },
    )
}

fn begin_slice<W: Write>(
    p: &mut Packets<W>,
    trace: &Trace,
    tl: &Timeline,
    src: u64,
    cpu: usize,
    s: &Segment,
    holder: &mut FxHashMap<(MmId, i32), (u32, usize)>,
) -> io::Result<()> {
    p.n.slices += 1;
    let name = match s.cid() {
        Some(c) => format!("CID {c}"),
        None => "no CID".to_string(),
    };
    let mut flow_ids = Vec::new();
    if let Some(cid) = s.cid()
        && s.mm.is_real()
    {
        // a new holder (another task, or the same on another CPU) of this CID of this mm
        match holder.insert((s.mm, cid), (s.tid, cpu)) {
            Some(h) if h == (s.tid, cpu) => {}
            before => {
                p.n.flows += u64::from(before.is_some());
                flow_ids.push(flow_id(src, s.mm, cid));
            }
        }
    }
    let mut args = vec![
        p.uint("tid", s.tid as u64),
        p.string("comm", trace.comm_of(s.tid).to_string()),
        p.uint("confirmed", u64::from(s.flags.contains(Segment::CONFIRMED))),
    ];
    if let Some(c) = s.cid() {
        args.push(p.int("cid", c as i64));
    }
    if let Some(i) = s.mm.is_real().then(|| tl.mm_info(s.mm)).flatten() {
        args.push(p.string("process", i.label()));
    }
    let iid = p.name(&name);
    p.event(
        s.start,
        TrackEvent {
            r#type: Some(TYPE_SLICE_BEGIN),
            track_uuid: Some(cpu_uuid(src, cpu)),
            name_iid: Some(iid),
            debug_annotations: args,
            flow_ids,
            ..Default::default()
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flow_ids_differ_per_chain() {
        let mut seen = std::collections::HashSet::new();
        for src in 0..3 {
            for mm in 0..50 {
                for cid in 0..64 {
                    assert!(seen.insert(flow_id(src, MmId(mm), cid)));
                }
            }
        }
    }

    #[test]
    fn packets_are_field_one_of_a_trace() {
        let t = crate::testing::trace_from_bytes(&crate::testing::synth_ftrace(400, 2, 2, 3, 7));
        let tl = Timeline::build(&t);
        let mut out = Vec::new();
        let n = write(&t, &tl, &[], &mut out).unwrap();
        assert!(n.slices > 0 && n.tracks > 2);
        // walk the file as a Trace: every field is 1, length-delimited, and decodes
        let mut b = &out[..];
        let mut packets = 0;
        while !b.is_empty() {
            let (tag, wire) = prost::encoding::decode_key(&mut b).unwrap();
            assert_eq!((tag, wire), (1, prost::encoding::WireType::LengthDelimited));
            let len = prost::encoding::decode_varint(&mut b).unwrap() as usize;
            TracePacket::decode(&b[..len]).unwrap();
            b = &b[len..];
            packets += 1;
        }
        assert_eq!(packets, n.packets);
    }
}
