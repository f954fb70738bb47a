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

/// The clone sizes the hash with the thread count of its step, but its `futex_ref_drop` (the
/// `mmget`) may come much later: a whole fresh probed 6.18.15 48-vCPU mcwork `churn` boot
/// (traces/inference/README.md). Main's clone of 550 enters `sched_mm_cid_fork` at 13.509071
/// with nine threads (the hash grows from 32 to 64 buckets), and its CPU records nothing more
/// until the fork's record at 13.520333; the eight exits in between read `mm_users` without the
/// reference, the next fork (13.521028) with it. 547's switch-in at 13.517871 allocated with 5
/// users, so `max_nr_cid` shrank to 5 and it took CID 1, not its recent 5. Counted at the
/// step, the reference left that update wrong and eight readings one above the kernel's.
#[test]
fn a_clones_futex_reference_counts_from_its_mmget_not_its_sizing() {
    let file = "inference/k6.18.15-c48-mcwork-churn-futex-get-late.ftrace.txt.zst";
    let c = checked_cut(file, &["--kernel-version", "6.18.15", "--hz", "250"]);
    assert_eq!(c.probe_checks(), (445, 445), "{}", c.a);
    assert_eq!(c.fresh, (291, 291), "{}", c.a);
    assert_eq!(c.predicted, 291, "{}", c.a);
    assert!(c.steps.is_empty(), "{}", c.a);
}

/// The other end of the same stall: a clone that sizes the hash after threads exited. The
/// first 3,200 lines of a fresh probed 6.18.15 48-vCPU mcwork `churn` boot (stop 62, seed 5643
/// boot 14; traces/inference/README.md). 526's clone reads nine threads at its `cid_fork`
/// (22.087036), then its vCPU records nothing until 22.092782 while 518-525 exit:
/// `futex_hash_allocate_default`, after `copy_mm`, counted the threads left and grew nothing,
/// so the 10th thread's clone (544, 22.126832) grew the hash to 64 buckets and took a
/// reference, which every `mm_users` reading until the `cid_mmput_async` of 22.184904 shows.
/// Sized at 526's probe the model had no growth at 544 and read one user short there: 123/141
/// and probe values 159/201. The search sizes 526's hash at its record
/// (`futex_sized_at_record`).
#[test]
fn a_stalled_clone_sizes_the_hash_for_the_threads_left_at_its_record() {
    let file = "inference/k6.18.15-c48-mcwork-churn-futex-sized-late.ftrace.txt.zst";
    let c = checked_cut(file, &["--kernel-version", "6.18.15", "--hz", "250"]);
    assert_eq!(c.probe_checks(), (201, 201), "{}", c.a);
    assert_eq!(c.fresh, (141, 141), "{}", c.a);
    assert_eq!(c.predicted, 123, "{}", c.a);
    assert!(
        c.steps
            .iter()
            .any(|s| s.0 == "futex_sized_at_record" && s.1 == 526),
        "{:?}",
        c.steps
    );
}
