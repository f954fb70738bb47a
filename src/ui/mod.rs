//! The terminal UI.
use crate::events::Trace;

pub fn run(_trace: Trace) -> std::io::Result<()> {
    Ok(())
}
