//! The validation scenarios of the models specification (docs/models.md) §6 that are driven by scripted schedules
//! (V4–V9) or by the simulator (V11–V13). V1, V2 and V10 are unit tests beside the code
//! (`resume_batch::tests`, `lazy_compact::tests`); V3 and V5 on real captures are in
//! `tests/captures.rs`.

use cidscope::model::policies::owner_mode::{ONCPU, TRANSIT, UNSET};
use cidscope::model::policies::script::Script;
use cidscope::model::policies::{
    DriverEvent, Params, PolicyKind, Regime, Trigger, batches_per_scan, cpus_for_scan_period,
};
use cidscope::sim::{SimConfig, Workload, simulate};

const MS: u64 = 1_000_000;

/// V4: a single unpreempted registered thread under resume-batch (P=128, B=8).
fn v4(hz: u32) {
    let tick = 1_000_000_000 / hz as u64;
    let d = Params {
        hz,
        ..Params::default()
    }
    .scan_delay_jiffies();
    let mut s = Script::new(PolicyKind::ResumeBatch, 128, hz);
    let t0 = 10_000 * MS + tick / 10; // a bit after a tick boundary
    s.at(t0);
    let mm = s.process(100, 5);
    s.run(5, 100);
    let j0 = s.engine.core.jiffies();
    s.lc_mut(mm).unwrap().next_scan = Some(j0 - 1); // the scan is due
    // ticks on CPU 5; after each, the thread returns to user if NR is pending
    // per tick: (jiffies, UPDATEs, batch k of N that scanned)
    type TickLog = (u64, usize, Option<(u32, u32)>);
    let mut per_tick: Vec<TickLog> = Vec::new();
    let first_tick = (t0 / tick + 1) * tick;
    for k in 0..400u64 {
        s.at(first_tick + k * tick);
        s.tick(5);
        let before = (s.updates(), s.engine.core.run.compactions.len());
        if s.engine.core.task(100).is_some_and(|t| t.notify_resume) {
            s.advance(20_000);
            s.ret(100);
        }
        let batch = s.engine.core.run.compactions[before.1..]
            .iter()
            .find(|c| c.scanned)
            .and_then(|c| c.batch);
        per_tick.push((
            s.engine.core.jiffies_at(first_tick + k * tick),
            s.updates() - before.0,
            batch,
        ));
    }
    // no tick action until pick_runtime >= 100 ms
    let first = per_tick.iter().position(|t| t.1 > 0).unwrap();
    let first_ts = first_tick + first as u64 * tick;
    assert!(
        first_ts >= t0 + 100 * MS && first_ts <= t0 + 100 * MS + tick,
        "first UPDATE {} ms after the switch-in",
        (first_ts - t0) as f64 / 1e6
    );
    // 16 consecutive ticks each give one UPDATE and batch 1..16
    for b in 0..16 {
        let (_, n, batch) = per_tick[first + b];
        assert_eq!(
            (n, batch),
            (1, Some((b as u32 + 1, 16))),
            "tick {b} of the cycle"
        );
    }
    // the next tick: rule (B) re-gets the CID, no UPDATE (unchanged)
    assert_eq!(per_tick[first + 16].1, 0);
    assert!(s.rb_task(100).unwrap().last_rule_b.is_some());
    // cycles restart every D+1 jiffies (R5)
    let starts: Vec<u64> = per_tick
        .iter()
        .filter(|t| t.2 == Some((1, 16)))
        .map(|t| t.0)
        .collect();
    assert!(starts.len() >= 2);
    for w in starts.windows(2) {
        assert_eq!(w[1] - w[0], d + 1, "cycle starts {w:?}");
    }
    // a cycle takes 16 ticks
    let cycle = &s.engine.core.run.scans[0];
    assert_eq!(cycle.batches, 16);
    let len = cycle.end_ts.unwrap() - cycle.start_ts;
    assert_eq!(len / tick, 15, "16 ticks");
    assert!(s.violations().is_empty(), "{:?}", s.violations());

    // the same thread without rseq: no UPDATE, no compaction at all (R3)
    let mut s = Script::new(PolicyKind::ResumeBatch, 128, hz);
    s.at(t0);
    s.step(DriverEvent::Existing {
        tid: 100,
        mm: Some(cidscope::model::MmId(0)),
        cpu: 5,
        has_rseq: false,
    });
    s.run(5, 100);
    for k in 0..400u64 {
        s.at(first_tick + k * tick).tick(5).ret(100);
    }
    assert_eq!(s.updates(), 0);
    assert!(s.engine.core.run.compactions.is_empty());
}

