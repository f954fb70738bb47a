//! What an ftrace text line prints that a canonical event does not keep.

use super::strings::StrId;

/// The irq-flags columns and the fields cidscope does not model, for writing a capture as ftrace
/// text. One per event of a live capture; the writer falls back to neutral values without it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EventAux {
    /// `common_flags` (irqs-off, need-resched, hardirq/softirq bits).
    pub irq_flags: u8,
    /// `common_preempt_count` (preempt depth, migrate-disable depth).
    pub preempt_count: u8,
    /// `group_dead` of sched_process_exit.
    pub flag: bool,
    /// `prev_prio` (switch), `prio` (migrate, exit), `oom_score_adj` (task_newtask).
    pub prio: i16,
    /// `prev_comm` (switch), `comm` (migrate, exit, newtask), `parent_comm` (fork), `filename`
    /// (exec), `function` (hrtimer), `dependency` (tick_stop).
    pub text: StrId,
    /// `child_comm` (fork).
    pub text2: StrId,
}

impl EventAux {
    /// TRACE_FLAG_IRQS_OFF of `common_flags` (kernel/trace/trace.h): the record was traced with
    /// interrupts disabled, the `d` (or `D`) of the text's irq-flags column.
    pub const IRQS_OFF: u8 = 0x01;

    /// Whether the event was traced with interrupts disabled.
    pub fn irqs_off(&self) -> bool {
        self.irq_flags & Self::IRQS_OFF != 0
    }
}
