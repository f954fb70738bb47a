//! The guest's stream over virtio-serial (`/dev/hvc0`): ftrace text lines, interleaved with
//! control lines that start with `#cidscope-vm ` (a `#` line, so a stray one in a capture is a
//! comment to every ftrace reader). The host sends back `stop` (Ctrl-C) and `ack` (after
//! `end`: all arrived, power off).
//!
//! ```text
//! #cidscope-vm hello v=1 kernel=6.18.15+deb13-cloud-amd64 hz=250 hz_from=jiffies cpus=16 mode=tracefs
//! #cidscope-vm warn hrtimer_expire_entry%20filter...
//! #cidscope-vm running workload=churn threads=8
//!             init-1       (      1) [015] .....    41.865114: rseq_update: cpu_id=15 ...
//! #cidscope-vm progress events=12000
//! #cidscope-vm samples n=812 threads=17 matched=812 last=812 oor=0 dups=0 max_cid=15 cpus=16 dropped=0 unmatched= dup_examples=
//! #cidscope-vm end status=ok lost=0 worker=0
//! ```
//!
//! Values are percent-encoded as on the kernel command line ([`super::cmdline`]). A capture
//! written by `cidscope vm --record` starts with the same facts as a comment,
//! `# cidscope-vm: kernel_version=... hz=... cpus=... [scan_batch=B]` ([`RecordHeader`]; the
//! hello and the header carry `scan_batch` only for a kernel with CONFIG_RSEQ_CID_SCAN_BATCH).

use super::cmdline::{decode_value, encode_value};

pub const PREFIX: &str = "#cidscope-vm ";

/// The host's request to end the workload early (Ctrl-C).
pub const STOP: &str = "stop";
/// The host's answer to `end`: everything arrived, the guest may power off.
pub const ACK: &str = "ack";

/// What the guest says about itself before anything else.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hello {
    pub version: u32,
    /// `uname -r` of the guest.
    pub kernel: String,
    /// CONFIG_HZ of the guest, when it knows it.
    pub hz: Option<u32>,
    /// How: `config.gz` (/proc/config.gz) or `jiffies` (their rate in /proc/timer_list).
    pub hz_from: Option<String>,
    /// CONFIG_RSEQ_CID_SCAN_BATCH of the guest (the compaction-in-batches patches), when its
    /// config has it; `None` on stock kernels or without /proc/config.gz.
    pub scan_batch: Option<u32>,
    /// Possible CPUs of the guest (the bound of every CID).
    pub cpus: u32,
    pub mode: String,
}

/// How the guest's run ended.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct End {
    /// `ok`, `stopped` (the host asked) or `error`.
    pub status: String,
    /// Events the ring buffers overwrote or dropped (tracefs per-CPU stats; attach: perf's
    /// LOST records).
    pub lost: u64,
    /// Exit status of the workload process (-1: killed).
    pub worker: i32,
}

/// The CIDs the workload's threads read from their own rseq areas, held against the trace
/// (`--attach`: both on CLOCK_MONOTONIC; `stats::live::summarize` in the guest).
#[derive(Clone, Debug, PartialEq, Eq, Default, serde::Serialize)]
pub struct SampleCheck {
    /// CIDs read (one per change a thread saw).
    pub samples: u64,
    /// Threads that read any.
    pub threads: u64,
    /// Samples whose CPU and CID an rseq_update of the thread at or before it carries.
    pub matched: u64,
    /// Samples whose values the thread's last rseq_update before it carries.
    pub matched_last: u64,
    /// Samples with a CID at or above `cpus` (or negative).
    pub cid_out_of_range: u64,
    /// Instants where two running threads of the workload held one CID (from the trace).
    pub duplicates: u64,
    pub max_cid: Option<i32>,
    /// Possible CPUs of the guest.
    pub cpus: u32,
    /// Samples the threads' queues could not hold (counted, not checked).
    pub dropped: u64,
    /// The first samples the trace does not show, as text.
    pub unmatched: Vec<String>,
    /// The first duplicates, as text.
    pub duplicate_examples: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Control {
    Hello(Hello),
    Warn(String),
    Running { workload: String },
    Progress { events: u64 },
    Samples(SampleCheck),
    End(End),
    Error(String),
}

fn pairs(rest: &str) -> impl Iterator<Item = (&str, &str)> {
    rest.split_ascii_whitespace()
        .filter_map(|w| w.split_once('='))
}

fn get<'a>(rest: &'a str, key: &str) -> Option<&'a str> {
    pairs(rest).find(|(k, _)| *k == key).map(|(_, v)| v)
}