#[test]
fn v4_resume_batch_long_runner_hz1000() {
    v4(1000);
}

#[test]
fn v4_resume_batch_long_runner_hz250() {
    // a cycle takes 16 ticks = 64 ms and restarts every 26 jiffies = 104 ms
    v4(250);
}

/// The V5 schedule as measured: the exec lands on CPU 1, four workers alternate on both
/// CPUs, with migrations. Returns the script after the run and the workers' (cpu, cid) of
/// every UPDATE after the exec.
fn v5_schedule(kind: PolicyKind) -> (Script, Vec<(u16, i32)>) {
    let mut s = Script::new(kind, 2, 250);
    s.at(1_000 * MS);
    s.process(50, 0); // the shell
    s.run(0, 50);
    let _mm = s.fork_exec(50, 100, 1); // exec-balance to CPU 1
    s.switch(0, 0); // the shell waits
    s.register(100);
    let first_update = s.updates();
    // main creates the workers on CPU 1; they are placed on CPU 0, not run yet
    for w in 101..=104 {
        s.advance(20_000).thread(100, w, 0);
    }
    s.advance(20_000).switch(1, 0); // main joins
    // workers: busy 300 µs, sleep 200 µs, on both CPUs
    let mut last_cpu = [0u16; 4];
    let mut first = [true; 4];
    for r in 0..400usize {
        for cpu in 0..2u16 {
            let w = (r * 2 + cpu as usize + r / 3) % 4;
            let tid = 101 + w as u32;
            if last_cpu[w] != cpu {
                s.migrate(tid, last_cpu[w], cpu);
                last_cpu[w] = cpu;
            }
            s.switch(cpu, tid);
            if first[w] {
                s.register(tid);
                first[w] = false;
            } else {
                s.ret(tid);
            }
        }
        s.advance(300_000);
        s.switch(0, 0).switch(1, 0);
        s.advance(200_000);
    }
    let ups = s.engine.core.run.updates[first_update..]
        .iter()
        .map(|u| (u.cpu, u.cid))
        .collect();
    (s, ups)
}

/// V5 (lazy-compact) and V6 (owner-mode) on the same schedule: CPU 0 ↔ 1, CPU 1 ↔ 0.
#[test]
fn v5_v6_cids_follow_cpus() {
    for kind in [
        PolicyKind::LazyCompact,
        PolicyKind::ResumeBatch,
        PolicyKind::OwnerMode,
    ] {
        let (s, ups) = v5_schedule(kind);
        assert!(ups.len() > 100, "{kind}: {} updates", ups.len());
        for (cpu, cid) in &ups {
            let want = if *cpu == 0 { 1 } else { 0 };
            assert_eq!(*cid, want, "{kind}: CPU {cpu} gave CID {cid}");
        }
        assert!(s.violations().is_empty(), "{kind}: {:?}", s.violations());
    }
}

