//! Why a demo could not be set up: its bundled capture did not read, or the data lacks the
//! moment the demo narrates (a bug of the demo, named as such).

use crate::sources::SourceError;

#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    #[error(transparent)]
    Capture(#[from] SourceError),
    /// What the narration needs and the capture or the simulation does not have.
    #[error("{0}")]
    Missing(&'static str),
}
