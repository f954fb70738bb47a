//! The messages of Perfetto's trace format that the export writes: the subset of
//! `perfetto_trace.proto` it needs, with the field numbers and types of that schema (checked
//! by `tests/perfetto_proto.rs`, which decodes the output with the schema itself). Fields are
//! optional as in the schema's proto2: an absent one is not written.

/// `TracePacket`: one unit of the trace. A trace file is a `Trace`, i.e. its packets one after
/// another as field 1.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TracePacket {
    #[prost(uint64, optional, tag = "8")]
    pub timestamp: Option<u64>,
    #[prost(uint32, optional, tag = "10")]
    pub trusted_packet_sequence_id: Option<u32>,
    #[prost(message, optional, tag = "11")]
    pub track_event: Option<TrackEvent>,
    #[prost(message, optional, tag = "12")]
    pub interned_data: Option<InternedData>,
    /// `SequenceFlags`: 1 incremental state cleared, 2 needs incremental state.
    #[prost(uint32, optional, tag = "13")]
    pub sequence_flags: Option<u32>,
    #[prost(message, optional, tag = "60")]
    pub track_descriptor: Option<TrackDescriptor>,
}

pub const SEQ_INCREMENTAL_STATE_CLEARED: u32 = 1;
pub const SEQ_NEEDS_INCREMENTAL_STATE: u32 = 2;

/// `TrackDescriptor`: a track (a timeline row) and where it sits.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TrackDescriptor {
    #[prost(uint64, optional, tag = "1")]
    pub uuid: Option<u64>,
    #[prost(string, optional, tag = "2")]
    pub name: Option<String>,
    #[prost(uint64, optional, tag = "5")]
    pub parent_uuid: Option<u64>,
    #[prost(message, optional, tag = "8")]
    pub counter: Option<CounterDescriptor>,
    /// `ChildTracksOrdering`: 3 explicit (by `sibling_order_rank`).
    #[prost(int32, optional, tag = "11")]
    pub child_ordering: Option<i32>,
    #[prost(int32, optional, tag = "12")]
    pub sibling_order_rank: Option<i32>,
    #[prost(string, optional, tag = "14")]
    pub description: Option<String>,
}

pub const CHILD_ORDERING_EXPLICIT: i32 = 3;

/// `CounterDescriptor`: makes a track a counter track.
#[derive(Clone, PartialEq, prost::Message)]
pub struct CounterDescriptor {
    /// `Unit`: 2 count.
    #[prost(int32, optional, tag = "3")]
    pub unit: Option<i32>,
    #[prost(string, optional, tag = "6")]
    pub unit_name: Option<String>,
}

pub const UNIT_COUNT: i32 = 2;

/// `TrackEvent`: a slice begin or end, an instant or a counter value on a track.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TrackEvent {
    #[prost(uint64, repeated, packed = "false", tag = "3")]
    pub category_iids: Vec<u64>,
    #[prost(message, repeated, tag = "4")]
    pub debug_annotations: Vec<DebugAnnotation>,
    /// `Type`: 1 slice begin, 2 slice end, 3 instant, 4 counter.
    #[prost(int32, optional, tag = "9")]
    pub r#type: Option<i32>,
    #[prost(uint64, optional, tag = "10")]
    pub name_iid: Option<u64>,
    #[prost(uint64, optional, tag = "11")]
    pub track_uuid: Option<u64>,
    #[prost(int64, optional, tag = "30")]
    pub counter_value: Option<i64>,
    #[prost(fixed64, repeated, packed = "false", tag = "47")]
    pub flow_ids: Vec<u64>,
    #[prost(fixed64, repeated, packed = "false", tag = "48")]
    pub terminating_flow_ids: Vec<u64>,
}

pub const TYPE_SLICE_BEGIN: i32 = 1;
pub const TYPE_SLICE_END: i32 = 2;
pub const TYPE_INSTANT: i32 = 3;
pub const TYPE_COUNTER: i32 = 4;

/// `DebugAnnotation`: an argument of an event (by interned name).
#[derive(Clone, PartialEq, prost::Message)]
pub struct DebugAnnotation {
    #[prost(uint64, optional, tag = "1")]
    pub name_iid: Option<u64>,
    #[prost(uint64, optional, tag = "3")]
    pub uint_value: Option<u64>,
    #[prost(int64, optional, tag = "4")]
    pub int_value: Option<i64>,
    #[prost(string, optional, tag = "6")]
    pub string_value: Option<String>,
}

/// `InternedData`: names given once per sequence and referred to by id after.
#[derive(Clone, PartialEq, prost::Message)]
pub struct InternedData {
    #[prost(message, repeated, tag = "1")]
    pub event_categories: Vec<Interned>,
    #[prost(message, repeated, tag = "2")]
    pub event_names: Vec<Interned>,
    #[prost(message, repeated, tag = "3")]
    pub debug_annotation_names: Vec<Interned>,
}

/// `EventCategory`, `EventName` and `DebugAnnotationName` share this shape: iid 1, name 2.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Interned {
    #[prost(uint64, optional, tag = "1")]
    pub iid: Option<u64>,
    #[prost(string, optional, tag = "2")]
    pub name: Option<String>,
}
