//! 7.x exits and `mm_cid.mutex` (docs/models.md §5.6): `sched_mm_cid_exit` removes its user
//! under the mutex, which a fork of the mm holds for `sched_mm_cid_fork`'s body and which the
//! exits of an mm take in turn, so a release runs at the latest right before its exit record
//! where a later reading of the mm shows it still counted (`replay/exit_queue.rs`).

mod common;

use common::agreement::{agreement, every_check_matches, fully_explained, mismatches};

/// 7.x: an exit that enters `sched_mm_cid_exit` while a CLONE_VM fork of its mm is inside
/// `sched_mm_cid_fork` (which holds `mm_cid.mutex` for its body) waits for the mutex, and
/// releases at the latest right before its exit record. A cut of a fresh 7.3.4 62-vCPU `burst`
/// boot (traces/inference/README.md): released at their entry probes, 585-588 were gone from
/// the model's users where 589 and four later probes read them still counted (494/512). Their
/// own readings (10 users, `max_cids` 12) are of the mm before the fork's step, which the model
/// runs at the fork's entry (11 and 13): the fork's vCPU stopped before `users++` (`half_fork.rs`).
/// Since their releases wait for their records although those readings came ahead of the
/// model, the plain replay predicts every CID too (stop 55: before, 299 of 305 and a step).
#[test]
fn an_exit_that_enters_during_a_fork_waits_for_its_mutex() {
    let m = agreement("inference/k7.3.4-c62-burst-fork-mutex.ftrace.txt.zst", &[]);
    every_check_matches(&m, 512);
    assert_eq!(m["agreed"], m["checked"], "{m}");
    assert_eq!(m["predicted"], m["checked"], "{m}");
}

/// The same wait where the fork's vCPU stopped half way through `sched_mm_cid_add_user`: a
/// fresh probed 36-vCPU 7.3.4 boot of `traces/mcwork.c` `churn` (traces/inference/README.md).
/// 383's fork of 435 enters at 56.810798 and its `cid_fork_done` comes at 56.842704; 427, 428,
/// 430, 431 and 432 enter their exits in between (56.824046-56.826294), each reading 10 users
/// and `max_cids` 11: the user added, `max_cids` not yet recomputed (the model, whose fork step
/// has run, holds 12). They spin on the mutex, their CPUs recording only ticks, and record
/// their exits from 56.861331 on; 434 reads 9 users at 56.862226, 429 6 at 56.882661. Before,
/// a reading that differed from the model took its release to its CPU's next record, a tick
/// while it spun: the model had 5 users at 434's reading (475/480).
#[test]
fn an_exit_behind_a_half_done_fork_waits_for_its_mutex() {
    fully_explained(
        "inference/k7.3.4-c36-mcwork-churn-exits-behind-fork.ftrace.txt.zst",
        &["--kernel-version", "7.3.4+deb13-cloud-amd64", "--hz", "250"],
        480,
    );
}

/// 7.x: the exits of an mm queue for `mm_cid.mutex` in `sched_mm_cid_exit`, and one whose
/// release had not run when a later exit entered (that exit read as many users) releases at
/// the latest right before its exit record. A fresh 7.3.4 25-vCPU mcwork `hogs` capture
/// (traces/inference/README.md): 313 held the mutex while 21 exits entered reading 28 users.
/// Released at their entry probes, the model counted one user fewer at each (71/77 predicted,
/// probe checks 233/296); an exit that took the mutex ahead of those waiting (328) still
/// releases at its entry.
#[test]
fn exits_that_queue_for_the_mutex_release_in_turn() {
    let m = agreement(
        "inference/k7.3.4-c25-hogs-exit-queue.ftrace.txt.zst",
        &["--kernel-version", "7.3.4+deb13-cloud-amd64", "--hz", "250"],
    );
    assert_eq!(mismatches(&m, 250), Vec::<serde_json::Value>::new());
    assert!(m["predicted"].as_u64() >= Some(76), "{m}");
    assert_eq!(m["agreed"], m["checked"], "{m}");
    // and one whose release a later exit's reading shows done before its record released
    // there: a fresh 7.3.4 44-vCPU mcwork `workers` capture, where 477 and 445 waited out a
    // walk back and released before 482 read 13 users (392/400 when released at their records)
    let m = agreement(
        "inference/k7.3.4-c44-workers-exit-released.ftrace.txt.zst",
        &["--kernel-version", "7.3.4+deb13-cloud-amd64", "--hz", "250"],
    );
    assert_eq!(mismatches(&m, 350), Vec::<serde_json::Value>::new());
}

/// A CLONE_VM fork's `cid_fork_users` tells the exits of its mm apart as a later exit's entry
/// does: the fork holds the mutex for its body, so an exit it read still counted waits for it.
/// A fresh probed 7.3.4 36-vCPU mcwork `churn` boot (traces/inference/README.md): 433 enters
/// `sched_mm_cid_exit` at 14.274200 reading 2 users (main and itself) and CPU 6 records
/// nothing until its exit record at 14.276975; main's fork of 439 reads 2 at 14.275349.
/// Released at its entry, the model had 1 there (1342/1344).
#[test]
fn an_exit_a_fork_read_still_counted_waits_for_the_fork() {
    let m = agreement(
        "inference/k7.3.4-c36-mcwork-churn-exit-held-by-fork.ftrace.txt.zst",
        &["--kernel-version", "7.3.4", "--hz", "250"],
    );
    every_check_matches(&m, 1344);
    assert_eq!(m["predicted"], m["checked"], "{m}");
}
