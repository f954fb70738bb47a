//! Errors of the model's inputs (parameters given on the command line or by a caller).

/// What was wrong with a model input.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ModelError {
    /// An entry of a CPU list that is neither `N` nor `A-B`.
    #[error("expected a CPU number or range like 2-5, found \"{part}\"")]
    CpuListEntry { part: String },
    /// A CPU list entry naming a CPU the model does not have.
    #[error("CPU range \"{part}\" is outside 0..{bound} (the simulated CPUs)")]
    CpuOutOfRange { part: String, bound: u32 },
}