impl Control {
    /// The line (with its newline).
    pub fn line(&self) -> String {
        let body = match self {
            Control::Hello(h) => format!(
                "hello v={} kernel={} hz={} hz_from={} cpus={} mode={}{}",
                h.version,
                encode_value(&h.kernel),
                h.hz.map_or("?".to_string(), |h| h.to_string()),
                h.hz_from.as_deref().map_or("?".into(), encode_value),
                h.cpus,
                encode_value(&h.mode),
                h.scan_batch
                    .map_or(String::new(), |b| format!(" scan_batch={b}"))
            ),
            Control::Warn(m) => format!("warn {}", encode_value(m)),
            Control::Running { workload } => format!("running workload={}", encode_value(workload)),
            Control::Progress { events } => format!("progress events={events}"),
            Control::Samples(c) => format!(
                "samples n={} threads={} matched={} last={} oor={} dups={} max_cid={} cpus={} dropped={} unmatched={} dup_examples={}",
                c.samples,
                c.threads,
                c.matched,
                c.matched_last,
                c.cid_out_of_range,
                c.duplicates,
                c.max_cid.map_or("?".into(), |m| m.to_string()),
                c.cpus,
                c.dropped,
                encode_value(&c.unmatched.join("\n")),
                encode_value(&c.duplicate_examples.join("\n"))
            ),
            Control::End(e) => format!(
                "end status={} lost={} worker={}",
                encode_value(&e.status),
                e.lost,
                e.worker
            ),
            Control::Error(m) => format!("error {}", encode_value(m)),
        };
        format!("{PREFIX}{body}\n")
    }

    /// `None` when `line` is no control line (ftrace text); `Some(Err)` when it is one that does
    /// not parse.
    pub fn parse(line: &str) -> Option<Result<Control, String>> {
        let rest = line.strip_prefix(PREFIX)?.trim_end();
        let (word, args) = rest.split_once(' ').unwrap_or((rest, ""));
        let bad = |what: &str| Err(format!("guest control line {rest:?}: {what}"));
        Some(match word {
            "hello" => {
                let Some(kernel) = get(args, "kernel") else {
                    return Some(bad("expected kernel=RELEASE"));
                };
                let cpus = match get(args, "cpus").and_then(|c| c.parse().ok()) {
                    Some(c) => c,
                    None => return Some(bad("expected cpus=N")),
                };
                let version = get(args, "v").and_then(|v| v.parse().ok()).unwrap_or(0);
                decode_value(kernel).and_then(|kernel| {
                    Ok(Control::Hello(Hello {
                        version,
                        kernel,
                        hz: get(args, "hz").and_then(|h| h.parse().ok()),
                        hz_from: get(args, "hz_from")
                            .filter(|v| *v != "?")
                            .map(decode_value)
                            .transpose()?,
                        scan_batch: get(args, "scan_batch").and_then(|b| b.parse().ok()),
                        cpus,
                        mode: decode_value(get(args, "mode").unwrap_or(""))?,
                    }))
                })
            }
            "warn" => decode_value(args).map(Control::Warn),
            "error" => decode_value(args).map(Control::Error),
            "running" => decode_value(get(args, "workload").unwrap_or(""))
                .map(|workload| Control::Running { workload }),
            "progress" => match get(args, "events").and_then(|e| e.parse().ok()) {
                Some(events) => Ok(Control::Progress { events }),
                None => bad("expected events=N"),
            },
            "samples" => {
                let n = |k: &str| get(args, k).and_then(|v| v.parse::<u64>().ok());
                let (Some(samples), Some(matched)) = (n("n"), n("matched")) else {
                    return Some(bad("expected n=N matched=N"));
                };
                let lines = |k: &str| {
                    decode_value(get(args, k).unwrap_or(""))
                        .map(|v| v.lines().map(str::to_string).collect::<Vec<_>>())
                };
                lines("unmatched")
                    .and_then(|u| Ok((u, lines("dup_examples")?)))
                    .map(|(u, d)| {
                        Control::Samples(SampleCheck {
                            samples,
                            threads: n("threads").unwrap_or(0),
                            matched,
                            matched_last: n("last").unwrap_or(0),
                            cid_out_of_range: n("oor").unwrap_or(0),
                            duplicates: n("dups").unwrap_or(0),
                            max_cid: get(args, "max_cid").and_then(|v| v.parse().ok()),
                            cpus: n("cpus").unwrap_or(0) as u32,
                            dropped: n("dropped").unwrap_or(0),
                            unmatched: u,
                            duplicate_examples: d,
                        })
                    })
            }
            "end" => Ok(Control::End(End {
                status: decode_value(get(args, "status").unwrap_or("?")).unwrap_or_default(),
                lost: get(args, "lost").and_then(|v| v.parse().ok()).unwrap_or(0),
                worker: get(args, "worker")
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(-1),
            })),
            _ => bad("unknown kind"),
        })
    }
}

