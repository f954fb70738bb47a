//! Probe readings taken after their stamp (docs/models.md §5.6): the probe's CPU stalled
//! between taking the timestamp and reading its arguments, so the values are compared with
//! what the mm had until that CPU's next record.

mod common;

use common::agreement::checked_cut;

/// A 7.x `cid_fork_users` that reads fewer users than the model holds read them after other
/// exits' releases. A whole fresh probed 7.3.4 41-vCPU mcwork `churn` boot
/// (traces/inference/README.md): 413's fork of 514 is stamped at 15.114482 and reads users 2,
/// `max_cids` 2, where the model holds 4 and 5; CPU 9 records again only at its
/// `cid_fork_done` (15.118903), and 508's and 513's exits in between read 4 and 3 and release
/// their users. Held at the stamp, both values mismatched.
#[test]
fn a_fork_that_read_after_exits_is_compared_up_to_its_cpus_next_record() {
    let file = "inference/k7.3.4-c41-mcwork-churn-fork-read-late.ftrace.txt.zst";
    let c = checked_cut(file, &["--kernel-version", "7.3.4", "--hz", "250"]);
    assert_eq!(c.probe_checks(), (1560, 1560), "{}", c.a);
    assert_eq!(c.fresh, (229, 229), "{}", c.a);
}
