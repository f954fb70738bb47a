//! What the host tells the guest, on the kernel command line: one `cidscope.vm=...` parameter
//! (a dotted name, so the kernel neither warns about it nor hands it to init as an environment
//! variable). Its value is `key=value` pairs joined by `,`; values are percent-encoded outside
//! `[A-Za-z0-9._:/+-]`, so no space, quote, `,` or `=` of a workload SPEC can end it early.

/// Where the guest's capture comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CaptureMode {
    /// tracefs: record-tgid, the events of [`super::guest::tracefs::EVENTS`], streamed from
    /// `trace_pipe` while the workload runs.
    Tracefs,
    /// perf_event_open on every CPU (the path of `cidscope attach --all`), written as ftrace
    /// text by the record writer when the workload ends.
    Attach,
}

impl CaptureMode {
    pub fn name(self) -> &'static str {
        match self {
            CaptureMode::Tracefs => "tracefs",
            CaptureMode::Attach => "attach",
        }
    }
    pub fn from_name(s: &str) -> Option<CaptureMode> {
        match s {
            "tracefs" => Some(CaptureMode::Tracefs),
            "attach" => Some(CaptureMode::Attach),
            _ => None,
        }
    }
}

/// The guest's instructions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GuestConfig {
    pub mode: CaptureMode,
    /// A workload name (`churn`) or a `cidscope live` SPEC (`hog:4,churn:100/s`).
    pub workload: String,
    pub threads: Option<u32>,
    pub duration_ns: u64,
    /// tracefs `buffer_size_kb` per CPU (attach: the perf ring per CPU, in KiB).
    pub buffer_kb: u32,
    /// tracefs `trace_clock` (`None`: the kernel's default).
    pub trace_clock: Option<String>,
    /// tracefs `set_graph_function`: record the calls of this kernel function with the
    /// function_graph tracer beside the events (`None`: the nop tracer).
    pub graph_function: Option<String>,
    /// Define the CID probes (fprobe events `cidscope:cid_*`, docs/models.md §5.6) that mark
    /// where the untraced CID steps run (tracefs mode).
    pub probes: bool,
    /// `--seed`: the workloads' random choices (0: each workload's fixed default).
    pub seed: u64,
}

/// The kernel parameter's name.
pub const PARAM: &str = "cidscope.vm";
/// Version of the encoding (the first pair).
const VERSION: &str = "1";

fn keep(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"._:/+-".contains(&b)
}

/// Percent-encodes what [`keep`] does not keep.
pub fn encode_value(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for &b in s.as_bytes() {
        if keep(b) {
            o.push(b as char);
        } else {
            o.push_str(&format!("%{b:02X}"));
        }
    }
    o
}

/// Undoes [`encode_value`]; the error names the offset of a bad escape.
pub fn decode_value(s: &str) -> Result<String, String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = b
                .get(i + 1..i + 3)
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| format!("bad escape at offset {i} of {s:?}: expected %XX"))?;
            out.push(hex);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| format!("{s:?} does not decode to UTF-8"))
}

impl GuestConfig {
    /// The value of `cidscope.vm=` (also the worker's argument).
    pub fn encode(&self) -> String {
        let mut pairs = vec![
            format!("v={VERSION}"),
            format!("mode={}", self.mode.name()),
            format!("workload={}", encode_value(&self.workload)),
            format!("duration_ns={}", self.duration_ns),
            format!("buffer_kb={}", self.buffer_kb),
        ];
        if let Some(t) = self.threads {
            pairs.push(format!("threads={t}"));
        }
        if let Some(c) = &self.trace_clock {
            pairs.push(format!("clock={}", encode_value(c)));
        }
        if let Some(f) = &self.graph_function {
            pairs.push(format!("graph={}", encode_value(f)));
        }
        pairs.push(format!("probes={}", self.probes as u8));
        if self.seed != 0 {
            pairs.push(format!("seed={}", self.seed));
        }
        pairs.join(",")
    }

    /// The whole kernel parameter.
    pub fn param(&self) -> String {
        format!("{PARAM}={}", self.encode())
    }

