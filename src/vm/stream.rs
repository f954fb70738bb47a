//! The guest's stream after its hello: ftrace lines to the capture file (and the TUI), control
//! lines to the run's status, until the guest's `end`; then the capture file is composed.

use super::boot::{Booted, failure, kill_child};
use super::cmdline::CaptureMode;
use super::config::VmConfig;
use super::protocol::{ACK, Control, End, RecordHeader, STOP};
use super::qemu::Plan;
use super::status::{MAX_KEPT_TEXT, Phase, Shared};
use std::io::{Read, Write};
use std::path::Path;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// The tracefs column header, as `cat trace` prints it with record-tgid.
const FTRACE_HEADER: &str = "\
#                                          _-----=> irqs-off/BH-disabled
#                                         / _----=> need-resched
#                                        | / _---=> hardirq/softirq
#                                        || / _--=> preempt-depth
#                                        ||| / _-=> migrate-disable
#                                        |||| /     delay
#           TASK-PID       TGID    CPU#  |||||  TIMESTAMP  FUNCTION
#              | |           |       |   |||||     |         |
";

/// function_graph's column legend (funcgraph-abstime, funcgraph-proc).
const GRAPH_LEGEND: &str = "\
#     TIME        CPU  TASK/PID         DURATION                  FUNCTION CALLS
#      |          |    |    |            |   |                     |   |   |   |
";

/// function_graph's header in a recording written as it arrives (no counts: not known yet).
const GRAPH_HEADER: &str = "\
# tracer: function_graph
#
#     TIME        CPU  TASK/PID         DURATION                  FUNCTION CALLS
#      |          |    |    |            |   |                     |   |   |   |
";

/// Writes the capture: the `# cidscope-vm:` facts, then (tracefs) the header `cat trace`
/// prints, with `#P:` the guest's possible CPUs, then the streamed lines.
pub fn compose(
    out: &Path,
    header: &RecordHeader,
    mode: CaptureMode,
    graph: bool,
    events: u64,
    body: &Path,
) -> Result<(), String> {
    let err = |e: std::io::Error| format!("{}: {e}", out.display());
    let f = std::fs::File::create(out).map_err(err)?;
    let mut w = std::io::BufWriter::with_capacity(1 << 20, f);
    w.write_all(header.line().as_bytes()).map_err(err)?;
    if mode == CaptureMode::Tracefs && graph {
        // function_graph's own header (funcgraph-abstime, funcgraph-proc)
        write!(
            w,
            "# tracer: function_graph\n#\n# entries-in-buffer/entries-written: {events}/{events}   #P:{}\n#\n{GRAPH_LEGEND}",
            header.cpus
        )
        .map_err(err)?;
    } else if mode == CaptureMode::Tracefs {
        write!(
            w,
            "# tracer: nop\n#\n# entries-in-buffer/entries-written: {events}/{events}   #P:{}\n#\n{FTRACE_HEADER}",
            header.cpus
        )
        .map_err(err)?;
    }
    let mut b = std::fs::File::open(body).map_err(|e| format!("{}: {e}", body.display()))?;
    std::io::copy(&mut b, &mut w).map_err(err)?;
    w.flush().map_err(err)
}

/// Where the streamed lines go: a spool file the capture is composed from at the end, or
/// (`--record`) the recording itself, written in flushed chunks as they arrive.
pub(super) enum Out {
    Spool(std::io::BufWriter<std::fs::File>),
    Record(crate::export::record::RecordFile),
}

impl Out {
    /// The spool at `body`.
    pub(super) fn spool(body: &Path) -> Result<Out, String> {
        let file = std::fs::File::create(body).map_err(|e| format!("{}: {e}", body.display()))?;
        Ok(Out::Spool(std::io::BufWriter::with_capacity(1 << 20, file)))
    }

    /// The recording at `path`: the `# cidscope-vm:` facts, the header its mode prints (its
    /// entries count filled in at the end), the chunked line.
    pub(super) fn record(
        path: &Path,
        header: &RecordHeader,
        mode: CaptureMode,
        graph: bool,
    ) -> Result<Out, String> {
        use crate::export::ftrace::{Header, Legend};
        let mut preamble = header.line();
        let tracefs = Header {
            entries: 0,
            ncpus: header.cpus,
            note: None,
            legend: Legend::Tracefs,
        };
        let h = match mode {
            CaptureMode::Tracefs if graph => {
                // function_graph's own header (its counts are not known before the end)
                preamble.push_str(GRAPH_HEADER);
                None
            }
            CaptureMode::Tracefs => Some(&tracefs),
            _ => None,
        };
        crate::export::record::RecordFile::create(path, &preamble, h)
            .map(Out::Record)
            .map_err(|e| format!("--record {}: cannot create: {e}", path.display()))
    }

