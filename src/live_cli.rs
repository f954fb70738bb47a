//! The headless `live` and `attach` commands: run a [`LiveSession`], optionally record it, print
//! a summary. The live TUI consumes the same session API.

use crate::cli::CliError;
use crate::cli::live::{AttachArgs, LiveArgs};
use crate::export::live_record::LiveRecorder;
use crate::export::record::RecordStatus;
use crate::sources::live::{
    LiveCapture, LiveOptions, LiveSession, Scope, WorkloadSpec, possible_cpus,
};
use crate::stats::live::{AttachSummary, LiveSummary, summarize, summarize_attach};
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// The longest `--duration` of live and attach, bare or with a unit.
const MAX_SESSION_SECS: u64 = 86_400;

/// `1`, `0.5` (seconds) or `500ms`, `2s`, `10m`, `1h`: up to 24 hours either way.
pub fn parse_cli_duration(s: &str) -> Result<Duration, CliError> {
    let t = s.trim();
    if let Ok(v) = t.parse::<f64>() {
        if v.is_finite() && v > 0.0 && v <= MAX_SESSION_SECS as f64 {
            return Ok(Duration::from_secs_f64(v));
        }
        return Err(CliError::Usage(format!(
            "--duration {s}: expected seconds above 0 and at most {MAX_SESSION_SECS} (24h)"
        )));
    }
    crate::sources::live::spec::parse_duration_upto(t, MAX_SESSION_SECS)
        .map_err(|e| CliError::Usage(format!("--duration {s}: {e}")))
}

/// A tracefs mount of cidscope's own is said at once, on stderr (before the TUI takes the
/// screen; the TUI lists it among the warnings too).
fn say_what_was_mounted(session: &LiveSession) {
    for w in session.empty_trace().warnings {
        if w.code == crate::sources::live::session::TRACEFS_MOUNTED {
            eprintln!("cidscope: {}", w.message);
        }
    }
}

/// Runs until the session finishes (duration), SIGINT/SIGTERM/SIGHUP arrives (the recording
/// then ends cleanly), or the recording fails (it stops at once).
fn wait(session: &LiveSession, record: Option<&RecordStatus>) {
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGHUP,
    ] {
        let _ = signal_hook::flag::register(sig, stop.clone());
    }
    while !session.is_finished()
        && !stop.load(Ordering::Relaxed)
        && record.is_none_or(|r| r.error().is_none())
    {
        std::thread::sleep(Duration::from_millis(25));
    }
}

/// The session ended: the recording's last events and its end line; its error, if it failed.
fn finish_record(rec: Option<LiveRecorder>, cap: &LiveCapture) -> Result<(), CliError> {
    match rec {
        Some(r) => Ok(r.finish(cap).map(|_| ())?),
        None => Ok(()),
    }
}

/// Writes to stdout; a closed pipe (`cidscope live ... | head`) is not an error.
fn emit(text: &str) -> Result<(), CliError> {
    crate::cli::stdout::write(text.as_bytes()).map_err(CliError::Stdout)
}

fn print_json<T: serde::Serialize>(v: &T) -> Result<(), CliError> {
    let mut out = serde_json::to_string_pretty(v)?;
    out.push('\n');
    emit(&out)
}