/// V6 details: per-CPU at the 2nd worker fork with pcpu_thrs = thrs(2) = 1, never back.
#[test]
fn v6_owner_mode_transitions() {
    let mut s = Script::new(PolicyKind::OwnerMode, 2, 250);
    s.process(50, 0);
    s.run(0, 50);
    let mm = s.fork_exec(50, 100, 1);
    s.switch(0, 0).register(100);
    let om = s.om(mm).unwrap();
    assert_eq!((om.users, om.mode, om.max_cids), (1, 0, 1));
    assert_eq!(s.om_task(100).unwrap().cid, 0);
    s.thread(100, 101, 0); // worker A: users 2, gets 1
    let om = s.om(mm).unwrap();
    assert_eq!((om.users, om.mode, om.max_cids), (2, 0, 2));
    assert_eq!(s.om_task(101).unwrap().cid, 1);
    s.thread(100, 102, 0); // users 3 > max_cids 2: per-CPU
    let om = s.om(mm).unwrap();
    assert_eq!((om.users, om.mode, om.pcpu_thrs), (3, ONCPU, 1));
    assert_eq!(s.om_task(101).unwrap().cid, UNSET, "A had not run: loses 1");
    assert_eq!(s.om_task(100).unwrap().cid, TRANSIT, "main: 0|TRANSIT");
    s.switch(1, 0); // main's schedout: CPU 1 owns 0
    assert_eq!(s.om(mm).unwrap().pcpu_cid[1], ONCPU);
    s.run(0, 101); // first worker on CPU 0: slot is the zero-filled 0, allocates 1|ONCPU
    assert_eq!(s.om_task(101).unwrap().cid, 1 | ONCPU);
    for w in 103..=104 {
        s.thread(100, w, 0);
    }
    // never back to per-task: thrs 1, users < 1 impossible
    for w in [102, 103, 104] {
        s.switch(1, w).exit(w).switch(1, 0);
        assert_eq!(s.om(mm).unwrap().mode, ONCPU);
    }
    assert!(s.violations().is_empty(), "{:?}", s.violations());
}

/// V7: owner-mode switch points, table-driven (UPDATE_MAX).
#[test]
fn v7_owner_mode_thresholds() {
    // (P, allowed CPUs (None = all), per-CPU at users, back at users (None = never))
    let table: [(u32, Option<u32>, u32, Option<u32>); 7] = [
        (2, None, 3, None),
        (4, None, 5, Some(1)),
        (8, None, 9, Some(3)),
        (128, None, 129, Some(63)),
        (128, Some(1), 2, None),
        (128, Some(4), 6, Some(2)),
        (128, Some(8), 11, Some(5)),
    ];
    for (p, allowed, up, back) in table {
        let mut s = Script::new(PolicyKind::OwnerMode, p, 1000);
        s.process(50, 0);
        s.run(0, 50);
        // fork, restrict affinity, exec: the new mm starts with the restricted mask
        let forked = s.new_mm_id();
        s.step(DriverEvent::Fork {
            parent: 50,
            child: 100,
            shares_mm: false,
            new_mm: Some(forked),
            thread: false,
        });
        if let Some(a) = allowed {
            let cpus: Vec<u32> = (0..a).collect();
            s.affinity(100, &cpus);
        }
        s.step(DriverEvent::WakeupNew { tid: 100, cpu: 0 });
        s.switch(0, 100);
        let mm = s.new_mm_id();
        s.step(DriverEvent::Exec {
            tid: 100,
            cpu: 0,
            new_mm: mm,
        });
        assert_eq!(s.om(mm).unwrap().max_cids, 1, "one user");
        let mut users = 1u32;
        let mut switched_at = None;
        let mut tid = 100u32;
        while users < up + 2 {
            tid += 1;
            s.thread(100, tid, 0);
            users += 1;
            let om = s.om(mm).unwrap();
            assert_eq!(om.users, users);
            if om.mode == ONCPU && switched_at.is_none() {
                switched_at = Some(users);
            }
        }
        assert_eq!(switched_at, Some(up), "P={p} allowed={allowed:?}");
        // exits, newest first, each in its own context on CPU 1 (or 0 when P = 1)
        let cpu = if p > 1 { 1 } else { 0 };
        let mut back_at = None;
        while users > 1 {
            s.switch(cpu, tid).exit(tid).switch(cpu, 0);
            tid -= 1;
            users -= 1;
            let om = s.om(mm).unwrap();
            if om.mode == 0 && back_at.is_none() {
                back_at = Some(users);
            }
        }
        assert_eq!(back_at, back, "P={p} allowed={allowed:?}");
        assert!(s.violations().is_empty(), "P={p}: {:?}", s.violations());
    }
    // the max_cids of the restricted cases
    for (allowed, max) in [(4u32, 5u32), (8, 10), (1, 1)] {
        let opt = allowed;
        assert_eq!(
            cidscope::model::policies::owner_mode::max_cids_for(opt, 128),
            max
        );
    }
}

