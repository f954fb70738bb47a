//! The jump history (Ctrl-O back, Ctrl-I forward): where the cursor and the window were before
//! each jump, as in vim and less. Steps and zooms are not jumps; a jump after going back
//! forgets the places ahead.

/// A place to come back to: the cursor's event and the window around it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Place {
    pub cursor: usize,
    pub t0: u64,
    pub span: u64,
}

#[derive(Clone, Debug, Default)]
pub struct JumpHistory {
    back: Vec<Place>,
    ahead: Vec<Place>,
}

/// Places kept each way (older ones are forgotten).
const KEPT: usize = 100;

impl JumpHistory {
    /// A jump left `from` for `to`: `from` is the place to come back to.
    pub fn record(&mut self, from: Place, to: Place) {
        if from.cursor == to.cursor && from.t0 == to.t0 && from.span == to.span {
            return;
        }
        if self.back.last() != Some(&from) {
            self.back.push(from);
        }
        if self.back.len() > KEPT {
            self.back.remove(0);
        }
        self.ahead.clear();
    }

    /// Back from `now`: the place to go to.
    pub fn back(&mut self, now: Place) -> Option<Place> {
        let p = self.back.pop()?;
        self.ahead.push(now);
        Some(p)
    }

    /// Forward again from `now`.
    pub fn forward(&mut self, now: Place) -> Option<Place> {
        let p = self.ahead.pop()?;
        self.back.push(now);
        Some(p)
    }

    /// (places back, places ahead).
    pub fn depth(&self) -> (usize, usize) {
        (self.back.len(), self.ahead.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(cursor: usize) -> Place {
        Place {
            cursor,
            t0: cursor as u64,
            span: 10,
        }
    }

    #[test]
    fn back_and_forward_walk_the_jumps_and_a_new_jump_forgets_what_was_ahead() {
        let mut h = JumpHistory::default();
        h.record(at(1), at(5));
        h.record(at(5), at(9));
        assert_eq!(h.back(at(9)), Some(at(5)));
        assert_eq!(h.back(at(5)), Some(at(1)));
        assert_eq!(h.back(at(1)), None);
        assert_eq!(h.forward(at(1)), Some(at(5)));
        assert_eq!(h.depth(), (1, 1));
        h.record(at(5), at(7));
        assert_eq!(h.forward(at(7)), None);
        // a jump that goes nowhere is not remembered
        h.record(at(7), at(7));
        assert_eq!(h.depth(), (2, 0));
    }
}
