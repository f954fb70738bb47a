//! Export: the observed timeline to formats other tools open. Reads the timeline index only.

pub mod csv;
pub mod perfetto;
pub mod svg;