/// V8: owner-mode per-task stability across migrations; lazy-compact CIDs follow slots.
#[test]
fn v8_per_task_stability() {
    let run = |kind: PolicyKind| {
        let mut s = Script::new(kind, 4, 1000);
        s.process(50, 0);
        s.run(0, 50);
        let mm = s.fork_exec(50, 100, 0);
        s.register(100);
        s.thread(100, 101, 1);
        if kind == PolicyKind::OwnerMode {
            assert_eq!(s.om(mm).unwrap().max_cids, 2);
        }
        s.thread(100, 102, 2);
        if kind == PolicyKind::OwnerMode {
            assert_eq!(s.om(mm).unwrap().max_cids, 3);
        }
        s.switch(0, 0);
        s.run(1, 101).run(2, 102);
        s.step(DriverEvent::RseqReg { tid: 101 }).ret(101);
        s.step(DriverEvent::RseqReg { tid: 102 }).ret(102);
        let mut cids = Vec::new();
        let mut cpu_of = [0u16, 1, 2];
        let mut changed_updates = 0usize;
        let mut same_cpu_updates = 0usize;
        for r in 0..60usize {
            for (i, tid) in [100u32, 101, 102].into_iter().enumerate() {
                let from = cpu_of[i];
                s.advance(100_000);
                s.switch(from, 0);
                let to = ((r * 7 + i * 3) % 5 % 4) as u16;
                if to != from {
                    s.migrate(tid, from, to);
                    cpu_of[i] = to;
                }
                let before = s.updates();
                s.run(cpu_of[i], tid);
                let emitted = s.updates() > before;
                if to != from {
                    changed_updates += emitted as usize;
                } else {
                    same_cpu_updates += emitted as usize;
                }
                cids.push((tid, s.cid(tid)));
                s.switch(cpu_of[i], 0);
            }
        }
        (s, cids, changed_updates, same_cpu_updates)
    };
    let (s, cids, changed, same) = run(PolicyKind::OwnerMode);
    for (tid, cid) in &cids {
        assert_eq!(*cid, Some((*tid - 100) as i32), "owner-mode: task {tid}");
    }
    assert!(changed > 0);
    assert_eq!(same, 0, "rseq-fast: no UPDATE without a CPU change");
    assert!(s.violations().is_empty(), "{:?}", s.violations());
    let (s, cids, changed, same) = run(PolicyKind::LazyCompact);
    let moved = cids
        .iter()
        .any(|(tid, cid)| *cid != Some((*tid - 100) as i32));
    assert!(moved, "lazy-compact: CIDs follow the CPU slots");
    assert_eq!(
        changed + same,
        cids.len(),
        "rseq-legacy: an UPDATE after every switch-in"
    );
    assert!(s.violations().is_empty(), "{:?}", s.violations());
}

