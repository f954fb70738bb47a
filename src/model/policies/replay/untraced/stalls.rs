//! The placements of steps run at the other end of a vCPU stall (docs/models.md §5.6): a
//! remote clear's held put, a switch step between its record and `cid_switch_done`, and
//! `rq->curr` set ahead of its switch record.

use super::Untraced;
use super::reasons::{CURR_REASON, HELD_CLEAR_REASON, SWITCH_AT_REASON};
use crate::events::Tid;
use crate::model::policies::engine::{DriverEvent, Engine};

impl Untraced {
    /// Whether the remote clear probed at `idx` (by `tid`) holds its put (reported as a gap).
    pub fn held_clear(&mut self, idx: usize, tid: Tid, ts: u64) -> bool {
        let held = self.placements.held_clears.contains(&idx);
        if held {
            self.gap(tid, ts, ts, HELD_CLEAR_REASON);
        }
        held
    }

    /// Pending switch steps placed before event `idx` (each a gap).
    pub fn switch_steps_at(&mut self, engine: &mut Engine, idx: usize, ts: u64) {
        let Some(v) = self.placements.switch_steps_at.get(&idx).cloned() else {
            return;
        };
        for cpu in v {
            let pending = engine
                .core
                .pending_switch
                .get(cpu as usize)
                .copied()
                .flatten();
            if let Some((_, next)) = pending {
                self.gap(next, ts, ts, SWITCH_AT_REASON);
                engine.step(ts, &DriverEvent::SchedIn { cpu });
            }
        }
    }

    /// `rq->curr` set ahead of switch records, placed before event `idx` (each a gap).
    pub fn early_currs_at(&mut self, engine: &mut Engine, idx: usize, ts: u64) {
        let Some(v) = self.placements.early_currs.get(&idx).cloned() else {
            return;
        };
        for (cpu, tid) in v {
            self.gap(tid, ts, ts, CURR_REASON);
            engine.step(ts, &DriverEvent::CurrEarly { cpu, tid });
        }
    }
}