/// The facts a `cidscope vm --record` capture starts with, as a `#` comment line.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct RecordHeader {
    pub kernel_version: String,
    pub hz: Option<u32>,
    /// Where `hz` came from: `guest /proc/config.gz` or `config file PATH` (beside the image).
    pub hz_source: Option<String>,
    /// CONFIG_RSEQ_CID_SCAN_BATCH (the compaction-in-batches patches), when the kernel has it.
    pub scan_batch: Option<u32>,
    pub cpus: u32,
    pub workload: String,
    pub mode: String,
    pub accel: String,
}

const RECORD_TAG: &str = "# cidscope-vm:";

impl RecordHeader {
    pub fn line(&self) -> String {
        let mut s = format!(
            "{RECORD_TAG} kernel_version={} hz={} cpus={} workload={} mode={} accel={}",
            encode_value(&self.kernel_version),
            self.hz.map_or("?".into(), |h| h.to_string()),
            self.cpus,
            encode_value(&self.workload),
            encode_value(&self.mode),
            encode_value(&self.accel),
        );
        if let Some(src) = &self.hz_source {
            s.push_str(&format!(" hz_source={}", encode_value(src)));
        }
        if let Some(b) = self.scan_batch {
            s.push_str(&format!(" scan_batch={b}"));
        }
        s.push('\n');
        s
    }

