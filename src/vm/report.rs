//! What `cidscope vm` reports: progress lines on stderr, the stats of the capture with the
//! model agreement under the guest kernel's policy (`--json`: the keys of `stats --json` plus
//! `kernel_version`, `hz` and `vm`), and the headless run that prints them.

use super::config::VmConfig;
use super::error::VmError;
use super::host::{Outcome, VmRun};
use super::protocol::RecordHeader;
use super::status::{Phase, Status};
use crate::model::kernel::{Asked, ChosenModel, KernelFacts, choose};
use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Model flags the user gave (`--policy`, `--kernel`, `--hz`, ...); what they leave open comes
/// from the guest kernel.
pub type ModelOverride = Asked;

/// What the guest said of its kernel: its `uname -r` and, when known, its CONFIG_HZ and
/// CONFIG_RSEQ_CID_SCAN_BATCH.
pub fn guest_facts(h: &RecordHeader) -> KernelFacts {
    KernelFacts {
        release: Some(h.kernel_version.clone()).filter(|r| !r.is_empty()),
        hz: h.hz,
        scan_batch: h.scan_batch,
        family: None,
    }
}

/// The model to replay the capture through: the user's, else the one of the guest's release
/// (`model::kernel::choose`, docs/models.md §10), with the guest's HZ when it is known.
pub fn kernel_model(h: &RecordHeader, m: &ModelOverride) -> Option<ChosenModel> {
    choose(m, &guest_facts(h))
}

/// The stats of the capture under the model of [`kernel_model`]; `file` is the `--record`
/// path (`cfg.record`), or `vm:KERNEL` when the capture is not kept.
pub fn capture_stats(
    o: &Outcome,
    cfg: &VmConfig,
    m: &ModelOverride,
) -> Result<crate::stats::Stats, VmError> {
    let trace = load_capture(o, cfg)?;
    Ok(stats_of(&trace, o, m))
}

/// The stats of a capture loaded by [`load_capture`], under the model of [`kernel_model`].
pub fn stats_of(
    trace: &crate::events::Trace,
    o: &Outcome,
    m: &ModelOverride,
) -> crate::stats::Stats {
    match kernel_model(&o.header, m) {
        Some(c) => crate::stats::policy::compute_chosen(trace, &c, &[], true),
        None => crate::stats::compute(trace),
    }
}

/// The run's capture, named as the user knows it: the `--record` path, or `vm:KERNEL`.
pub fn load_capture(o: &Outcome, cfg: &VmConfig) -> Result<crate::events::Trace, VmError> {
    let mut trace = crate::sources::load(&o.capture, &crate::sources::LoadOptions::default())?;
    trace.path = match &cfg.record {
        Some(p) => p.display().to_string(),
        None => format!("vm:{}", cfg.kernel.display()),
    };
    // messages name the capture as the user knows it, not the temporary file
    let tmp = o.capture.display().to_string();
    for w in &mut trace.warnings {
        w.message = w.message.replace(&tmp, &trace.path);
    }
    Ok(trace)
}

/// The stats JSON (see [`capture_stats`]) with `kernel_version`, `hz`, `hz_source`,
/// `scan_batch`, `vm`.
pub fn stats_json(
    o: &Outcome,
    cfg: &VmConfig,
    m: &ModelOverride,
) -> Result<serde_json::Value, VmError> {
    let s = capture_stats(o, cfg, m)?;
    let mut v = serde_json::to_value(&s)?;
    if let Some(obj) = v.as_object_mut() {
        obj.insert(
            "kernel_version".into(),
            o.header.kernel_version.clone().into(),
        );
        obj.insert("hz".into(), o.header.hz.into());
        obj.insert("hz_source".into(), o.header.hz_source.clone().into());
        // CONFIG_RSEQ_CID_SCAN_BATCH: null on stock kernels
        obj.insert("scan_batch".into(), o.header.scan_batch.into());
        // --attach: the CIDs the workload's threads read from their rseq areas, held against
        // the capture in the guest (null: the workload reads none, or no --attach)
        obj.insert(
            "rseq_samples".into(),
            serde_json::to_value(&o.samples).unwrap_or_default(),
        );
        obj.insert(
            "vm".into(),
            serde_json::json!({
                "accel": o.accel.name(),
                "cpus": o.header.cpus,
                "memory_mb": cfg.memory(),
                "workload": o.header.workload,
                "mode": o.header.mode,
                "duration_s": cfg.duration_ns as f64 / 1e9,
                "boot_s": o.boot.as_secs_f64(),
                "run_s": o.run.as_secs_f64(),
                "wall_s": o.wall.as_secs_f64(),
                "events_received": o.events,
                "lost_in_guest": o.end.lost,
                "status": o.end.status,
                "worker_exit": o.end.worker,
                "initrd_bytes": o.initrd_bytes,
                "guest_libs": o.libs,
                "notes": o.notes,
            }),
        );
    }
    Ok(v)
}

