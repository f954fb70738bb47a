//! The CID word of §4.1: a CID number with the ownership bits the kernel keeps in it.

use crate::model::lane::SlotFlags;

/// `MM_CID_UNSET`: no CID.
pub const UNSET: u32 = 1 << 31;
/// `MM_CID_ONCPU`: the CPU owns the CID.
pub const ONCPU: u32 = 1 << 30;
/// `MM_CID_TRANSIT`: a CID in transit during a mode-switch fixup.
pub const TRANSIT: u32 = 1 << 29;

/// The CID number without the ownership flags.
pub fn plain(x: u32) -> u32 {
    x & !(ONCPU | TRANSIT)
}
/// No flag bits: owned by a task (or a plain mirror in a slot).
pub fn on_task(x: u32) -> bool {
    x < TRANSIT
}
pub fn on_cpu(x: u32) -> bool {
    x & ONCPU != 0
}
pub fn in_transit(x: u32) -> bool {
    x & TRANSIT != 0
}
/// What user space sees (`task_mm_cid`): the plain number, `None` when unset.
pub fn visible(x: u32) -> Option<i32> {
    (x & UNSET == 0).then(|| plain(x) as i32)
}
/// ONCPU/TRANSIT of a word as [`SlotFlags`].
pub fn flags_of(x: u32) -> SlotFlags {
    let mut f = SlotFlags::EMPTY;
    if on_cpu(x) {
        f |= SlotFlags::ONCPU;
    }
    if in_transit(x) {
        f |= SlotFlags::TRANSIT;
    }
    f
}

/// A CID word as text: `3|ONCPU`, `UNSET`.
pub fn word(x: u32) -> String {
    if x & UNSET != 0 {
        return "UNSET".into();
    }
    let mut s = plain(x).to_string();
    if on_cpu(x) {
        s.push_str("|ONCPU");
    }
    if in_transit(x) {
        s.push_str("|TRANSIT");
    }
    s
}

/// `thrs(opt)`: the switch-back threshold (`mm_cid_calc_pcpu_thrs`) on `cpus` CPUs.
pub fn thrs(opt: u32, cpus: u32) -> u32 {
    (opt - opt / 4).min(cpus / 2).max(1)
}

/// `max_cids` for `opt = min(nr_cpus_allowed, users)`: +25 % allowance, at most P.
pub fn max_cids_for(opt: u32, cpus: u32) -> u32 {
    (opt + opt / 4).min(cpus)
}