/// V9: owner-mode convergence after users shrink, and a mode round trip.
#[test]
fn v9_owner_mode_convergence() {
    let mut s = Script::new(PolicyKind::OwnerMode, 8, 1000);
    s.process(50, 0);
    s.run(0, 50);
    let mm = s.fork_exec(50, 100, 0);
    s.switch(0, 0).register(100);
    for t in 101..108 {
        s.thread(100, t, 0);
    }
    let om = s.om(mm).unwrap();
    assert_eq!((om.users, om.mode, om.max_cids), (8, 0, 8));
    for t in 100..108u32 {
        assert_eq!(s.om_task(t).unwrap().cid, t - 100);
    }
    // five exit, leaving CIDs {0, 5, 7}
    for t in [101u32, 102, 103, 104, 106] {
        s.switch(3, t).exit(t).switch(3, 0);
    }
    let om = s.om(mm).unwrap();
    assert_eq!((om.users, om.max_cids), (3, 3));
    assert_eq!(om.cidmask.iter().collect::<Vec<_>>(), vec![0, 5, 7]);
    // next schedin of the CID-5 task → 1, then the CID-7 task → 2 (fast path: flagless
    // task CID and flagless slot)
    s.run(4, 105);
    assert_eq!(s.cid(105), Some(1));
    s.run(5, 107);
    assert_eq!(s.cid(107), Some(2));
    assert!(s.violations().is_empty(), "{:?}", s.violations());

    // mode round trip: 9th user → per-CPU with pcpu_thrs 4; per-task again at 3 users
    let mut s = Script::new(PolicyKind::OwnerMode, 8, 1000);
    s.process(50, 0);
    s.run(0, 50);
    let mm = s.fork_exec(50, 100, 0);
    s.switch(0, 0).register(100);
    for t in 101..109 {
        s.thread(100, t, 0);
    }
    let om = s.om(mm).unwrap();
    assert_eq!((om.users, om.mode, om.pcpu_thrs), (9, ONCPU, 4));
    for (t, users) in (101..=106u32).rev().zip([8u32, 7, 6, 5, 4, 3]) {
        s.switch(2, t).exit(t).switch(2, 0);
        let om = s.om(mm).unwrap();
        assert_eq!(om.users, users);
        assert_eq!(om.mode == 0, users == 3, "users {users}");
    }
    assert!(s.violations().is_empty(), "{:?}", s.violations());
}

/// V11: nohz_full, tick stopped: no compaction and no CID refresh for the lone spinner
/// (lazy-compact, resume-batch); owner-mode is unaffected (nothing periodic).
#[test]
fn v11_nohz_full_stops_compaction() {
    for kind in [PolicyKind::LazyCompact, PolicyKind::ResumeBatch] {
        let mut cfg = SimConfig::new(kind, 4, Workload::Spinner);
        cfg.duration_ns = 600 * MS;
        let with_tick = simulate(&cfg);
        assert!(
            with_tick.summary.compactions.tick > 0,
            "{kind}: the spinner's ticks drive compaction"
        );
        cfg.nohz_full = cidscope::model::policies::CpuSet::parse_list("3", 4).unwrap();
        let out = simulate(&cfg);
        let spinner_updates: Vec<_> = out.run.updates.iter().filter(|u| u.cpu == 3).collect();
        assert_eq!(spinner_updates.len(), 1, "{kind}: only the first UPDATE");
        assert_eq!(out.summary.compactions.tick, 0, "{kind}");
        assert!(
            out.trace
                .events
                .iter()
                .any(|e| matches!(e.kind, cidscope::events::EventKind::TickStop { .. }))
        );
    }
    let mut cfg = SimConfig::new(PolicyKind::OwnerMode, 4, Workload::Spinner);
    cfg.duration_ns = 600 * MS;
    let a = simulate(&cfg);
    cfg.nohz_full = cidscope::model::policies::CpuSet::parse_list("3", 4).unwrap();
    let b = simulate(&cfg);
    assert_eq!(a.summary.rseq_updates, b.summary.rseq_updates);
    assert_eq!(
        a.summary.compaction_attempts.tick + a.summary.compaction_attempts.resume,
        0
    );
}