fn secs(d: Duration) -> String {
    format!("{:.1} s", d.as_secs_f64())
}

/// One line saying what the VM is doing (stderr while headless; the TUI's message line).
pub fn progress_line(s: &Status, cfg: &VmConfig) -> String {
    match s.phase {
        Phase::Preparing => "preparing the initramfs".into(),
        Phase::Booting(a) => format!(
            "booting {} on {} vCPUs with {} ({} so far)",
            cfg.kernel.display(),
            cfg.cpus,
            a.name().to_uppercase(),
            secs(s.elapsed)
        ),
        Phase::Running | Phase::Collecting => {
            let h = s.hello.as_ref();
            format!(
                "Linux {} up after {}, {} running: {} events received",
                h.map_or("?", |h| h.kernel.as_str()),
                secs(s.boot.unwrap_or_default()),
                cfg.workload,
                s.events
            )
        }
        Phase::Done => format!("the VM run ended: {} events", s.events),
        Phase::Failed => "the VM run failed".into(),
    }
}

/// The summary printed without `--json` when no terminal shows the TUI.
pub fn render_text(o: &Outcome, cfg: &VmConfig, m: &ModelOverride) -> Result<String, VmError> {
    let s = capture_stats(o, cfg, m)?;
    let mut t = format!(
        "vm          Linux {} on {} vCPUs ({}), HZ {}; {} for {:.2} s; boot {}, run {}, wall {}\n",
        o.header.kernel_version,
        o.header.cpus,
        o.accel.name().to_uppercase(),
        o.header.hz.map_or("unknown".into(), |h| h.to_string()),
        o.header.workload,
        cfg.duration_ns as f64 / 1e9,
        secs(o.boot),
        secs(o.run),
        secs(o.wall)
    );
    if let Some(c) = &o.samples {
        t.push_str(&samples_text(c));
    }
    t.push_str(&crate::stats::text::render_text(&s));
    t.push_str(&crate::stats::policy::render_text(&s));
    Ok(t)
}

/// The `rseq read` line of the text summary (and the unmatched samples under it).
fn samples_text(c: &super::protocol::SampleCheck) -> String {
    let mut t = format!(
        "rseq read   {} CIDs read by {} threads from their rseq areas: {} in an rseq_update of \
         the thread ({} its latest), {} at or above the {} CPUs, {} duplicated among running \
         threads, highest {}{}\n",
        c.samples,
        c.threads,
        c.matched,
        c.matched_last,
        c.cid_out_of_range,
        c.cpus,
        c.duplicates,
        c.max_cid.map_or("-".into(), |m| m.to_string()),
        if c.dropped > 0 {
            format!("; {} more not kept (queues full)", c.dropped)
        } else {
            String::new()
        }
    );
    for u in &c.unmatched {
        t.push_str(&format!("            not in the trace: {u}\n"));
    }
    for d in &c.duplicate_examples {
        t.push_str(&format!("            duplicate: {d}\n"));
    }
    t
}

pub fn say(line: &str) {
    let mut e = std::io::stderr().lock();
    let _ = writeln!(e, "cidscope vm: {line}");
}

/// Runs the VM without the TUI: progress on stderr, Ctrl-C stops the guest (twice: kills it),
/// then `--json` or the text summary on stdout (`cfg.record` is written as the run goes).
pub fn run_headless(
    cfg: VmConfig,
    json: bool,
    m: &ModelOverride,
    emit: &mut dyn FnMut(&str) -> std::io::Result<()>,
) -> Result<ExitCode, VmError> {
    let sigint = Arc::new(AtomicBool::new(false));
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    for sig in [SIGINT, SIGTERM, SIGHUP] {
        let _ = signal_hook::flag::register(sig, Arc::clone(&sigint));
    }
    let run = VmRun::start(cfg.clone())?;
    let _ = watch(&run, &cfg, &sigint);
    let o = run.wait()?;
    finish(&o, &cfg, json, m, emit)
}

