//! The canonical event: what every source produces and every consumer reads.
//!
//! One `Event` is 32 bytes: a timestamp, the CPU that recorded it, the task that was current on
//! that CPU (the `common_pid` of a tracepoint), and a kind with a small payload. Strings (comms,
//! names of events cidscope does not model) are interned in [`Strings`] and referred to by
//! [`StrId`], so an event never owns heap memory.

mod aux;
mod chunks;
mod event;
mod origin;
mod probe;
mod store;
mod strings;
mod tgid;
mod tid_map;
mod tid_pages;
mod time_column;
mod trace;

pub use aux::EventAux;
pub use chunks::{ChannelChunks, EventChunks, PieceReceiver, PieceSender, recycling_channel};
pub use event::{
    CLONE_THREAD, CLONE_VM, CPU_UNKNOWN, Event, EventKind, MAX_TS, PrevState, TID_UNKNOWN, Tid,
    cpu_name, fmt_dur, fmt_ts,
};
pub use origin::{Format, Origin};
pub use probe::{MigrateState, MmCidState, PACKED_ABSENT, PACKED_NEGATIVE, Probe, probe_script};
pub use store::EventStore;
pub use strings::{StrId, Strings, same};
pub use tgid::{TgidTrack, tgid_at};
pub use tid_map::TidMap;
pub use tid_pages::{NO_ROW, TidPages, TidSet};
pub use time_column::TimeColumn;
pub use trace::{TaskMeta, TaskTable, TgidChange, Trace, TraceDelta, Warning, keep_least};