    /// Finds the header among the first `#` lines of a capture.
    pub fn find(text: &str) -> Option<RecordHeader> {
        let line = text
            .lines()
            .take_while(|l| l.starts_with('#') || l.trim().is_empty())
            .find(|l| l.starts_with(RECORD_TAG))?;
        let rest = &line[RECORD_TAG.len()..];
        let dec = |k: &str| get(rest, k).and_then(|v| decode_value(v).ok());
        Some(RecordHeader {
            kernel_version: dec("kernel_version")?,
            hz: get(rest, "hz").and_then(|h| h.parse().ok()),
            hz_source: dec("hz_source"),
            scan_batch: get(rest, "scan_batch").and_then(|b| b.parse().ok()),
            cpus: get(rest, "cpus").and_then(|c| c.parse().ok())?,
            workload: dec("workload").unwrap_or_default(),
            mode: dec("mode").unwrap_or_default(),
            accel: dec("accel").unwrap_or_default(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_lines_round_trip() {
        let all = [
            Control::Samples(SampleCheck {
                samples: 812,
                threads: 17,
                matched: 811,
                matched_last: 800,
                cid_out_of_range: 0,
                duplicates: 0,
                max_cid: Some(15),
                cpus: 16,
                dropped: 3,
                unmatched: vec!["tid 300 at 1.5 s: cpu 2 cid 7".into(), "a b".into()],
                duplicate_examples: vec!["1.000 cpu 3: CID 4 of mm 2 held by 10 and 11".into()],
            }),
            Control::Samples(SampleCheck::default()),
            Control::Hello(Hello {
                version: 1,
                kernel: "6.18.15+deb13-cloud-amd64".into(),
                hz: Some(250),
                hz_from: Some("config.gz".into()),
                scan_batch: None,
                cpus: 16,
                mode: "tracefs".into(),
            }),
            Control::Hello(Hello {
                version: 1,
                kernel: "6.18.15".into(),
                hz: Some(250),
                hz_from: Some("config.gz".into()),
                scan_batch: Some(8),
                cpus: 64,
                mode: "tracefs".into(),
            }),
            Control::Hello(Hello {
                version: 1,
                kernel: "7.2.13 custom build".into(),
                hz: None,
                hz_from: None,
                scan_batch: None,
                cpus: 64,
                mode: "attach".into(),
            }),
            Control::Warn("event timer:tick_stop: No such file or directory".into()),
            Control::Running {
                workload: "hog:4,churn:100/s".into(),
            },
            Control::Progress { events: 12345 },
            Control::End(End {
                status: "ok".into(),
                lost: 7,
                worker: 0,
            }),
            Control::Error("mount /proc: EPERM".into()),
        ];
        for c in all {
            let l = c.line();
            assert!(l.starts_with(PREFIX) && l.ends_with('\n'), "{l}");
            assert_eq!(l.matches('\n').count(), 1);
            assert_eq!(Control::parse(&l).unwrap().unwrap(), c, "{l}");
        }
    }

    #[test]
    fn ftrace_lines_are_not_control_lines() {
        assert!(Control::parse("            init-1       (      1) [015] .....    41.865114: rseq_update: cpu_id=15 node_id=0 mm_cid=0").is_none());
        assert!(Control::parse("# tracer: nop").is_none());
        assert!(Control::parse("#cidscope-vm bogus x=1").unwrap().is_err());
        let e = Control::parse("#cidscope-vm hello kernel=6.18")
            .unwrap()
            .unwrap_err();
        assert!(e.contains("cpus=N"), "{e}");
        // a hello from a guest without /proc/config.gz
        let h = Control::parse("#cidscope-vm hello v=1 kernel=7.2.13 hz=? cpus=4 mode=tracefs");
        match h {
            Some(Ok(Control::Hello(h))) => {
                assert_eq!((h.hz, h.cpus, h.scan_batch), (None, 4, None))
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn record_header_is_found_among_the_capture_comments() {
        let h = RecordHeader {
            kernel_version: "6.18.15+deb13-cloud-amd64".into(),
            hz: Some(250),
            hz_source: Some("config".into()),
            scan_batch: None,
            cpus: 16,
            workload: "churn".into(),
            mode: "tracefs".into(),
            accel: "tcg".into(),
        };
        let text = format!(
            "{}# tracer: nop\n#\n            init-1 ( 1) [000] .....  1.0: x: y\n",
            h.line()
        );
        assert_eq!(RecordHeader::find(&text), Some(h.clone()));
        // not after the first event line
        let late = format!("# tracer: nop\n  init-1 [000] 1.0: x: y\n{}", h.line());
        assert_eq!(RecordHeader::find(&late), None);
        let unknown_hz = RecordHeader {
            hz: None,
            hz_source: None,
            ..h
        };
        assert_eq!(
            RecordHeader::find(&unknown_hz.line()),
            Some(unknown_hz.clone())
        );
        // the seed kernel's batch size is kept
        let seed = RecordHeader {
            scan_batch: Some(8),
            ..unknown_hz
        };
        assert!(seed.line().contains(" scan_batch=8"), "{}", seed.line());
        assert_eq!(RecordHeader::find(&seed.line()), Some(seed));
    }
}
