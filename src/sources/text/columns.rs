//! The fixed columns of an ftrace-family event line, as the line readers split them
//! ([`super::ftrace`] for the tracefs and trace-cmd layouts, [`super::shapes`] for the
//! latency format): shared by both, so neither needs the other's types.

use crate::events::Tid;

/// The fixed columns of an event line.
#[derive(Debug, PartialEq, Eq)]
pub struct Head<'a> {
    pub comm: &'a [u8],
    pub tid: Tid,
    /// `Some(None)` when the TGID column is present but shows `-------`.
    pub tgid: Option<Option<Tid>>,
    pub cpu: u16,
    pub flags: Option<&'a [u8]>,
    pub ts: u64,
    pub name: &'a [u8],
    pub rest: &'a [u8],
}

/// The columns before the event's name: `COMM-PID [(TGID)] [CPU] [FLAGS] SECONDS.FRACTION:`.
#[derive(Debug, PartialEq, Eq)]
pub struct Cols<'a> {
    pub comm: &'a [u8],
    pub tid: Tid,
    pub tgid: Option<Option<Tid>>,
    pub cpu: u16,
    pub flags: Option<&'a [u8]>,
    pub ts: u64,
}
