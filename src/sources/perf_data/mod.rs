//! perf.data (placeholder while the reader is written).
use super::{LoadOptions, SourceError};
use crate::events::Trace;
pub fn load(name: &str, _data: &[u8], _opts: &LoadOptions) -> Result<Trace, SourceError> {
    Err(SourceError::file(name, "todo"))
}
