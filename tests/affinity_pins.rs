//! T4 (docs/models.md §5.3): an affinity the replay inferred from a stopper's move is undone
//! once the task is placed on a CPU outside it.

mod common;

use common::agreement::checked_cut;

/// The first 3,023 events (up to 16.88 s) of a fresh probed 6.18.15 50-vCPU mcwork `forks` boot
/// (stop 64, seed 5656 boot 6; traces/inference/README.md). `migration/24` moves the forking
/// parent 501 from CPU 24 to CPU 6 at 16.776904, a load balance (`active_load_balance_cpu_stop`
/// runs on the same stopper) the replay took for a pin to CPU 6. 501 forks 528 at 16.825357:
/// its new mm inherits the one CPU, and 528's threads, run on CPUs 10-12, take CIDs 1 and 2
/// that the model's `nr_cpus_allowed` of 1 forbids (34 L3/L4 breaks in the cut, 3,421 in the
/// boot). 528 woken on CPU 10 shows it may run there: no pin was set, and its mm allows every
/// CPU.
#[test]
fn a_child_placed_outside_its_inherited_pin_undoes_it() {
    let file = "inference/k6.18.15-c50-mcwork-forks-inherited-pin.ftrace.txt.zst";
    let c = checked_cut(file, &["--kernel-version", "6.18.15", "--hz", "250"]);
    assert_eq!(c.fresh, (231, 231), "{}", c.a);
    assert_eq!(c.predicted, 231, "{}", c.a);
    assert_eq!(c.probe_checks(), (37, 37), "{}", c.a);
}
