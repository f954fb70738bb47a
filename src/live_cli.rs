//! The headless `live` and `attach` commands: run a [`LiveSession`], optionally record it, print
//! a summary. The live TUI consumes the same session API.

use crate::cli::CliError;
use crate::cli::live::{AttachArgs, LiveArgs};
use crate::sources::live::{
    LiveCapture, LiveOptions, LiveSession, Scope, WorkloadSpec, possible_cpus,
};
use crate::stats::live::{AttachSummary, LiveSummary, summarize, summarize_attach};
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// `1`, `0.5` (seconds) or `500ms`, `2s`.
pub fn parse_cli_duration(s: &str) -> Result<Duration, CliError> {
    let t = s.trim();
    if let Ok(v) = t.parse::<f64>() {
        if v.is_finite() && v > 0.0 && v <= 86_400.0 {
            return Ok(Duration::from_secs_f64(v));
        }
        return Err(CliError::Usage(format!(
            "--duration {s}: expected seconds above 0 and at most 86400"
        )));
    }
    crate::sources::live::spec::parse_duration(t)
        .map_err(|e| CliError::Usage(format!("--duration {s}: {e}")))
}

/// Runs until the session finishes (duration) or SIGINT/SIGTERM arrives.
fn wait(session: &LiveSession) {
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        let _ = signal_hook::flag::register(sig, stop.clone());
    }
    while !session.is_finished() && !stop.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(25));
    }
}

fn write_record(path: &Path, cap: &LiveCapture) -> Result<(), CliError> {
    let failed = |what| {
        move |source| CliError::Record {
            path: path.to_path_buf(),
            what,
            source,
        }
    };
    let f = std::fs::File::create(path).map_err(failed("cannot create"))?;
    let mut w = std::io::BufWriter::with_capacity(1 << 20, f);
    crate::export::ftrace::write(&mut w, &cap.trace, Some(&cap.aux))
        .and_then(|()| w.flush())
        .map_err(failed("write failed"))
}

/// Writes to stdout; a closed pipe (`cidscope live ... | head`) is not an error.
fn emit(text: &str) -> Result<(), CliError> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(CliError::Stdout(e)),
        _ => Ok(()),
    }
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
    let cap = match ui {
        Some(ui) => crate::ui::run_live(session, ui, std::process::id(), attached, ncpus)?,
        None => {
            wait(&session);
            session.stop()?
        }
    };
    if let Some(p) = &a.record {
        write_record(p, &cap)?;
    }
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
    let cap = match ui {
        Some(ui) => crate::ui::run::run_attach(session, ui, a.pid, possible_cpus())?,
        None => {
            wait(&session);
            session.stop()?
        }
    };
    if let Some(p) = &a.record {
        write_record(p, &cap)?;
    }
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
        let _ = writeln!(o, "recorded    {} (replay: cidscope {0})", p.display());
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
        assert!(
            parse_cli_duration("abc")
                .unwrap_err()
                .to_string()
                .contains("--duration abc")
        );
    }
}
