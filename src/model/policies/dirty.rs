//! What the handlers of one driver event changed, for the recorder to look at afterwards.

use crate::events::Tid;
use crate::model::tasks::MmId;

/// Slots, tasks, mms and CPUs marked by the handlers of the event being applied. Duplicates
/// are fine: the recorder sorts and dedups.
#[derive(Clone, Debug, Default)]
pub struct Dirty {
    pub slots: Vec<(MmId, u16)>,
    pub tasks: Vec<Tid>,
    pub mms: Vec<MmId>,
    pub cpus: Vec<u16>,
}

impl Dirty {
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
            && self.tasks.is_empty()
            && self.mms.is_empty()
            && self.cpus.is_empty()
    }

    /// Forgets what was marked (nothing is recorded).
    pub fn clear(&mut self) {
        self.slots.clear();
        self.tasks.clear();
        self.mms.clear();
        self.cpus.clear();
    }
}