    /// Parses a value made by [`GuestConfig::encode`]. Errors name the key.
    pub fn decode(value: &str) -> Result<GuestConfig, String> {
        let mut mode = None;
        let mut workload = None;
        let mut threads = None;
        let mut duration_ns = None;
        let mut buffer_kb = None;
        let mut trace_clock = None;
        let mut graph_function = None;
        let mut probes = false;
        let mut seed = 0;
        let mut version = None;
        for pair in value.split(',').filter(|p| !p.is_empty()) {
            let (k, v) = pair
                .split_once('=')
                .ok_or_else(|| format!("{PARAM}: expected key=value, found {pair:?}"))?;
            let num = |what: &str| -> Result<u64, String> {
                v.parse()
                    .map_err(|_| format!("{PARAM}: {what} expects a number, found {v:?}"))
            };
            match k {
                "v" => version = Some(v.to_string()),
                "mode" => {
                    mode = Some(CaptureMode::from_name(v).ok_or_else(|| {
                        format!("{PARAM}: mode expects tracefs or attach, found {v:?}")
                    })?)
                }
                "workload" => workload = Some(decode_value(v)?),
                "threads" => threads = Some(num("threads")? as u32),
                "duration_ns" => duration_ns = Some(num("duration_ns")?),
                "buffer_kb" => buffer_kb = Some(num("buffer_kb")? as u32),
                "clock" => trace_clock = Some(decode_value(v)?),
                "graph" => graph_function = Some(decode_value(v)?),
                "probes" => probes = num("probes")? != 0,
                "seed" => seed = num("seed")?,
                // keys of later versions are ignored
                _ => {}
            }
        }
        if version.as_deref() != Some(VERSION) {
            return Err(format!(
                "{PARAM}: expected v={VERSION} first (host and guest binaries differ?), found {version:?}"
            ));
        }
        let missing = |k: &str| format!("{PARAM}: the key {k} is missing");
        Ok(GuestConfig {
            mode: mode.ok_or_else(|| missing("mode"))?,
            workload: workload.ok_or_else(|| missing("workload"))?,
            threads,
            duration_ns: duration_ns.ok_or_else(|| missing("duration_ns"))?,
            buffer_kb: buffer_kb.ok_or_else(|| missing("buffer_kb"))?,
            trace_clock,
            graph_function,
            probes,
            seed,
        })
    }

    /// Finds `cidscope.vm=` among the words of `/proc/cmdline`.
    pub fn from_cmdline(cmdline: &str) -> Result<GuestConfig, String> {
        let prefix = format!("{PARAM}=");
        let v = cmdline
            .split_ascii_whitespace()
            .find_map(|w| w.strip_prefix(&prefix))
            .ok_or_else(|| format!("the kernel command line has no {PARAM}= parameter"))?;
        GuestConfig::decode(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(workload: &str) -> GuestConfig {
        GuestConfig {
            mode: CaptureMode::Tracefs,
            workload: workload.into(),
            threads: Some(8),
            duration_ns: 1_500_000_000,
            buffer_kb: 4096,
            trace_clock: Some("global".into()),
            graph_function: Some("task_mm_cid_work".into()),
            probes: true,
            seed: 7,
        }
    }

    #[test]
    fn round_trips_through_a_kernel_command_line() {
        for w in [
            "churn",
            "hog:4,churn:100/s:2ms",
            "periodic:4:1ms:200us, sleeper",
            "weird \"quoted\" = % spec",
            "ünïcode",
        ] {
            let c = cfg(w);
            let p = c.param();
            assert!(!p.contains(' ') && !p.contains('"'), "{p}");
            // one word among others, as /proc/cmdline shows it
            let line = format!("console=ttyS0 quiet {p} nohz_full=2-7\n");
            assert_eq!(GuestConfig::from_cmdline(&line).unwrap(), c, "{w}");
        }
        let mut c = cfg("x");
        c.threads = None;
        c.mode = CaptureMode::Attach;
        c.probes = false;
        c.seed = 0;
        assert_eq!(GuestConfig::decode(&c.encode()).unwrap(), c);
    }

    #[test]
    fn encoding_keeps_plain_specs_readable() {
        assert_eq!(encode_value("hog:4,churn:100/s"), "hog:4%2Cchurn:100/s");
        assert_eq!(decode_value("a%20b%2C").unwrap(), "a b,");
    }

    #[test]
    fn decoding_errors_name_the_key() {
        let e = |s: &str| GuestConfig::decode(s).unwrap_err();
        assert!(e("mode=tracefs").contains("v=1"));
        assert!(e("v=1,mode=xfs").contains("mode expects"));
        assert!(e("v=1,mode=tracefs,workload=a,duration_ns=x").contains("duration_ns expects"));
        assert!(e("v=1,mode=tracefs,workload=a,duration_ns=1").contains("buffer_kb is missing"));
        assert!(e("v=1,nokey").contains("key=value"));
        assert!(decode_value("%zz").unwrap_err().contains("offset 0"));
        assert!(decode_value("ab%4").unwrap_err().contains("offset 2"));
        assert!(
            GuestConfig::from_cmdline("console=ttyS0 quiet")
                .unwrap_err()
                .contains("no cidscope.vm=")
        );
    }
}
