#!/usr/bin/env python3
"""pftrace-counts.py -- decode a Perfetto protobuf trace with Perfetto's own schema and count it.

    scripts/pftrace-counts.py FILE.pftrace

Decodes FILE with `perfetto_trace_pb2` (the `perfetto_trace.proto` schema as the `perfetto`
PyPI package ships it, through Python protobuf: no code shared with the writer), checks what a
loader relies on (a sequence whose first packet clears the incremental state, every interned id
defined before use, every slice end matching a begin on its track, counters on counter tracks),
and prints one JSON object of counts:

    tracks, root_tracks, cpu_tracks, counter_tracks
    slices, counter_values, instants, flow_links, names_interned
    by_root: {"ROOT TRACK NAME": {cpu_tracks, counter_tracks, slices, counter_values, flow_links}}
    cids_by_process: {"tgid 3082": [0, 1, ...]}  (the observed source's CIDs per process)

Exits 1 (with the reason on stderr) on a check that fails; `pip install perfetto protobuf`.
"""
import json
import sys
from collections import defaultdict

from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb


def fail(msg):
    print(f'pftrace-counts: {msg}', file=sys.stderr)
    sys.exit(1)


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip())
        sys.exit(2)
    trace = pb.Trace()
    with open(sys.argv[1], 'rb') as f:
        trace.ParseFromString(f.read())
    TE = pb.TrackEvent
    tracks, parent, names, args = {}, {}, {}, {}
    cleared = False
    open_slices = defaultdict(int)
    out = defaultdict(int)
    by_root = defaultdict(lambda: defaultdict(int))
    cids = defaultdict(set)
    flows = defaultdict(int)
    last_ts = {}
    for i, p in enumerate(trace.packet):
        if i == 0:
            if not p.sequence_flags & pb.TracePacket.SEQ_INCREMENTAL_STATE_CLEARED:
                fail('the first packet does not clear the incremental state')
            cleared = True
        if p.trusted_packet_sequence_id != 1:
            fail(f'packet {i}: sequence {p.trusted_packet_sequence_id}')
        if p.HasField('interned_data'):
            for n in p.interned_data.event_names:
                names[n.iid] = n.name
            for n in p.interned_data.debug_annotation_names:
                args[n.iid] = n.name
        if p.HasField('track_descriptor'):
            t = p.track_descriptor
            if t.uuid in tracks:
                fail(f'track uuid {t.uuid} defined twice')
            tracks[t.uuid] = t
            if t.HasField('parent_uuid'):
                if t.parent_uuid not in tracks:
                    fail(f'track {t.name}: parent defined after it')
                parent[t.uuid] = t.parent_uuid
        if not p.HasField('track_event'):
            continue
        if not cleared or not p.sequence_flags & pb.TracePacket.SEQ_NEEDS_INCREMENTAL_STATE:
            fail(f'packet {i}: an event without incremental state')
        e = p.track_event
        if e.track_uuid not in tracks:
            fail(f'packet {i}: event on undefined track {e.track_uuid}')
        t = tracks[e.track_uuid]
        root = tracks[parent.get(e.track_uuid, e.track_uuid)].name
        if e.type in (TE.TYPE_SLICE_BEGIN, TE.TYPE_INSTANT) and e.name_iid not in names:
            fail(f'packet {i}: name iid {e.name_iid} not interned')
        for a in e.debug_annotations:
            if a.name_iid not in args:
                fail(f'packet {i}: argument name iid {a.name_iid} not interned')
        if e.type == TE.TYPE_SLICE_BEGIN:
            if t.HasField('counter'):
                fail(f'packet {i}: a slice on a counter track')
            if last_ts.get(e.track_uuid, 0) > p.timestamp:
                fail(f'packet {i}: a slice begins before the previous one on its track')
            last_ts[e.track_uuid] = p.timestamp
            open_slices[e.track_uuid] += 1
            out['slices'] += 1
            by_root[root]['slices'] += 1
            for f in e.flow_ids:
                flows[(root, f)] += 1
            a = {args[x.name_iid]: x for x in e.debug_annotations}
            if root.startswith('CPUs') and 'cid' in a and 'process' in a:
                cids[a['process'].string_value].add(a['cid'].int_value)
        elif e.type == TE.TYPE_SLICE_END:
            if open_slices[e.track_uuid] == 0:
                fail(f'packet {i}: a slice end without a begin on track {t.name}')
            open_slices[e.track_uuid] -= 1
        elif e.type == TE.TYPE_COUNTER:
            if not t.HasField('counter'):
                fail(f'packet {i}: a counter value on a track that is no counter')
            out['counter_values'] += 1
            by_root[root]['counter_values'] += 1
        elif e.type == TE.TYPE_INSTANT:
            out['instants'] += 1
        else:
            fail(f'packet {i}: event type {e.type}')
    if any(open_slices.values()):
        fail('slices left open at the end')
    out['tracks'] = len(tracks)
    out['root_tracks'] = sum(1 for u in tracks if u not in parent)
    out['counter_tracks'] = sum(1 for t in tracks.values() if t.HasField('counter'))
    out['cpu_tracks'] = sum(1 for u, t in tracks.items()
                            if u in parent and not t.HasField('counter'))
    for u, t in tracks.items():
        if u in parent:
            kind = 'counter_tracks' if t.HasField('counter') else 'cpu_tracks'
            by_root[tracks[parent[u]].name][kind] += 1
    # a flow id on n slices links n - 1 pairs
    out['flow_links'] = sum(n - 1 for n in flows.values())
    for (root, _), n in flows.items():
        by_root[root]['flow_links'] += n - 1
    out['names_interned'] = len(names)
    out['packets'] = len(trace.packet)
    out['by_root'] = {k: dict(v) for k, v in by_root.items()}
    out['cids_by_process'] = {k: sorted(v) for k, v in sorted(cids.items())}
    print(json.dumps(out, indent=1, sort_keys=True))


if __name__ == '__main__':
    main()
