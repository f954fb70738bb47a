//! Export: the observed timeline to formats other tools open (Perfetto JSON and protobuf, CSV;
//! these read the timeline index only), and a trace as ftrace text.

pub mod csv;
pub mod ftrace;
pub mod live_record;
pub mod perfetto;
pub mod perfetto_proto;
pub mod record;
pub mod svg;