    fn line(&mut self, line: &[u8], event: bool) -> std::io::Result<()> {
        match self {
            Out::Spool(w) => {
                w.write_all(line)?;
                w.write_all(b"\n")
            }
            Out::Record(r) => {
                let b = r.buffer();
                b.extend_from_slice(line);
                b.push(b'\n');
                r.add_events(u64::from(event));
                Ok(())
            }
        }
    }

    /// After each read: a recording writes its chunk once a second has passed.
    fn tick(&mut self) -> std::io::Result<()> {
        match self {
            Out::Spool(_) => Ok(()),
            Out::Record(r) => r.maybe_flush(),
        }
    }

    /// The stream ended: the spool flushed, the recording finished (last chunk, end line,
    /// counts).
    pub(super) fn finish(self) -> std::io::Result<()> {
        match self {
            Out::Spool(mut w) => w.flush(),
            Out::Record(r) => r.finish().map(|_| ()),
        }
    }
}

pub(super) struct Streamed {
    pub(super) end: End,
    pub(super) events: u64,
    pub(super) samples: Option<super::protocol::SampleCheck>,
}

/// Reads the guest's stream to its `end` (or the guest's death), writing the ftrace lines to
/// `body`; answers `end` with `ack` and waits for QEMU to exit.
pub(super) fn stream(
    cfg: &VmConfig,
    sh: &Shared,
    b: Booted,
    out: Out,
    out_path: &Path,
    plan: &Plan,
) -> Result<Streamed, String> {
    let Booted {
        mut child,
        stream,
        rest,
        hello: _,
        err,
    } = b;
    let mut spool = out;
    let mut buf = rest;
    let mut rd = [0u8; 1 << 16];
    let mut s = &stream;
    let mut events = 0u64;
    let mut bytes = 0u64;
    let mut end: Option<End> = None;
    let mut samples = None;
    let mut guest_error: Option<String> = None;
    let mut sent_stop = false;
    let mut stop_at: Option<Instant> = None;
    let mut last_data = Instant::now();
    let mut kept: Vec<u8> = Vec::new();
    let started = Instant::now();
    // the workload's length, plus the time a slow guest takes to drain and send
    let deadline = started
        + Duration::from_nanos(cfg.duration_ns)
        + Duration::from_secs(120 + 2 * cfg.cpus as u64);
    let stall = Duration::from_secs(120);
    let io = |e: std::io::Error| format!("{}: {e}", out_path.display());
    'read: loop {
        // whole lines first
        let mut start = 0;
        while let Some(p) = memchr::memchr(b'\n', &buf[start..]) {
            let mut line = &buf[start..start + p];
            start += p + 1;
            if line.last() == Some(&b'\r') {
                line = &line[..line.len() - 1];
            }
            if line.starts_with(super::protocol::PREFIX.as_bytes()) {
                let l = String::from_utf8_lossy(line);
                match Control::parse(&l) {
                    Some(Ok(Control::End(e))) => {
                        end = Some(e);
                        break 'read;
                    }
                    Some(Ok(Control::Warn(w))) => sh.note(format!("guest: {w}")),
                    Some(Ok(Control::Error(e))) => {
                        // the guest's last word: it powers off once answered
                        guest_error = Some(e);
                        break 'read;
                    }
                    Some(Ok(Control::Progress { events: n })) => sh.lock().events = n,
                    Some(Ok(Control::Samples(c))) => samples = Some(c),
                    Some(Ok(Control::Running { .. })) => sh.phase(Phase::Running),
                    Some(Ok(Control::Hello(_))) => {}
                    Some(Err(e)) => sh.note(e),
                    None => {}
                }
                continue;
            }
            let event = !line.starts_with(b"#") && !line.starts_with(b"CPU:") && !line.is_empty();
            spool.line(line, event).map_err(io)?;
            events += u64::from(event);
            if cfg.keep_text {
                kept.extend_from_slice(line);
                kept.push(b'\n');
            }
        }
        buf.drain(..start);
        spool.tick().map_err(io)?;
        if !kept.is_empty() {
            // one lock per read, not per line
            let mut t = sh.text.lock().unwrap_or_else(|p| p.into_inner());
            if t.len() + kept.len() < MAX_KEPT_TEXT {
                t.extend_from_slice(&kept);
            } else {
                sh.text_dropped
                    .fetch_add(kept.len() as u64, Ordering::Relaxed);
            }
            kept.clear();
        }
        {
            let mut st = sh.lock();
            if cfg.attach && st.phase == Phase::Running && events > 0 {
                st.phase = Phase::Collecting;
            }
            if !cfg.attach || events > 0 {
                st.events = st.events.max(events);
            }
            st.bytes = bytes;
        }
        if sh.kill.load(Ordering::Relaxed) {
            kill_child(&mut child);
            return Err("stopped: QEMU was killed".into());
        }
        if sh.stop.load(Ordering::Relaxed) && !sent_stop {
            sent_stop = true;
            stop_at = Some(Instant::now());
            let _ = s.write_all(format!("{STOP}\n").as_bytes());
        }
        let timed_out = Instant::now() > deadline || last_data.elapsed() > stall;
        if timed_out && stop_at.is_none() {
            sh.note(format!(
                "the guest ran past its time (workload {} s, nothing new for {} s): asking it to stop",
                cfg.duration_ns / 1_000_000_000,
                last_data.elapsed().as_secs()
            ));
            let _ = s.write_all(format!("{STOP}\n").as_bytes());
            stop_at = Some(Instant::now());
        }
        if stop_at.is_some_and(|t| t.elapsed() > Duration::from_secs(20)) {
            kill_child(&mut child);
            return Err(failure(
                "the guest did not end its capture in time after being asked to stop; QEMU was killed".into(),
                &plan.console,
                &err,
            ));
        }
        match s.read(&mut rd) {
            Ok(0) => break,
            Ok(n) => {
                bytes += n as u64;
                last_data = Instant::now();
                buf.extend_from_slice(&rd[..n]);
            }
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                if let Ok(Some(_)) = child.try_wait() {
                    break;
                }
            }
            Err(e) => {
                kill_child(&mut child);
                return Err(format!("reading the guest's stream: {e}"));
            }
        }
    }
    spool.finish().map_err(io)?;
    if !kept.is_empty() {
        // the lines before `end`, read with it
        sh.text
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .extend_from_slice(&kept);
    }
    if end.is_some() || guest_error.is_some() {
        sh.phase(Phase::Collecting);
        let _ = s.write_all(format!("{ACK}\n").as_bytes());
    }
    // the guest powers off after the ack; QEMU then exits
    let t = Instant::now();
    while t.elapsed() < Duration::from_secs(15) {
        if let Ok(Some(_)) = child.try_wait() {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    if let Ok(None) = child.try_wait() {
        sh.note("the guest did not power off after its capture; QEMU was killed".into());
        kill_child(&mut child);
    }
    match (end, guest_error) {
        (Some(end), None) => Ok(Streamed {
            end,
            events,
            samples,
        }),
        (_, Some(e)) => Err(failure(
            format!("cidscope in the guest failed: {e}"),
            &plan.console,
            &err,
        )),
        (None, None) => Err(failure(
            format!("the guest ended before its capture did ({events} events received)"),
            &plan.console,
            &err,
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `--graph-function` capture gets function_graph's header, and the ftrace reader takes
    /// its `/* event */` comments as the events (the calls themselves are not events).
    #[test]
    fn a_graph_capture_is_read_back_with_its_events() {
        let dir = std::env::temp_dir().join(format!("cidscope-compose-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let body = dir.join("body.txt");
        std::fs::write(
            &body,
            " 16.819800 |   13)  cw-main-150   |               |  /* rseq_update: cpu_id=13 node_id=0 mm_cid=2 */\n \
             16.819829 |   13)  cw-main-150   |   9.837 us    |  task_mm_cid_work();\n",
        )
        .unwrap();
        let header = RecordHeader {
            kernel_version: "6.18.15-cidscope-seed000".into(),
            hz: Some(250),
            scan_batch: Some(8),
            cpus: 16,
            ..RecordHeader::default()
        };
        let out = dir.join("capture.txt");
        compose(&out, &header, CaptureMode::Tracefs, true, 2, &body).unwrap();
        let text = std::fs::read_to_string(&out).unwrap();
        assert!(text.contains("\n# tracer: function_graph\n"), "{text}");
        let t = crate::sources::load(&out, &Default::default()).unwrap();
        assert_eq!(t.kernel_scan_batch, Some(8));
        let updates: Vec<_> = t
            .events
            .iter()
            .filter(|e| matches!(e.kind, crate::events::EventKind::RseqUpdate { .. }))
            .collect();
        assert_eq!(updates.len(), 1, "{:?}", t.warnings);
        assert_eq!((updates[0].tid, updates[0].cpu), (150, 13));
        std::fs::remove_dir_all(&dir).ok();
    }
}
