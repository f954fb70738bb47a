//! The invariants of the models specification (docs/models.md §2.6, §3.3, §4.6) by name, plus
//! the two impossible states every policy can reach.

use crate::model::tasks::MmId;
use std::fmt;

/// A broken invariant found by a check: in which mm (if one), which, and what was seen.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    pub mm: Option<MmId>,
    pub invariant: Invariant,
    pub detail: String,
}

impl Finding {
    pub fn new(mm: Option<MmId>, invariant: Invariant, detail: String) -> Finding {
        Finding {
            mm,
            invariant,
            detail,
        }
    }
}

/// Which invariant a [`super::run::Violation`] broke. Displays (and serializes) as the spec's
/// name: `L1`, `R4`, `O3`, `EXHAUSTED`, `ABI`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Invariant {
    /// lazy-compact L1 bijection: each cidmask bit is held by exactly one slot, and back.
    L1,
    /// L2 uniqueness: a running active task holds its CPU slot's CID.
    L2,
    /// L3 range: CIDs below `nr_cpus_allowed` (6.13+) or P (6.4–6.12).
    L3,
    /// L4 weight: cidmask weight = non-`Unset` slots ≤ `nr_cpus_allowed`.
    L4,
    /// L5 compact: after a scan no idle slot is old or ≥ W.
    L5,
    /// resume-batch R1 batch progress: `scan_batch` runs 0 → 1 → … → N.
    R1,
    /// R2 rate: cycle starts ≥ D jiffies apart.
    R2,
    /// R3 trigger: batches only in the notify handler of a registered, non-exiting task.
    R3,
    /// R4 fallback timing: rule (B) at most once per D jiffies per task.
    R4,
    /// R5 asymmetry of the tick and batch period tests.
    R5,
    /// owner-mode O1 uniqueness among running tasks.
    O1,
    /// O2 range: CIDs below P.
    O2,
    /// O3 ownership: each set CID has exactly one owner (task or CPU).
    O3,
    /// O4 no mode left in TRANSIT after an event.
    O4,
    /// O5 mode thresholds (`max_cids`, `pcpu_thrs`).
    O5,
    /// O6 convergence at schedin when a CID below `max_cids` is free.
    O6,
    /// No free CID below P: the kernel would spin (or live-lock) here.
    Exhausted,
    /// The ABI guarantees to user space: unique CIDs among running threads of an mm, CID < P.
    Abi,
}

impl Invariant {
    /// The name in the spec.
    pub fn name(self) -> &'static str {
        match self {
            Invariant::L1 => "L1",
            Invariant::L2 => "L2",
            Invariant::L3 => "L3",
            Invariant::L4 => "L4",
            Invariant::L5 => "L5",
            Invariant::R1 => "R1",
            Invariant::R2 => "R2",
            Invariant::R3 => "R3",
            Invariant::R4 => "R4",
            Invariant::R5 => "R5",
            Invariant::O1 => "O1",
            Invariant::O2 => "O2",
            Invariant::O3 => "O3",
            Invariant::O4 => "O4",
            Invariant::O5 => "O5",
            Invariant::O6 => "O6",
            Invariant::Exhausted => "EXHAUSTED",
            Invariant::Abi => "ABI",
        }
    }
}

impl fmt::Display for Invariant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl serde::Serialize for Invariant {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_the_spec_names() {
        assert_eq!(Invariant::L5.to_string(), "L5");
        assert_eq!(Invariant::Exhausted.to_string(), "EXHAUSTED");
        assert_eq!(serde_json::to_string(&Invariant::Abi).unwrap(), "\"ABI\"");
    }
}