/// `cidscope live`: with `ui`, the live TUI (follow, pause, scrub); without, until the
/// duration ends or Ctrl-C, then the summary.
pub fn run_live(a: &LiveArgs, ui: Option<crate::ui::UiOptions>) -> Result<ExitCode, CliError> {
    let ncpus = possible_cpus();
    let workload = match &a.workload {
        Some(s) => WorkloadSpec::parse(s, ncpus)?,
        None => WorkloadSpec::default_for(ncpus),
    };
    if a.record.is_some() && !a.attach {
        return Err(CliError::Usage(
            "--record needs --attach: the workload alone produces no trace events to save".into(),
        ));
    }
    let duration = a.duration.as_deref().map(parse_cli_duration).transpose()?;
    let opts = LiveOptions {
        workload: Some(workload),
        attach: a.attach.then(|| Scope::Process(std::process::id())),
        duration,
        buffer_pages: a.buffer_pages,
        ..LiveOptions::default()
    };
    let attached = opts.attach.is_some();
    let session = LiveSession::start(opts)?;
    say_what_was_mounted(&session);
    // written as it arrives: a kill at any moment leaves what came until the last flush
    let rec = a
        .record
        .as_deref()
        .map(|p| LiveRecorder::start(p, &session))
        .transpose()?;
    let status = rec.as_ref().map(|r| r.status());
    let cap = match ui {
        Some(ui) => crate::ui::run_live(session, ui, std::process::id(), attached, ncpus, status)?,
        None => {
            wait(&session, status.as_deref());
            session.stop()?
        }
    };
    finish_record(rec, &cap)?;
    let s = summarize(&cap);
    if a.json {
        print_json(&s)?;
    } else {
        emit(&render_live(&s, a.record.as_deref()))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `cidscope attach`: with `ui`, the live TUI on the process (or, `--all`, every process, in
/// the picker) until the user quits; without, until the duration ends or Ctrl-C. Then the
/// recording and the summary.
pub fn run_attach(a: &AttachArgs, ui: Option<crate::ui::UiOptions>) -> Result<ExitCode, CliError> {
    let scope = match (a.pid, a.all) {
        (Some(p), false) => {
            if !Path::new(&format!("/proc/{p}")).exists() {
                return Err(CliError::Usage(format!("--pid {p}: no such process")));
            }
            Scope::Process(p)
        }
        (None, true) => Scope::All,
        _ => {
            return Err(CliError::Usage(
                "expected exactly one of --pid P or --all".into(),
            ));
        }
    };
    let duration = a.duration.as_deref().map(parse_cli_duration).transpose()?;
    let opts = LiveOptions {
        attach: Some(scope),
        duration,
        buffer_pages: a.buffer_pages,
        ..LiveOptions::default()
    };
    let session = LiveSession::start(opts)?;
    say_what_was_mounted(&session);
    let rec = a
        .record
        .as_deref()
        .map(|p| LiveRecorder::start(p, &session))
        .transpose()?;
    let status = rec.as_ref().map(|r| r.status());
    let cap = match ui {
        Some(ui) => crate::ui::run::run_attach(session, ui, a.pid, possible_cpus(), status)?,
        None => {
            wait(&session, status.as_deref());
            session.stop()?
        }
    };
    finish_record(rec, &cap)?;
    let s = summarize_attach(&cap, a.record.as_ref().map(|p| p.display().to_string()));
    if a.json {
        print_json(&s)?;
    } else {
        emit(&render_attach(&s))?;
    }
    Ok(ExitCode::SUCCESS)
}

fn opt<T: std::fmt::Display>(v: Option<T>) -> String {
    v.map_or("n/a".into(), |v| v.to_string())
}

pub fn render_live(s: &LiveSummary, record: Option<&Path>) -> String {
    use std::fmt::Write;
    let mut o = String::new();
    let _ = writeln!(
        o,
        "live        process {} for {:.2} s; workload {}",
        s.pid,
        s.duration_s,
        s.workload.as_deref().unwrap_or("none")
    );
    if let Some(r) = &s.rseq_registration {
        let _ = writeln!(o, "rseq areas  registered by {r}");
    }
    let _ = writeln!(
        o,
        "samples     {} CIDs read from rseq areas by {} threads ({} dropped)",
        s.rseq_samples, s.sample_threads, s.samples_dropped
    );
    let _ = writeln!(
        o,
        "CIDs        max {} (bound: {} CPUs; {} samples out of range)",
        opt(s.max_cid),
        s.cpus,
        s.samples_cid_out_of_range
    );
    if s.scope.is_some() {
        let _ = writeln!(
            o,
            "matched     {} of {} samples found in an rseq_update of their thread at or before them ({} in the last one)",
            opt(s.matched),
            s.rseq_samples,
            opt(s.matched_last)
        );
        for u in &s.unmatched_samples {
            let _ = writeln!(o, "  unmatched: {u}");
        }
        let _ = writeln!(o, "duplicates  {}", opt(s.duplicates));
        for d in &s.duplicate_examples {
            let _ = writeln!(o, "  {d}");
        }
        let _ = writeln!(
            o,
            "events      {} kept of {} seen ({:.0}/s), {} lost, {} rseq_update of the process",
            s.events,
            s.events_seen,
            s.event_rate,
            s.lost_events,
            opt(s.rseq_updates)
        );
    }
    let _ = writeln!(
        o,
        "cpu time    {:.2} s user, {:.2} s sys",
        s.cpu_user_s, s.cpu_sys_s
    );
    if let Some(p) = record {
        let _ = writeln!(
            o,
            "recorded    {} (replay: cidscope {0})",
            crate::sources::shown_path(p)
        );
    }
    for w in s
        .warnings
        .iter()
        .filter(|w| !w.starts_with("workload-only:"))
    {
        let _ = writeln!(o, "warning     {w}");
    }
    if let Some(n) = &s.note {
        let _ = writeln!(o, "note        {n}");
    }
    o
}

pub fn render_attach(s: &AttachSummary) -> String {
    use std::fmt::Write;
    let mut o = String::new();
    let _ = writeln!(o, "attach      {} for {:.2} s", s.scope, s.duration_s);
    let _ = writeln!(
        o,
        "events      {} kept of {} seen ({:.0}/s), {} lost, {} dropped at the session cap",
        s.events, s.events_seen, s.event_rate, s.lost_events, s.events_dropped
    );
    let _ = writeln!(
        o,
        "cpu time    {:.2} s user, {:.2} s sys",
        s.cpu_user_s, s.cpu_sys_s
    );
    let _ = writeln!(
        o,
        "rseq        {} updates from {} tasks, max CID {} (bound {})",
        s.rseq_updates,
        s.tasks,
        opt(s.max_cid),
        s.cpus
    );
    for (k, v) in &s.event_counts {
        let _ = writeln!(o, "  {k:<24} {v:>10}");
    }
    if let Some(r) = &s.record {
        let _ = writeln!(o, "recorded    {r} (replay: cidscope {r})");
    }
    for w in &s.warnings {
        let _ = writeln!(o, "warning     {w}");
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_cli_duration("1").unwrap(), Duration::from_secs(1));
        assert_eq!(
            parse_cli_duration("0.5").unwrap(),
            Duration::from_millis(500)
        );
        assert_eq!(
            parse_cli_duration("250ms").unwrap(),
            Duration::from_millis(250)
        );
        assert!(parse_cli_duration("-1").is_err());
        // the units and the bare number share one limit (issue 15: `1h` was refused)
        assert_eq!(parse_cli_duration("1h").unwrap(), Duration::from_secs(3600));
        assert_eq!(
            parse_cli_duration("24h").unwrap(),
            Duration::from_secs(86_400)
        );
        assert_eq!(
            parse_cli_duration("90m").unwrap(),
            Duration::from_secs(5400)
        );
        let e = parse_cli_duration("25h").unwrap_err().to_string();
        assert!(e.contains("at most 24h"), "{e}");
        assert!(
            parse_cli_duration("abc")
                .unwrap_err()
                .to_string()
                .contains("--duration abc")
        );
    }
}
