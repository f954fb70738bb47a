//! Export: the observed timeline to formats other tools open (Perfetto JSON, CSV; these read
//! the timeline index only), and a trace as ftrace text.

pub mod csv;
pub mod ftrace;
pub mod live_record;
pub mod perfetto;
pub mod record;
pub mod svg;
