//! What a CPU lane shows at an instant ([`Segment`]) and the typed flags of a CID slot
//! ([`SlotFlags`]). Observed lanes (the timeline) and model lanes (a policy run) share them, so
//! both can be drawn and compared the same way.

use crate::events::Tid;
use crate::model::tasks::MmId;
use std::fmt;
use std::ops::{BitAnd, BitOr, BitOrAssign};

/// Flags of a CPU's slot or of a CID word: the state a lane segment or a model slot is in.
///
/// `LAZY`, `TRANSIT` and `ONCPU` are the kernel's CID flag bits (`MM_CID_LAZY_PUT`,
/// `MM_CID_TRANSIT`, `MM_CID_ONCPU`) as one small set; the numeric values are those the JSON
/// output carries (`slots[].flags`), so they never change.
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct SlotFlags(u8);

impl SlotFlags {
    /// No flag.
    pub const EMPTY: SlotFlags = SlotFlags(0);
    /// Lanes: the task reported this CID since it was switched in (observed), or the model gives
    /// it one (model lanes).
    pub const CONFIRMED: SlotFlags = SlotFlags(1);
    /// lazy-compact: `MM_CID_LAZY_PUT`: released at its CPU's next switch-out.
    pub const LAZY: SlotFlags = SlotFlags(2);
    /// owner-mode: `MM_CID_TRANSIT`: a CID in a mode-switch fixup.
    pub const TRANSIT: SlotFlags = SlotFlags(4);
    /// owner-mode: `MM_CID_ONCPU`: the CPU owns the CID.
    pub const ONCPU: SlotFlags = SlotFlags(8);
    /// lazy-compact: a valid CID in the slot.
    pub const VALID: SlotFlags = SlotFlags(16);
    /// lazy-compact: `MM_CID_UNSET`, no CID in the slot.
    pub const UNSET: SlotFlags = SlotFlags(32);
    /// The slot states a lane segment carries (a model slot's LAZY/TRANSIT/ONCPU).
    pub const LANE_STATES: SlotFlags = SlotFlags(2 | 4 | 8);

    const NAMES: [(SlotFlags, &'static str); 6] = [
        (Self::CONFIRMED, "CONFIRMED"),
        (Self::LAZY, "LAZY"),
        (Self::TRANSIT, "TRANSIT"),
        (Self::ONCPU, "ONCPU"),
        (Self::VALID, "VALID"),
        (Self::UNSET, "UNSET"),
    ];

    const ALL_BITS: u8 = 63;

    /// The flags of a raw value, `None` when it has bits no flag names.
    pub const fn from_bits(bits: u8) -> Option<SlotFlags> {
        if bits & !Self::ALL_BITS == 0 {
            Some(SlotFlags(bits))
        } else {
            None
        }
    }

    /// The raw value (what JSON shows).
    pub const fn bits(self) -> u8 {
        self.0
    }

    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// Every flag of `other` is set.
    pub const fn contains(self, other: SlotFlags) -> bool {
        self.0 & other.0 == other.0
    }

    /// Some flag of `other` is set.
    pub const fn intersects(self, other: SlotFlags) -> bool {
        self.0 & other.0 != 0
    }

    /// `self` when `on`, else no flag.
    pub const fn when(self, on: bool) -> SlotFlags {
        if on { self } else { Self::EMPTY }
    }
}

impl BitOr for SlotFlags {
    type Output = SlotFlags;
    fn bitor(self, rhs: SlotFlags) -> SlotFlags {
        SlotFlags(self.0 | rhs.0)
    }
}

impl BitOrAssign for SlotFlags {
    fn bitor_assign(&mut self, rhs: SlotFlags) {
        self.0 |= rhs.0;
    }
}

impl BitAnd for SlotFlags {
    type Output = SlotFlags;
    fn bitand(self, rhs: SlotFlags) -> SlotFlags {
        SlotFlags(self.0 & rhs.0)
    }
}

impl fmt::Debug for SlotFlags {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = Self::NAMES
            .iter()
            .filter(|(flag, _)| self.contains(*flag))
            .map(|(_, name)| *name)
            .collect();
        if names.is_empty() {
            f.write_str("SlotFlags(EMPTY)")
        } else {
            write!(f, "SlotFlags({})", names.join(" | "))
        }
    }
}

impl serde::Serialize for SlotFlags {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u8(self.0)
    }
}

/// A CPU's state from `start` until the next segment of the lane.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    pub start: u64,
    pub tid: Tid,
    pub mm: MmId,
    /// `NO_CID` when the task never reported one.
    pub cid: i32,
    pub flags: SlotFlags,
}

impl Segment {
    pub const NO_CID: i32 = i32::MIN;
    /// The task reported this CID since it was switched in.
    pub const CONFIRMED: SlotFlags = SlotFlags::CONFIRMED;
    /// Model slot states (simulated lanes).
    pub const LAZY: SlotFlags = SlotFlags::LAZY;
    pub const TRANSIT: SlotFlags = SlotFlags::TRANSIT;
    pub const ONCPU: SlotFlags = SlotFlags::ONCPU;

    pub fn cid(&self) -> Option<i32> {
        (self.cid != Self::NO_CID).then_some(self.cid)
    }
    pub fn confirmed(&self) -> bool {
        self.flags.contains(SlotFlags::CONFIRMED)
    }
    /// Same state (everything but the start).
    pub fn same_state(&self, other: &Segment) -> bool {
        (self.tid, self.mm, self.cid, self.flags) == (other.tid, other.mm, other.cid, other.flags)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_combine_and_print() {
        let f = SlotFlags::LAZY | SlotFlags::CONFIRMED;
        assert_eq!(f.bits(), 3);
        assert!(f.contains(SlotFlags::LAZY) && !f.contains(SlotFlags::LAZY | SlotFlags::ONCPU));
        assert!(f.intersects(SlotFlags::LANE_STATES));
        assert_eq!(f & SlotFlags::LANE_STATES, SlotFlags::LAZY);
        assert_eq!(format!("{f:?}"), "SlotFlags(CONFIRMED | LAZY)");
        assert_eq!(format!("{:?}", SlotFlags::EMPTY), "SlotFlags(EMPTY)");
        assert_eq!(serde_json::to_string(&SlotFlags::UNSET).unwrap(), "32");
        assert_eq!(SlotFlags::TRANSIT.when(false), SlotFlags::EMPTY);
        assert_eq!(
            SlotFlags::from_bits(6),
            Some(SlotFlags::LAZY | SlotFlags::TRANSIT)
        );
        assert_eq!(SlotFlags::from_bits(64), None);
    }
}
