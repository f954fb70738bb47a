//! What happened to each task since its previous `rseq_update`: the signature of an update
//! that follows a tick's scan (its CPU ticked while it ran, with no switch in between), which
//! seeding a pre-existing mm reads.

use crate::events::{NO_ROW, Tid, TidPages};

/// Per task, what happened since its previous `rseq_update` (tick-scan signature): bits in
/// pages of tids, no hash per switch and per update.
#[derive(Clone, Default)]
pub(super) struct Since(TidPages);

impl Since {
    pub(super) const SWITCHED: u32 = 1;
    pub(super) const TICKED: u32 = 2;

    pub(super) fn mark(&mut self, tid: Tid, bit: u32) {
        let was = self.0.get(tid);
        self.0.set(tid, if was == NO_ROW { bit } else { was | bit });
    }

    /// What happened since the last update, now forgotten: whether its CPU ticked while it
    /// ran with no switch in between.
    pub(super) fn take_tick_scan(&mut self, tid: Tid) -> bool {
        let was = self.0.get(tid);
        if was != NO_ROW && was != 0 {
            self.0.set(tid, 0);
        }
        was != NO_ROW && was & (Self::SWITCHED | Self::TICKED) == Self::TICKED
    }

    pub(super) fn forget(&mut self, tid: Tid) {
        if self.0.get(tid) != NO_ROW {
            self.0.set(tid, NO_ROW);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tick_with_no_switch_since_the_last_update_is_a_tick_scan() {
        let mut s = Since::default();
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
