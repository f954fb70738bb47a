//! CID probes (docs/models.md §5.6): a `cidscope vm` capture with them replays its untraced
//! steps where the guest kernel ran them; the same capture without them leans on the search of
//! §5.3; the state the probes read is held against the model's; `cidscope probes` prints a
//! script a shell accepts.

mod common;

use cidscope::events::{EventKind, Probe, Trace};
use cidscope::model::kernel::model_for_kernel;
use cidscope::model::policies::{Params, PolicyRun, replay};
use cidscope::sources::{LoadOptions, load};
use common::agreement::{
    agreement, all_fresh_agreed, every_check_matches, fully_explained, mismatches,
};
use std::path::Path;

/// A 16-vCPU 6.18.15 churn capture with every probe of a Debian kernel.
const CAPTURE: &str = "traces/kernels/k6.18.15-c16-churn.ftrace.txt.zst";

fn capture() -> Trace {
    load(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join(CAPTURE),
        &LoadOptions::default(),
    )
    .expect(CAPTURE)
}

fn run(trace: &Trace) -> PolicyRun {
    let kv = trace
        .kernel_release
        .clone()
        .expect("the vm header names the kernel");
    let m = model_for_kernel(&kv, trace.kernel_scan_batch).expect("a known kernel");
    let params = Params {
        hz: 250,
        version: m.variant.unwrap_or_default(),
        futex_hash_ref: m.futex_hash_ref,
        kernel_policy: m.policy,
        ..Params::default()
    };
    replay(trace, m.policy.expect("a CID policy"), &params)
}

fn count(trace: &Trace, p: Probe) -> usize {
    trace
        .events
        .iter()
        .filter(|e| matches!(e.kind, EventKind::Probe { probe, .. } if probe == p))
        .count()
}

#[test]
fn a_probed_capture_replays_its_steps_at_the_probes() {
    let t = capture();
    for p in [
        Probe::SwitchDone,
        Probe::MigrateTo,
        Probe::Fork,
        Probe::ForkDone,
        Probe::Exit,
        Probe::MmPut,
        Probe::Scan,
        Probe::RemoteClear,
    ] {
        assert!(count(&t, p) > 0, "{}", p.name());
    }
    // one cid_fork per clone of a task with an mm (kthreadd's kernel threads have none, and
    // `sched_mm_cid_fork` is called only where the child gets an mm)
    const KTHREADD: u32 = 2;
    let forks = t
        .events
        .iter()
        .filter(|e| matches!(e.kind, EventKind::TaskNewtask { .. }) && e.tid != KTHREADD)
        .count();
    assert!(count(&t, Probe::Fork) >= forks, "every clone is probed");
    let run = run(&t);
    let a = run.agreement.expect("an agreement");
    assert_eq!(
        a.fresh.agreed, a.fresh.checked,
        "{:#?}",
        a.first_disagreement
    );
    // what the probes read of the kernel's state, the model holds too
    assert!(a.probe_checks.checked > 100, "{:?}", a.probe_checks);
    assert_eq!(
        a.probe_checks.matched, a.probe_checks.checked,
        "{:#?}",
        a.probe_checks.mismatches
    );
    // a probed step is observed, not placed: the gaps left are the ends of stalls (§5.6)
    assert!(
        a.trace_gaps.len() * 20 < count(&t, Probe::Fork),
        "{:?}",
        a.trace_gaps
    );
}

#[test]
fn without_its_probes_the_same_capture_leans_on_the_search() {
    let t = capture();
    let probed = run(&t).agreement.expect("an agreement");
    let mut plain = t.clone();
    plain.events = plain
        .events
        .iter()
        .filter(|e| !matches!(e.kind, EventKind::Probe { .. }))
        .collect();
    assert_eq!(count(&plain, Probe::SwitchDone), 0);
    let a = run(&plain).agreement.expect("an agreement");
    assert_eq!(a.fresh.checked, probed.fresh.checked, "the same updates");
    assert_eq!(a.probe_checks.checked, 0, "nothing read, nothing compared");
    assert!(a.fresh.agreed <= probed.fresh.agreed);
    // the search places what the probes showed (a fork's mm_users among them)
    assert!(
        a.trace_gaps.len() > probed.trace_gaps.len(),
        "{} gaps without the probes, {} with",
        a.trace_gaps.len(),
        probed.trace_gaps.len()
    );
}