/// V12: resume-batch latency envelopes of the seed on 128 CPUs with B = 8, and the
/// 853-CPU projection computed from the worst hackbench rate.
#[test]
fn v12_latency_envelopes() {
    // the projection: 15 ms per 16 batches of 8 → 100 ms at ≈ 853 CPUs
    let per_batch = 15.0 / 16.0;
    let cpus = cpus_for_scan_period(per_batch, 8, 100.0);
    assert_eq!(cpus.floor() as u32, 853);
    assert!((100.0f64 / per_batch - 106.67).abs() < 0.01);
    // cyclictest rate (<= 0.125 ms per batch) → more than 6,000 CPUs
    assert!(cpus_for_scan_period(2.0 / 16.0, 8, 100.0) >= 6_400.0 - 1e-9);
    assert_eq!(batches_per_scan(128, 8), 16);

    let mut cfg = SimConfig::new(PolicyKind::ResumeBatch, 128, Workload::Cyclictest);
    cfg.params.batch = 8;
    let s = simulate(&cfg).summary;
    assert_eq!(s.batches_per_complete_scan, Some(16));
    assert!(s.complete_scans >= 5);
    let scan = s.complete_scan_ms.unwrap();
    assert!(
        scan.min >= 1.5 && scan.max <= 2.0,
        "cyclictest complete scan {scan:?}"
    );
    let delay = s.batch_delay_us.unwrap();
    assert!(
        delay.min >= 0.0 && delay.max <= 400.0,
        "cyclictest delay {delay:?}"
    );
    let cost = s.call_cost_us.unwrap();
    assert!(
        cost.min >= 1.0 && cost.max <= 11.0,
        "B=8 call cost {cost:?}"
    );
    assert!(s.cpus_for_100ms_scan.unwrap() > 6_000.0);

    let mut cfg = SimConfig::new(PolicyKind::ResumeBatch, 128, Workload::Hackbench);
    cfg.params.batch = 8;
    let s = simulate(&cfg).summary;
    assert_eq!(s.batches_per_complete_scan, Some(16));
    let scan = s.complete_scan_ms.unwrap();
    assert!(
        scan.min >= 1.5 && scan.max <= 15.0,
        "hackbench complete scan {scan:?}"
    );
    let delay = s.batch_delay_us.unwrap();
    assert!(
        delay.min >= 5.0 && delay.max <= 3_000.0,
        "hackbench delay {delay:?}"
    );
    // the worst measured rate gives a projection in the seed's ballpark (> 800 CPUs)
    assert!(
        s.cpus_for_100ms_scan.unwrap() > 800.0,
        "{:?}",
        s.cpus_for_100ms_scan
    );
    assert_eq!(s.alarms, 0);
}

/// V13: rseq-fast emits far fewer UPDATEs than rseq-legacy on the same workload.
#[test]
fn v13_emission_ratio() {
    let mut cfg = SimConfig::new(PolicyKind::OwnerMode, 128, Workload::Hackbench);
    cfg.duration_ns = 500 * MS;
    cfg.params.regime = Some(Regime::Legacy);
    let legacy = simulate(&cfg).summary.rseq_updates;
    cfg.params.regime = Some(Regime::Fast);
    let fast = simulate(&cfg).summary.rseq_updates;
    let drop = 1.0 - fast as f64 / legacy as f64;
    assert!(legacy > 10_000, "{legacy}");
    assert!(
        drop >= 0.90,
        "legacy {legacy} → fast {fast}: drop {:.1} %",
        drop * 100.0
    );
}

/// Compaction triggers of the simulator are attributed like the replay does.
#[test]
fn resume_batch_triggers_in_sim() {
    let mut cfg = SimConfig::new(PolicyKind::ResumeBatch, 8, Workload::Spinner);
    cfg.duration_ns = 400 * MS;
    let out = simulate(&cfg);
    assert!(
        out.run
            .compactions
            .iter()
            .any(|c| c.trigger == Trigger::Tick && c.scanned)
    );
    assert_eq!(out.summary.batches_per_complete_scan, Some(1));
}
