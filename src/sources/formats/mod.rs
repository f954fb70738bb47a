//! The capture file formats cidscope reads: each is a type in its own file, all are listed once
//! in [`FORMATS`]. Detection, `--format`, streaming and the memory estimate go through this list.

pub mod ftrace;
pub mod perf_data;
pub mod perf_script;
pub mod systrace_html;
pub mod trace_cmd_report;
pub mod trace_dat;
pub mod trace_pipe;

pub use ftrace::FTRACE;
pub use perf_data::PERF_DATA;
pub use perf_script::PERF_SCRIPT;
pub use systrace_html::SYSTRACE_HTML;
pub use trace_cmd_report::TRACE_CMD_REPORT;
pub use trace_dat::TRACE_DAT;
pub use trace_pipe::TRACE_PIPE;

use crate::events::Format;
use crate::sources::file_format::{FileFormat, Priority, Sample};

/// Every format, in the order `--format` lists them.
pub static FORMATS: &[&dyn FileFormat] = &[
    &ftrace::Ftrace,
    &trace_pipe::TracePipe,
    &trace_cmd_report::TraceCmdReport,
    &perf_script::PerfScript,
    &perf_data::PerfData,
    &trace_dat::TraceDat,
    &systrace_html::SystraceHtml,
];

/// The reader of `format`.
pub fn of(format: Format) -> Option<&'static dyn FileFormat> {
    FORMATS.iter().copied().find(|f| f.format() == format)
}

/// The format the content shows first (the earliest line, then the higher priority); `None` when
/// no format recognises it. Never from the file name.
pub fn detect(data: &[u8]) -> Option<&'static dyn FileFormat> {
    let sample = Sample::new(data);
    let mut best: Option<((usize, Priority), &'static dyn FileFormat)> = None;
    for p in Priority::ALL {
        for &f in FORMATS.iter().filter(|f| f.priority() == p) {
            if let Some(line) = f.sniff(&sample)
                && best.is_none_or(|(key, _)| (line, p) < key)
            {
                best = Some(((line, p), f));
            }
        }
        // nothing of a lower priority can come before the first line
        if best.is_some_and(|((line, _), _)| line == 0) {
            break;
        }
    }
    best.map(|(_, f)| f)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What every format claims of `data`: (line, priority, id).
    fn claims(data: &[u8]) -> Vec<(usize, Priority, &'static str)> {
        let s = Sample::new(data);
        let mut v: Vec<_> = FORMATS
            .iter()
            .filter_map(|f| f.sniff(&s).map(|l| (l, f.priority(), f.format().id())))
            .collect();
        v.sort();
        v
    }

    #[test]
    fn detects_by_content() {
        let d = |b: &[u8]| detect(b).map(|f| f.format());
        assert_eq!(d(b"\x17\x08\x44tracing6\0"), Some(TRACE_DAT));
        assert_eq!(d(b"PERFILE2xxxxxxxx"), Some(PERF_DATA));
        assert_eq!(d(b"# tracer: nop\n#\n"), Some(FTRACE));
        assert_eq!(d(b"cpus=2\n"), Some(TRACE_CMD_REPORT));
        assert_eq!(
            d(b"  bash-1 [000] .....  1.000001: rseq_update: cpu_id=0\n"),
            Some(TRACE_PIPE)
        );
        assert_eq!(
            d(b"  perf  1484 [000]  1.1:  sched:sched_switch: prev_comm=x\n"),
            Some(PERF_SCRIPT)
        );
        assert_eq!(d(b"hello\nworld\n"), None);
        // the first line that shows a format decides, whatever the order of FORMATS
        assert_eq!(
            d(b"  perf  1484 [000]  1.1:  sched:sched_switch: x\n# tracer: nop\n"),
            Some(PERF_SCRIPT)
        );
        assert_eq!(
            d(b"  bash-1 [000] .....  1.000001: x: y\n  perf  1484 [000]  1.1:  sched:sched_switch: x\n"),
            Some(TRACE_PIPE)
        );
    }

    #[test]
    fn no_two_formats_claim_the_same_line_at_one_priority() {
        let mut inputs: Vec<Vec<u8>> = vec![
            b"# tracer: nop\n".to_vec(),
            b"cpus=1 1.5: sched:sched_switch: x\n".to_vec(),
            b"  bash-1 [000] 1.5: sched:sched_switch: x\n".to_vec(),
        ];
        for e in std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/traces"))
            .into_iter()
            .flatten()
            .flatten()
        {
            if let Ok(d) = std::fs::read(e.path()) {
                inputs.push(d);
            }
        }
        for data in &inputs {
            let c = claims(data);
            if let [a, b, ..] = c.as_slice() {
                assert!((a.0, a.1) != (b.0, b.1), "{a:?} and {b:?} tie");
            }
        }
    }

    #[test]
    fn every_format_is_its_own_reader() {
        for f in FORMATS {
            assert_eq!(of(f.format()).map(|r| r.format()), Some(f.format()));
        }
        let ids: std::collections::HashSet<_> = FORMATS.iter().map(|f| f.cli_name()).collect();
        assert_eq!(ids.len(), FORMATS.len(), "--format values are unique");
    }
}