#[test]
fn stats_counts_each_probe_by_its_name() {
    let v = common::stats(&Path::new(env!("CARGO_MANIFEST_DIR")).join(CAPTURE));
    let t = capture();
    for p in [Probe::SwitchDone, Probe::Fork, Probe::Exit, Probe::MmPut] {
        assert_eq!(
            v["event_counts"][p.name()].as_u64(),
            Some(count(&t, p) as u64),
            "{}",
            p.name()
        );
    }
    let pc = &v["model_agreement"]["probe_checks"];
    assert!(pc["checked"].as_u64().is_some_and(|n| n > 0), "{pc}");
    assert_eq!(pc["matched"], pc["checked"], "{pc}");
}

#[test]
fn the_probe_script_is_a_shell_script() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_cidscope"))
        .arg("probes")
        .output()
        .expect("cidscope runs");
    assert!(out.status.success());
    let script = String::from_utf8(out.stdout).expect("text");
    for p in Probe::ALL {
        assert!(
            script.contains(&format!("cidscope/{} ", p.name())),
            "{}",
            p.name()
        );
    }
    let path = std::env::temp_dir().join(format!("cidscope-probes-{}.sh", std::process::id()));
    std::fs::write(&path, &script).unwrap();
    let sh = std::process::Command::new("sh")
        .arg("-n")
        .arg(&path)
        .status()
        .expect("sh runs");
    std::fs::remove_file(&path).ok();
    assert!(sh.success(), "sh -n rejects the script");
}

/// A task moved after its `exit_mm` has no mm: the probe's fetch through the NULL `t->mm`
/// faults and may leave stale bytes, not 0. A whole fresh probed 6.18.15 24-vCPU mcwork
/// `churn` boot (traces/inference/README.md): 337, preempted after its exit's `cid_mmput`
/// (12.192580), is moved to CPU 4 at 12.194761 reading users 120 and `nr_cpus_allowed` 128;
/// those two values were compared with the mm the model had dropped (354/356).
#[test]
fn a_move_after_exit_mm_reads_no_mm() {
    let m = agreement(
        "inference/k6.18.15-c24-mcwork-churn-migrate-past-exit-mm.ftrace.txt.zst",
        &["--kernel-version", "6.18.15", "--hz", "250"],
    );
    every_check_matches(&m, 352);
    all_fresh_agreed(&m);
}

/// A 7.x fork of a new process (no CLONE_VM): `sched_mm_cid_fork(t)` reads `t->mm`, the
/// child's new mm as `mm_init_cid` left it (users 0, max_cids 0), not the parent's. A cut of a
/// fresh 7.3.4 24-vCPU `forks` boot whose main forks four processes and whose other clones
/// are threads (traces/inference/README.md). Before the model read the new mm there, 8 of the
/// 48 values compared differed (each process fork's users and max_cids: kernel 0, model 1).
#[test]
fn a_new_process_fork_reads_its_childs_new_mm() {
    let m = agreement("inference/k7.3.4-c24-forks-new-mm.ftrace.txt.zst", &[]);
    // (16 of them the process forks' four values each: skipping them would leave 32)
    every_check_matches(&m, 48);
}

/// A CLONE_VM fork whose vCPU stalled between `copy_mm`'s `mmget` and its `cid_fork` probe's
/// timestamp: the search places its step before the probe (an `early_fork`), and the probe's
/// `mm_users` (which has the child) is then held against a model that has the child too. A
/// probed 64-vCPU 6.18.15 `churn` capture of the corpus: 613's fork is placed 4.7 ms before
/// its probe at 81.832074, which read 3 where the check had added the child a second time (4).
#[test]
fn a_fork_placed_before_its_probe_is_not_counted_twice() {
    let m = agreement("kernels/k6.18.15-c64-churn.ftrace.txt.zst", &[]);
    let early = m["inferred_steps"]
        .as_array()
        .expect("inferred_steps")
        .iter()
        .any(|s| s["kind"] == "early_fork" && s["tid"] == 613);
    assert!(
        early,
        "the search places 613's fork early (what this test is about): {m}"
    );
    assert_eq!(mismatches(&m, 100), Vec::<serde_json::Value>::new());
}

