//! The process-private futex hash's `mm_users` reference (6.17+; docs/models.md §2.3): taken
//! when a thread's clone grows the hash with no replacement pending, dropped by an RCU
//! callback's `mmput_async`; the pending replacement is installed only later.

mod common;

use common::agreement::checked_cut;

/// A whole fresh probed 6.18.15 48-vCPU `workers` boot (traces/inference/README.md). The
/// reference taken at the 6th thread's clone goes at the `cid_mmput_async` of 20.108403 while
/// the 128-bucket replacement is still pending; the 34th thread's clone (33 threads: 256
/// buckets) then installs the greater one and takes no reference, so the `cid_fork` of
/// 20.241011 reads 35 users. A model that installed the pending hash at the drop counted a new
/// reference there and read one user too many at all 64 later probes (121 of 206 matched, 712
/// of 719 updates).
#[test]
fn a_growth_after_the_drop_installs_the_pending_hash_without_a_reference() {
    let file = "inference/k6.18.15-c48-workers-futex-pending.ftrace.txt.zst";
    let c = checked_cut(file, &[]);
    assert_eq!(c.probe_checks(), (206, 206), "{}", c.a);
    assert_eq!(c.fresh, (688, 688), "{}", c.a);
    assert_eq!(c.predicted, 688, "{}", c.a);
    assert!(c.steps.is_empty(), "{}", c.a);
}
