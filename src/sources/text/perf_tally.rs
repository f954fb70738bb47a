//! What a `perf script` text held besides its events, counted per chunk and summed by the
//! driver: skipped lines, events without a cpu column, and how the times were printed. Apart
//! from the parser so that the chunk can carry it without importing the parser.

use crate::events::Warning;

/// How the times of a `perf script` text were printed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TimeMode {
    /// The kernel clock (perf's default), or relative to the first sample (`--reltime`).
    #[default]
    Absolute,
    /// `--deltatime`: each the time since the sample before, the first 0.
    Delta,
    /// No time column (`-F` without `time`): the samples in the order perf printed them (its
    /// time order), 1 µs apart.
    Untimed,
}

/// Lines that are not events, and events with what their line lacked, counted per chunk.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// Call-stack frames (`perf script` of `perf record -g`): each belongs to the sample above.
    pub stack_frames: u64,
    /// Side-band records (`PERF_RECORD_COMM`, `PERF_RECORD_MMAP2`, ...) printed by
    /// `--show-task-events`, `--show-mmap-events` and the like.
    pub side_band: u64,
    /// Events of a line without the cpu column.
    pub cpu_unknown: u64,
}

impl Tally {
    pub fn add(&mut self, o: &Tally) {
        self.stack_frames += o.stack_frames;
        self.side_band += o.side_band;
        self.cpu_unknown += o.cpu_unknown;
    }

    /// What was skipped or assumed, as warnings.
    pub fn warnings(&self, path: &str, times: TimeMode) -> Vec<Warning> {
        let mut w = Vec::new();
        if self.stack_frames > 0 {
            w.push(Warning {
                code: "stack-frames-skipped",
                message: format!(
                    "{path}: {} call-stack lines (perf record -g) were skipped: each belongs to the sample above it, which is kept (cidscope keeps no stacks)",
                    self.stack_frames
                ),
            });
        }
        if self.side_band > 0 {
            w.push(Warning {
                code: "side-band-records-skipped",
                message: format!(
                    "{path}: {} PERF_RECORD_* lines (perf script --show-task-events and the like) were skipped: cidscope reads the events of samples",
                    self.side_band
                ),
            });
        }
        if self.cpu_unknown > 0 {
            w.push(Warning {
                code: "cpu-unknown",
                message: format!(
                    "{path}: {} events have no cpu column (perf script -F without cpu, or a recording without CPUs): they are kept on an unknown CPU, counted but in no CPU lane, and place no task on a CPU; print the cpu field (perf script -F +cpu) to see them on their CPUs",
                    self.cpu_unknown
                ),
            });
        }
        if times == TimeMode::Untimed {
            w.push(Warning {
                code: "no-time-column",
                message: format!(
                    "{path}: the text has no time column (perf script -F without time): its events were loaded in the order perf printed them (time order), placed 1 us apart from 0; the order is real, the times and durations are not (print -F ...,time for the kernel clock)"
                ),
            });
        }
        if times == TimeMode::Delta {
            w.push(Warning {
                code: "delta-times",
                message: format!(
                    "{path}: the times are deltas (perf script --deltatime): they were added up from 0, so times are relative to the first sample and each line adds up to its printed precision (1 us without --ns) of error; print absolute times (without --deltatime) for the kernel clock"
                ),
            });
        }
        w
    }
}