/// 7.x: `cid_exit` and `cid_exit_users` both fire at the entry of `sched_mm_cid_exit`, and the
/// release comes after both in its body; a vCPU that stalls between the two handlers' timestamps
/// releases after the other exits that read the users in between. A cut of a fresh 7.3.4
/// 24-vCPU `workers` boot (traces/inference/README.md): 268's two probes are 1.4 ms apart and
/// 266 and 277 exit between them. Released at its `cid_exit`, the model read 17, 16 and 18 where
/// the kernel read 18, 17 and 16 (6 of 160 values).
#[test]
fn an_exit_is_released_after_both_probes_at_its_entry() {
    fully_explained(
        "inference/k7.3.4-c24-workers-exit-read.ftrace.txt.zst",
        &[],
        160,
    );
}

/// An exit_mm's `cid_mmput` stamped before a stall of its CPU reads `mm_users` from after it:
/// the other exits' puts the trace shows later ran first. Its put runs at that CPU's next record
/// (as a `cid_migrate_to` that read ahead does), so those later readings match, and its own
/// reading is held against every count the mm had until that record (`late_reads.rs`). A probed
/// 64-vCPU 6.18.15 `hogs` capture of the corpus: 636's put stamped 83.457802 read 6 users where
/// the model held 27 at the stamp; with the put at its probe the next 21 readings were each one
/// below, and held at the stamp alone its own reading stayed the one mismatch.
#[test]
fn a_put_that_read_after_a_stall_runs_at_its_cpus_next_record() {
    let m = agreement("kernels/k6.18.15-c64-hogs.ftrace.txt.zst", &[]);
    assert_eq!(mismatches(&m, 200), Vec::<serde_json::Value>::new());
    all_fresh_agreed(&m);
}

/// A 6.x `cid_fork` reads `mm_users` after its stamp where its vCPU stalls in between: the
/// count is then that of a later moment, up to its CPU's next record (`late_reads.rs`). A probed
/// 4-vCPU 6.12.117 `churn` capture of the corpus: main's fork stamped 9.176125 read 2 where the
/// model held 3 (main, 219, the child); CPU 3 records nothing more until 9.179006, and 219's
/// exit put (9.178524, which read 3) ran in between.
#[test]
fn a_fork_count_read_after_a_stall_matches_what_the_mm_passed_through() {
    let m = agreement("kernels/k6.12.117-c4-churn.ftrace.txt.zst", &[]);
    assert_eq!(mismatches(&m, 250), Vec::<serde_json::Value>::new());
    all_fresh_agreed(&m);
}