/// Prints progress until the run ends; Ctrl-C asks the guest to stop, a second one kills it.
/// Returns how many times Ctrl-C came.
pub fn watch(run: &VmRun, cfg: &VmConfig, sigint: &AtomicBool) -> u32 {
    let mut last_phase = None;
    let mut notes = 0;
    let mut last_count = (Instant::now(), u64::MAX);
    let mut interrupts = 0;
    while !run.is_finished() {
        std::thread::sleep(Duration::from_millis(100));
        if sigint.swap(false, Ordering::Relaxed) {
            interrupts += 1;
            if interrupts == 1 {
                say("stopping the guest's workload (Ctrl-C again kills the VM)");
                run.request_stop();
            } else {
                say("killing the VM");
                run.kill();
            }
        }
        let s = run.status();
        for n in &s.notes[notes..] {
            say(n);
        }
        notes = s.notes.len();
        if last_phase != Some(s.phase) {
            last_phase = Some(s.phase);
            match s.phase {
                Phase::Booting(_) => say(&format!(
                    "initramfs {:.1} MB; {}",
                    s.initrd_bytes as f64 / 1e6,
                    progress_line(&s, cfg)
                )),
                Phase::Running => {
                    let h = s.hello.as_ref();
                    say(&format!(
                        "guest up after {}: Linux {}, {} CPUs, HZ {}; running {} for {:.2} s",
                        secs(s.boot.unwrap_or_default()),
                        h.map_or("?", |h| h.kernel.as_str()),
                        h.map_or(0, |h| h.cpus),
                        s.hz.as_ref().map_or(
                            "unknown (no /proc/config.gz in the guest, no config beside the image: the model infers it from the tick)".to_string(),
                            |(z, src)| format!("{z} (from {src})")
                        ),
                        cfg.workload,
                        cfg.duration_ns as f64 / 1e9
                    ));
                    last_count = (Instant::now(), s.events);
                }
                _ => {}
            }
        }
        if matches!(s.phase, Phase::Running | Phase::Collecting)
            && last_count.0.elapsed() >= Duration::from_secs(1)
            && s.events != last_count.1
        {
            say(&format!("{} events received", s.events));
            last_count = (Instant::now(), s.events);
        }
    }
    interrupts
}

/// After a successful run: where the record is, then the JSON or text summary.
pub fn finish(
    o: &Outcome,
    cfg: &VmConfig,
    json: bool,
    m: &ModelOverride,
    emit: &mut dyn FnMut(&str) -> std::io::Result<()>,
) -> Result<ExitCode, VmError> {
    say(&format!(
        "done in {} (boot {}, workload and capture {}): {} events, {} lost in the guest{}",
        secs(o.wall),
        secs(o.boot),
        secs(o.run),
        o.events,
        o.end.lost,
        if o.end.status == "stopped" {
            " (stopped early)"
        } else {
            ""
        }
    ));
    if o.end.worker != 0 {
        say(&format!(
            "warning: the workload process ended with status {} (its messages are on the guest console)",
            o.end.worker
        ));
    }
    if let Some(p) = &cfg.record {
        // (the run wrote it as the capture arrived)
        say(&format!(
            "recorded {} (replay: cidscope {0})",
            crate::sources::shown_path(p)
        ));
    }
    if json {
        let v = stats_json(o, cfg, m)?;
        let mut t = serde_json::to_string_pretty(&v)?;
        t.push('\n');
        emit(&t).map_err(VmError::Output)?;
    } else {
        emit(&render_text(o, cfg, m)?).map_err(VmError::Output)?;
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(kernel: &str, hz: Option<u32>) -> RecordHeader {
        RecordHeader {
            kernel_version: kernel.into(),
            hz,
            cpus: 16,
            ..RecordHeader::default()
        }
    }

    #[test]
    fn the_guest_kernel_picks_the_model_unless_the_user_did() {
        use crate::model::policies::{HzSource, KernelVersion, PolicyKind};
        let none = ModelOverride::default();
        let c = kernel_model(&header("6.18.15+deb13-cloud-amd64", Some(250)), &none).unwrap();
        assert_eq!(
            (c.policy, c.params.hz, c.params.version, c.params.hz_source),
            (
                PolicyKind::LazyCompact,
                250,
                KernelVersion::V6_14,
                HzSource::Kernel
            )
        );
        let c = kernel_model(&header("6.12.117", None), &none).unwrap();
        assert_eq!(
            (c.policy, c.params.hz, c.params.version),
            (PolicyKind::LazyCompact, 0, KernelVersion::V6_4)
        );
        let c = kernel_model(&header("7.2.13", None), &none).unwrap();
        assert_eq!((c.policy, c.variant), (PolicyKind::OwnerMode, None));
        let user = ModelOverride {
            policy: Some(PolicyKind::ResumeBatch),
            hz: Some(1000),
            ..ModelOverride::default()
        };
        let c = kernel_model(&header("6.18.15", Some(250)), &user).unwrap();
        assert_eq!((c.policy, c.params.hz), (PolicyKind::ResumeBatch, 1000));
        assert!(kernel_model(&header("5.15.0", None), &none).is_none());
    }
}
