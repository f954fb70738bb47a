//! What happened to each task since its previous `rseq_update`: the signature of an update
//! that follows a tick's scan (its CPU ticked while it ran, with no switch in between), which
//! seeding a pre-existing mm reads.

use crate::events::{NO_ROW, Tid, TidPages};

/// Per task, what happened since its previous `rseq_update` (tick-scan signature): bits in
/// pages of tids, no hash per switch and per update.
#[derive(Clone, Default)]
pub(super) struct Since {
    tids: TidPages,
    /// Whether anything is noted: only seeding reads it.
    on: bool,
}

impl Since {
    pub(super) fn new(on: bool) -> Since {
        Since {
            tids: TidPages::default(),
            on,
        }
    }

    pub(super) const SWITCHED: u32 = 1;
    pub(super) const TICKED: u32 = 2;

    pub(super) fn mark(&mut self, tid: Tid, bit: u32) {
        if !self.on {
            return;
        }
        let was = self.tids.get(tid);
        self.tids
            .set(tid, if was == NO_ROW { bit } else { was | bit });
    }

    /// What happened since the last update, now forgotten: whether its CPU ticked while it
    /// ran with no switch in between.
    pub(super) fn take_tick_scan(&mut self, tid: Tid) -> bool {
        let was = self.tids.get(tid);
        if was != NO_ROW && was != 0 {
            self.tids.set(tid, 0);
        }
        was != NO_ROW && was & (Self::SWITCHED | Self::TICKED) == Self::TICKED
    }

    pub(super) fn forget(&mut self, tid: Tid) {
        if self.tids.get(tid) != NO_ROW {
            self.tids.set(tid, NO_ROW);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tick_with_no_switch_since_the_last_update_is_a_tick_scan() {
        assert!(!Since::default().take_tick_scan(5));
        let mut off = Since::new(false);
        off.mark(5, Since::TICKED);
        assert!(
            !off.take_tick_scan(5),
            "nothing noted when no seeding reads it"
        );
        let mut s = Since::new(true);
        assert!(!s.take_tick_scan(5), "nothing happened yet");
        s.mark(5, Since::TICKED);
        assert!(s.take_tick_scan(5));
        assert!(!s.take_tick_scan(5), "taken: forgotten until the next tick");
        s.mark(5, Since::TICKED);
        s.mark(5, Since::SWITCHED);
        assert!(!s.take_tick_scan(5), "a switch since then");
        s.mark(6, Since::TICKED);
        s.forget(6);
        assert!(!s.take_tick_scan(6));
        // (tids past the pages go to their map: the same answers)
        s.mark(u32::MAX - 3, Since::TICKED);
        assert!(s.take_tick_scan(u32::MAX - 3));
    }
}