/// A CLONE_VM clone takes its `mm_users` reference in `copy_mm` right before
/// `sched_mm_cid_fork`, whose entry `cid_fork` fires at; a vCPU that stalls in between stamps
/// the probe late, and a reading of the mm on another CPU meanwhile holds the child already
/// (`fork_gets.rs`). A probed 4-vCPU 6.18.15 `churn` capture of the corpus: main's CPU 0 is back
/// from its previous clone at 9.573007 and records `cid_fork` of 253 only at 9.576976 (reading
/// 5: main, 248-250 and the child); 251's and 252's exit puts in between (9.574206, 9.574835)
/// read 7 and 6, one above the model's. The negative is the same capture with main shown back
/// in user space on CPU 0 after those readings (an `rseq_update` at 9.575000): the fork's
/// reference comes after them, and both stay mismatches.
#[test]
fn a_reading_inside_a_forks_window_may_see_its_child() {
    let file = "kernels/k6.18.15-c4-churn.ftrace.txt.zst";
    let m = agreement(file, &[]);
    every_check_matches(&m, 402);
    all_fresh_agreed(&m);
    let raw = std::fs::read(common::traces().join(file)).expect("capture");
    let text = String::from_utf8(zstd::decode_all(&raw[..]).expect("zstd")).expect("utf-8");
    let at = text.find("9.574835: cid_mmput").expect("252's put");
    let end = at + text[at..].find('\n').expect("line end") + 1;
    let back = "         cw-main-150     (    150) [000] .....     9.575000: rseq_update: cpu_id=0 node_id=0 mm_cid=0\n";
    let dir = std::env::temp_dir().join(format!("cidscope-fork-window-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let shown = dir.join("k6.18.15-c4-churn-main-back.ftrace.txt");
    std::fs::write(&shown, format!("{}{back}{}", &text[..end], &text[end..])).expect("write");
    let m = agreement(shown.to_str().expect("utf-8 path"), &[]);
    let _ = std::fs::remove_dir_all(&dir);
    let left: Vec<_> = mismatches(&m, 250)
        .iter()
        .map(|x| (x["probe"].clone(), x["kernel"].clone(), x["model"].clone()))
        .collect();
    let want = |k: u64, m: u64| ("cid_mmput".into(), k.into(), m.into());
    assert_eq!(left, vec![want(7, 6), want(6, 5)]);
}

/// `mmput` decrements `mm_users` right after the entry its probe fires at, but a vCPU that stalls
/// in the probe's handler decrements only when it runs again, at the latest before its CPU's
/// next record; the model runs the put at its probe, and a reading of the mm on another CPU in
/// between may come from before the decrement (`replayer/pending_puts.rs`). A probed 16-vCPU
/// 6.18.15 `workers` capture of the corpus: 243's exit put stamped 16.569607 reads 8, and CPU 9
/// records nothing more until 16.578913; 251's put (16.570039) reads 8 too, and the next five
/// readings are each one above the model's (6 of 1042 values).
#[test]
fn a_reading_inside_a_puts_window_may_see_it_undone() {
    fully_explained("kernels/k6.18.15-c16-workers.ftrace.txt.zst", &[], 1042);
}

/// The futex hash's reference dropped by an RCU callback (`mmput_async`, in softirq) is a put
/// the model runs at its probe too, with the same window: a fresh probed 48-vCPU 6.18.15
/// `churn` boot (traces/inference/README.md) whose async put on CPU 4 at 12.048388 is followed
/// by silence on CPU 4 until 12.050133; 482's exit put at 12.049516 reads 3, one above the
/// model's 2. The async put's own reading (2, the model's 3 before its drop) was read after
/// 482's put, stamped later: an async put that reads fewer users than the model holds read
/// after a stall, its drop waits for its CPU's next record, and its reading is compared with
/// the counts the mm had until then (with the drop not yet done, 482's put matches at its stamp).
#[test]
fn an_async_puts_window_is_a_puts_window() {
    fully_explained(
        "inference/k6.18.15-c48-churn-async-put.ftrace.txt.zst",
        &[],
        626,
    );
}

/// 6.x `exec_mmap` puts the exec'ing task's reference to its old mm (`cid_mmput`) before
/// `exec_binprm` records the exec, once the binary is loaded; a vfork parent, woken by the
/// same `exec_mmap`, forks again in between. A probed 16-vCPU 6.12.117 `exec` capture of the
/// corpus: 245's put at 13.191442 comes 19 ms before its `sched_process_exec`, and main's next
/// fork (13.195707) reads `mm_users` 2. With the reference dropped at the exec record the
/// model held 3 there, and 4 at the fork after (2 mismatches of 45 values); at the put, every
/// value matches, the puts' own readings (taken before their decrement) among them. Past its
/// put, the task's mm is the new one: a fresh 6.18.15 5-vCPU `exec` boot (traces/inference/
/// README.md) whose 162 is moved by a wakeup while its exec loads the binary reads the new mm's
/// one user (the old one had none left); that move reads `last_mm_cid` -1 as the exec
/// balancing's move before it did, and the exec's release runs at the first (at the second,
/// the model had 0 at the first).
#[test]
fn an_exec_drops_its_old_mm_at_exec_mmaps_put() {
    for (file, checked) in [
        ("kernels/k6.12.117-c16-exec.ftrace.txt.zst", 53),
        ("kernels/k6.18.15-c16-exec.ftrace.txt.zst", 44),
        (
            "inference/k6.18.15-c5-exec-balance-twice.ftrace.txt.zst",
            195,
        ),
    ] {
        let m = agreement(file, &[]);
        assert_eq!(
            mismatches(&m, 40),
            Vec::<serde_json::Value>::new(),
            "{file}"
        );
        assert_eq!(m["probe_checks"]["checked"], checked, "{file}: {m}");
        assert_eq!(m["agreed"], m["checked"], "{file}");
        assert_eq!(m["predicted"], m["checked"], "{file}");
    }
}

/// A 7.x `cid_exit_users` stamped before a stall of its CPU reads the users count of after it:
/// another exit's release ran first, and this one's comes at that CPU's next record (as an
/// exit_mm put's that read after a stall). A cut of a fresh 7.3.4 40-vCPU `burst` boot
/// (traces/inference/README.md): 407 reads 8 at 12.604026, 400 reads 9 at 12.605771; with 407
/// released at its probe the model had 8 at 400's. 407's own reading (users 8, `max_cids` 10,
/// where the model held 9 and 11 at its stamp) is held against what the mm had until its CPU's
/// next record (`late_reads.rs`), and matches; held at the stamp alone it stayed two mismatches.
#[test]
fn an_exit_that_read_after_a_stall_is_released_at_its_cpus_next_record() {
    let m = agreement("inference/k7.3.4-c40-burst-late-read.ftrace.txt.zst", &[]);
    assert_eq!(mismatches(&m, 150), Vec::<serde_json::Value>::new());
    assert_eq!(m["probe_checks"]["checked"], 196, "{m}");
    all_fresh_agreed(&m);
}

/// The mirror: a `cid_exit_users` that read more users than the model holds read after forks
/// of the mm. A whole fresh probed 7.3.4 24-vCPU `churn` boot (traces/inference/README.md):
/// 424's exit is stamped at 9.930637 and reads users 5, `max_cids` 6, what 428's fork (9.933788)
/// left, and CPU 3 records again only at 9.939694; the exits read up to 9.939419 still count
/// 424. Released at its stamp (the model had 2 users there), 6 updates disagreed until a search
/// placed the release later, and two values mismatched.
#[test]
fn an_exit_that_read_after_forks_is_released_at_its_cpus_next_record() {
    let m = agreement(
        "inference/k7.3.4-c24-churn-exit-read-after-forks.ftrace.txt.zst",
        &[],
    );
    every_check_matches(&m, 2692);
    assert_eq!(m["predicted"], m["checked"], "{m}");
    assert_eq!(m["inferred_steps"], serde_json::json!([]), "{m}");
}

/// 6.x exec balancing: `bprm_execve` runs `sched_mm_cid_before_execve` (the CID released on
/// the CPU the task ran on) before `sched_exec` has the stopper move it, so the move's
/// `cid_migrate_to` reads `last_mm_cid` -1 while the exec record comes later. A whole fresh
/// 6.18.15 4-vCPU mcwork `churn` capture (traces/inference/README.md): 311's move at 5.843112
/// reads -1; released at its exec record the model had 0 there.
#[test]
fn an_exec_balance_reads_the_release_before_it() {
    let args = [
        "--check-invariants",
        "--kernel-version",
        "6.18.15+deb13-cloud-amd64",
        "--hz",
        "250",
    ];
    let m = agreement(
        "inference/k6.18.15-c4-churn-exec-balance.ftrace.txt.zst",
        &args,
    );
    assert_eq!(mismatches(&m, 250), Vec::<serde_json::Value>::new());
    all_fresh_agreed(&m);
}

/// 7.x: an exit that enters `sched_mm_cid_exit` while a fixup walk holds `mm_cid.mutex` (its
/// mm in TRANSIT) releases only when it gets the mutex, at the latest right before its
/// `sched_process_exit` record. A cut of a fresh 7.3.4 24-vCPU `workers` boot
/// (traces/inference/README.md): 273 and 275 read `mode=1` at 9.595846 and 9.596982; released at
/// their probes, the model had 10 and 9 users where 275 and 280 read 11.
#[test]
fn an_exit_that_waits_for_the_fixups_mutex_releases_at_its_record() {
    let m = agreement(
        "inference/k7.3.4-c24-workers-mutex-wait.ftrace.txt.zst",
        &[],
    );
    assert_eq!(mismatches(&m, 150), Vec::<serde_json::Value>::new());
    assert_eq!(m["predicted"], m["checked"], "{m}");
}

/// A header-less capture of the seed-000 kernel: `--kernel-version` with `--batch` names its
/// CONFIG_RSEQ_CID_SCAN_BATCH, so it replays under resume-batch (without `--batch` the release
/// alone reads as Debian's 6.18, lazy-compact), and resume-batch's probe checks hold
/// lazy-compact's counts against what the probes read (they compared nothing before stop 49).
/// A fresh 32-vCPU mcwork `hogs` boot of the seed kernel built with BTF (traces/inference/
/// README.md).
#[test]
fn a_seed_kernel_named_with_its_batch_runs_resume_batch_and_its_probes_compare() {
    let file = "inference/k6.18.15-cidscope-seed000-c32-hogs-btf.ftrace.txt.zst";
    let named = [
        "--kernel-version",
        "6.18.15-cidscope-seed000",
        "--hz",
        "250",
    ];
    let m = agreement(file, &[&named[..], &["--batch", "8"]].concat());
    assert_eq!(m["policy"], "resume-batch", "{m}");
    assert_eq!(m["scan_batch"], 8, "{m}");
    assert!(
        m["chosen_because"]
            .as_str()
            .is_some_and(|s| s.contains("CONFIG_RSEQ_CID_SCAN_BATCH from --batch")),
        "{m}"
    );
    assert_eq!(mismatches(&m, 100), Vec::<serde_json::Value>::new());
    assert_eq!(m["probe_checks"]["checked"], 127, "{m}");
    all_fresh_agreed(&m);
    let m = agreement(file, &named);
    assert_eq!(m["policy"], "lazy-compact", "{m}");
}

/// A kprobe reads its arguments one after the other (`store_trace_args`), so a vCPU that
/// stalls between two of them reads the first of one moment and the rest of a later one. A
/// fresh probed 49-vCPU 7.3.4 `churn` boot (traces/inference/README.md): 447's
/// `cid_exit_users` on CPU 5 at 12.486736 reads 5 users, as the model holds them, and
/// `max_cids` 2, where the model has 6. CPU 5 records nothing more until 12.489990; in between
/// 448, 450 and 454 leave (their readings: 5/6, 4/5, 3/3), and with 2 users `max_cids` is 2.
/// The exit's release waits for that record as one that read fewer users does, and every
/// value read is compared with those the mm had until then.
#[test]
fn a_reading_torn_by_a_stall_is_compared_up_to_the_next_record() {
    fully_explained(
        "inference/k7.3.4-c49-churn-torn-read.ftrace.txt.zst",
        &[],
        2884,
    );
}

/// The same tear in a 7.x `cid_fork_users`: a fresh probed 24-vCPU 7.3.4 boot of
/// `traces/mcwork.c` `churn` (traces/inference/README.md). 291's fork of 322 on CPU 10 at
/// 10.935611 reads `users=2 max=1` where the model holds 2 and 2; CPU 10 is silent until
/// 10.940477, and 321 leaves in between (10.936645, 2 users before it): `max_cids` 1 is of after
/// that exit. The fork's reading is compared with the mm's values until that record; its step
/// is the search's, at the `cid_fork_done` (10.940843), before which the mm passes through 1.
#[test]
fn a_forks_reading_torn_by_a_stall_is_compared_up_to_the_next_record() {
    fully_explained(
        "inference/k7.3.4-c24-mcwork-churn-torn-fork-read.ftrace.txt.zst",
        &["--kernel-version", "7.3.4+deb13-cloud-amd64", "--hz", "250"],
        1776,
    );
}

/// `sched_exec` moves an exec'ing task with the CPU's stopper (`migration/N`), as
/// `set_cpus_allowed_ptr` moves a task pinned away from its CPU, but pins nothing: a stopper's
/// move of a task whose exec is recorded before it returns to user space is exec balancing
/// (`probes::Plan::exec_moves`). A fresh probed 62-vCPU 6.12.117 `exec` boot
/// (traces/inference/README.md): vfork child 601 is moved 15 → 18 by `migration/15` at
/// 17.119081 and execs at 17.133642; its `cid_migrate_to` reads `allowed=62`, the task's own
/// affinity on 6.12, where the model that pinned it held 1.
#[test]
fn an_exec_balancing_stopper_move_pins_nothing() {
    fully_explained(
        "inference/k6.12.117-c62-exec-balance-no-pin.ftrace.txt.zst",
        &[],
        111,
    );
}

/// `sched_mm_cid_before_execve` ends the exec'ing task's CID (`last_mm_cid` -1) on the CPU it
/// runs on whatever that CPU's slot holds by then. A fresh probed 32-vCPU 6.18.15 `exec` boot
/// (traces/inference/README.md): vfork child 367, preempted on CPU 11 by `migration/11` at
/// 10.444784, is moved to CPU 12; the move's `cid_migrate_to` reads `last=-1`. In the model its
/// CID 1 had been put from CPU 11's slot already (the slot empty, the cidmask too), and the
/// release, which looked for that CID in the slot, left `last_mm_cid` 1.
#[test]
fn exec_balancing_ends_a_cid_the_slot_no_longer_holds() {
    fully_explained(
        "inference/k6.18.15-c32-exec-balance-cleared.ftrace.txt.zst",
        &[],
        128,
    );
}

/// An mm's address is reused once it is freed: a fresh probed 5-vCPU 6.18.15 boot of
/// `traces/mcwork.c` `workers` (traces/inference/README.md). `sleep` (182) exits at 11.915 and
/// its mm (0xff11079cc3524e00, `users=1` at its `cid_mmput`) goes; mcwork (186) forks its
/// threads in an mm at the same address from 11.958550 on. The futex hash's `mmput_async` of
/// that address at 12.029444 reads 7 users: the mm of 186's threads, which the `cid_fork`
/// probes name, not the exited one (the model had compared it with 182's, 0 users).
#[test]
fn an_async_put_of_a_reused_mm_address_reads_the_new_mm() {
    fully_explained(
        "inference/k6.18.15-c5-mcwork-workers-reused-mm.ftrace.txt.zst",
        &[
            "--kernel-version",
            "6.18.15+deb13-cloud-amd64",
            "--hz",
            "250",
        ],
        325,
    );
}

/// A walk's visit runs after its `cid_task_lock` stamp; when the walker's vCPU records nothing
/// for a while after it, the visit ran at the far end of that stall (docs/models.md §5.6, *a
/// visit after a stall*). A fresh probed 24-vCPU 7.3.4 `workers` boot (traces/inference/
/// README.md): the 25th user's fork (286) switches the mm to per-CPU mode and main walks the
/// users on CPU 3, ten `cid_task_lock`s from 18.278116 to 18.278199 (277), then nothing until a
/// tick at 18.287328. 277 kept its per-task CID through the stall, so 282, visited and dropped,
/// took the next free one, 17, at 18.278674; the model, visiting 277 at its probe, gave 282
/// 15 and missed 114 more updates of the walk. The plain replay places it, no search.
#[test]
fn a_visit_whose_walker_stalled_after_its_probe_runs_after_the_stall() {
    let file = "inference/k7.3.4-c24-workers-stalled-visit.ftrace.txt.zst";
    let m = agreement(file, &["--infer-steps", "off", "--check-invariants"]);
    every_check_matches(&m, 196);
    assert_eq!(m["fresh"]["agreed"], 880, "{}", m["fresh"]);
    assert_eq!(m["fresh"]["checked"], 951, "{}", m["fresh"]);
    let stalled = m["trace_gaps"]
        .as_array()
        .expect("trace_gaps")
        .iter()
        .filter(|g| {
            g["reason"]
                .as_str()
                .is_some_and(|r| r.contains("recorded nothing for 1 ms"))
        })
        .map(|g| g["record_ts"].as_u64().unwrap_or(0))
        .collect::<Vec<_>>();
    assert!(stalled.contains(&18_278_199_000), "{stalled:?}");
    // (with inference: the one switch step left, 951 of 951)
    let m = agreement(file, &[]);
    all_fresh_agreed(&m);
}
