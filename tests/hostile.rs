//! Damaged binary captures, made in the test from the good ones in `traces/`: one ring-buffer
//! page or one perf.data record is damaged, and the load must say how much it skipped and where
//! (the warning's count and byte offset), and keep everything else. Each case checks the events
//! lost against the original file: the damaged load holds only the original's events, and what
//! is gone is exactly what the damaged place held. Text captures with what editors and tools
//! add (a byte order mark) load as the plain ones do.

mod common;
use cidscope::events::{Event, EventKind, Trace};
use cidscope::sources::perf_data::{header, records::Records};
use cidscope::sources::trace_dat::layout;
use cidscope::sources::{self, LoadOptions};
use common::*;
use std::collections::BTreeMap;

type Key = (u64, u16, u32, &'static str);

fn key(e: &Event) -> Key {
    (e.ts, e.cpu, e.tid, e.kind.static_name())
}

fn load(name: &str, data: &[u8]) -> Trace {
    sources::load_bytes(name, data, &LoadOptions::default())
        .unwrap_or_else(|e| panic!("{name}: refused: {e}"))
}

fn warning<'t>(t: &'t Trace, code: &str) -> &'t str {
    let w = t.warnings.iter().find(|w| w.code == code);
    w.map(|w| w.message.as_str()).unwrap_or_else(|| {
        let all: Vec<_> = t.warnings.iter().map(|w| w.code).collect();
        panic!("no {code} warning; warnings: {all:?}")
    })
}

/// The events (lost markers aside) of `full` that `damaged` lacks; panics if `damaged` has one
/// `full` has not.
fn missing(full: &Trace, damaged: &Trace) -> Vec<Key> {
    let mut left: BTreeMap<Key, i64> = BTreeMap::new();
    let real = |e: &Event| !matches!(e.kind, EventKind::Lost { .. });
    for e in full.events.iter().filter(real) {
        *left.entry(key(&e)).or_default() += 1;
    }
    for e in damaged.events.iter().filter(real) {
        let n = left.entry(key(&e)).or_default();
        *n -= 1;
        assert!(
            *n >= 0,
            "the damaged load has an event the file lacks: {e:?}"
        );
    }
    let mut out = Vec::new();
    for (k, n) in left {
        out.extend(std::iter::repeat_n(k, n as usize));
    }
    out
}

fn lost_markers(t: &Trace) -> usize {
    t.events
        .iter()
        .filter(|e| matches!(e.kind, EventKind::Lost { .. }))
        .count()
}

const DAT: &str = "cyclictest.trace.dat";

/// `cyclictest.trace.dat` (v6, uncompressed), its layout, and the byte offset of CPU 0's page 5.
fn trace_dat() -> (Vec<u8>, layout::Layout, usize) {
    let data = std::fs::read(capture(DAT)).unwrap();
    let l = layout::read(&data).unwrap();
    assert!(!l.buffer.compressed && l.version == 6);
    let page = l.buffer.cpus[0].offset as usize + 5 * l.buffer.page_size as usize;
    (data, l, page)
}

fn u64_at(d: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(d[at..at + 8].try_into().unwrap())
}

/// The page's committed data size and its time span (page stamp .. next page's stamp).
fn page_facts(d: &[u8], page: usize, ps: usize) -> (usize, u64, u64) {
    let commit = (u64_at(d, page + 8) & 0xfffff) as usize;
    (commit, u64_at(d, page), u64_at(d, page + ps))
}

#[test]
fn trace_dat_corrupt_entry_header_skips_the_rest_of_its_page_with_count_and_offset() {
    let (orig, l, page) = trace_dat();
    let ps = l.buffer.page_size as usize;
    let (commit, from, to) = page_facts(&orig, page, ps);
    let full = load(DAT, &orig);
    let mut d = orig.clone();
    // the page's first entry becomes a padding longer than the committed data
    let first = page + 16;
    d[first..first + 4].copy_from_slice(&29u32.to_le_bytes());
    d[first + 4..first + 8].copy_from_slice(&(ps as u32).to_le_bytes());
    let t = load(DAT, &d);
    let w = warning(&t, "undecodable-page-data");
    assert!(
        w.contains(&format!(
            "{commit} committed bytes in 1 ring-buffer pages could not be walked"
        )) && w.contains(&format!(
            "CPU 0, {commit} bytes from byte offset {first} in the page at byte offset {page}"
        )),
        "{w}"
    );
    let gone = missing(&full, &t);
    assert!(!gone.is_empty());
    // what is gone is the page's events: CPU 0, inside the page's time span
    assert!(
        gone.iter().all(|k| k.1 == 0 && (from..=to).contains(&k.0)),
        "{gone:?}"
    );
    let on_page = full
        .events
        .iter()
        .filter(|e| e.cpu == 0 && e.ts >= from && e.ts < to)
        .count();
    assert_eq!(gone.len(), on_page);
    assert_eq!(lost_markers(&t), lost_markers(&full) + 1);
}

#[test]
fn trace_dat_commit_cut_short_is_counted_as_data_past_commit() {
    let (orig, l, page) = trace_dat();
    let ps = l.buffer.page_size as usize;
    let (commit, _, to) = page_facts(&orig, page, ps);
    let full = load(DAT, &orig);
    let mut d = orig.clone();
    // 128 bytes fewer committed: the entries in them stay on the page, unread
    let cut = commit - 128;
    d[page + 8..page + 16].copy_from_slice(&(cut as u64).to_le_bytes());
    let t = load(DAT, &d);
    let w = warning(&t, "data-past-commit");
    let data = page + 16 + cut;
    assert!(
        w.contains("1 ring-buffer pages hold data past their committed size")
            && w.contains(&format!(
                "CPU 0, the page at byte offset {page} commits {cut} bytes but holds data at byte offset {data}"
            )),
        "{w}"
    );
    let gone = missing(&full, &t);
    assert!(
        !gone.is_empty() && gone.iter().all(|k| k.1 == 0 && k.0 <= to),
        "{gone:?}"
    );
    assert_eq!(lost_markers(&t), lost_markers(&full) + 1);
}

#[test]
fn trace_dat_patched_page_size_is_read_as_the_kernel_wrote_it() {
    let (orig, l, _) = trace_dat();
    let full = load(DAT, &orig);
    // v6: magic (10 bytes), "6\0", endianness, long size, then the page size
    assert_eq!(
        u32::from_le_bytes(orig[14..18].try_into().unwrap()),
        l.buffer.page_size
    );
    let mut d = orig.clone();
    d[14..18].copy_from_slice(&8192u32.to_le_bytes());
    let t = load(DAT, &d);
    let w = warning(&t, "page-size-mismatch");
    assert!(
        w.contains(
            "the header says 8192-byte ring-buffer pages, the kernel's header_page format 4096"
        ),
        "{w}"
    );
    assert!(missing(&full, &t).is_empty());
    assert_eq!(t.events.len(), full.events.len());
}

#[test]
fn trace_dat_two_cpus_pointing_at_the_same_data_count_it_once() {
    let (orig, l, _) = trace_dat();
    let full = load(DAT, &orig);
    let at = orig.windows(10).position(|w| w == b"flyrecord\0").unwrap() + 10;
    let c0 = &l.buffer.cpus[0];
    assert_eq!(
        (u64_at(&orig, at), u64_at(&orig, at + 8)),
        (c0.offset, c0.size)
    );
    // CPU 1's entry of the buffer table names CPU 0's data
    let mut d = orig.clone();
    d.copy_within(at..at + 16, at + 16);
    let t = load(DAT, &d);
    let w = warning(&t, "overlapping-cpu-buffers");
    assert!(
        w.contains(&format!(
            "the data of CPU 1 (byte offset {}, {} bytes) overlaps that of CPU 0 by {} bytes",
            c0.offset, c0.size, c0.size
        )),
        "{w}"
    );
    // CPU 0's events once; CPU 1's are gone, none doubled
    let gone = missing(&full, &t);
    let cpu1 = full.events.iter().filter(|e| e.cpu == 1).count();
    assert!(gone.iter().all(|k| k.1 == 1));
    assert_eq!(gone.len(), cpu1 - lost_markers_on(&full, 1));
    assert_eq!(t.events.iter().filter(|e| e.cpu == 1).count(), 0);
}

fn lost_markers_on(t: &Trace, cpu: u16) -> usize {
    t.events
        .iter()
        .filter(|e| e.cpu == cpu && matches!(e.kind, EventKind::Lost { .. }))
        .count()
}

const PERF: &str = "cyclictest.perf.data";

/// `cyclictest.perf.data` and the byte offsets of its records (walked from the header).
fn perf_data() -> (Vec<u8>, Vec<(usize, u32, usize)>) {
    let data = std::fs::read(capture(PERF)).unwrap();
    let (header::Mode::File(h), false) = header::read(&data).unwrap() else {
        panic!("a little-endian file-mode perf.data")
    };
    let (start, end) = (
        h.data.offset as usize,
        (h.data.offset + h.data.size) as usize,
    );
    let recs = Records::new(&data, start, end, false)
        .map(|r| (r.offset, r.rtype, r.body.len() + 8))
        .collect();
    (data, recs)
}

/// Two samples in a row in the middle of the data: the first one's place, and the second's.
fn two_samples(recs: &[(usize, u32, usize)]) -> ((usize, usize), (usize, usize)) {
    let i = (recs.len() / 2..recs.len())
        .find(|&i| recs[i].1 == 9 && recs[i + 1].1 == 9)
        .unwrap();
    ((recs[i].0, recs[i].2), (recs[i + 1].0, recs[i + 1].2))
}

#[test]
fn perf_data_record_size_that_swallows_the_next_is_counted() {
    let (orig, recs) = perf_data();
    let full = load(PERF, &orig);
    let ((at, size), (_, next)) = two_samples(&recs);
    let mut d = orig.clone();
    d[at + 6..at + 8].copy_from_slice(&((size + next) as u16).to_le_bytes());
    let t = load(PERF, &d);
    let w = warning(&t, "oversized-record");
    assert!(
        w.contains(&format!(
            "1 samples are {next} bytes longer than their fields (first at byte offset {at})"
        )),
        "{w}"
    );
    assert_eq!(missing(&full, &t).len(), 1);
}

#[test]
fn perf_data_record_of_a_type_nothing_writes_is_counted() {
    let (orig, recs) = perf_data();
    let full = load(PERF, &orig);
    let ((at, _), (next, _)) = two_samples(&recs);
    let mut d = orig.clone();
    // one a type no kernel defines, the next a PERF_RECORD_READ (9 ^ 1), which only
    // inherit_stat events produce
    d[at..at + 4].copy_from_slice(&200u32.to_le_bytes());
    d[next] ^= 1;
    let t = load(PERF, &d);
    let w = warning(&t, "unknown-record-type");
    assert!(
        w.contains(&format!(
            "2 records have a type no kernel or perf defines, or one no attribute of the file produces (first: type 200 at byte offset {at})"
        )),
        "{w}"
    );
    assert_eq!(missing(&full, &t).len(), 2);
}

#[test]
fn perf_data_sample_of_an_unknown_event_id_is_counted_with_its_offset() {
    let (orig, recs) = perf_data();
    let full = load(PERF, &orig);
    let ((at, _), _) = two_samples(&recs);
    let mut d = orig.clone();
    // the sample's first field is its PERF_SAMPLE_IDENTIFIER
    d[at + 8..at + 16].copy_from_slice(&u64::MAX.to_le_bytes());
    let t = load(PERF, &d);
    let w = warning(&t, "unknown-event-id");
    assert!(
        w.contains(&format!(
            "1 records name an event id that no attribute lists (first at byte offset {at})"
        )),
        "{w}"
    );
    assert_eq!(missing(&full, &t).len(), 1);
}

#[test]
fn undamaged_captures_raise_none_of_these_warnings() {
    for name in [
        DAT,
        "lost.trace.dat",
        "cyclictest-v7.trace.dat",
        PERF,
        "lost.perf.data",
        "stress-ng.perf.data",
        "cyclictest-pipe.perf.data",
        "cyclictest.ftrace.txt",
        "cyclictest.trace_pipe.txt",
        "cyclictest-v7.trace-cmd-report.txt",
        "cyclictest.perf-script.txt",
        "churn.perf-script-F.txt",
    ] {
        let t = sources::load(&capture(name), &LoadOptions::default()).unwrap();
        for w in &t.warnings {
            assert!(
                ![
                    "undecodable-page-data",
                    "data-past-commit",
                    "page-size-mismatch",
                    "overlapping-cpu-buffers",
                    "oversized-record",
                    "unknown-record-type",
                    "unknown-event-id",
                    "merged-lines",
                    "tid-unknown",
                ]
                .contains(&w.code),
                "{name}: {}: {}",
                w.code,
                w.message
            );
        }
    }
}

/// What a text load must keep whether or not a byte order mark comes first: the format, the
/// events and every task's comm.
type TextFacts = (String, Vec<Key>, Vec<(u32, Vec<u8>)>);

fn text_facts(t: &Trace) -> TextFacts {
    let mut comms: Vec<_> = t
        .tasks
        .iter()
        .map(|(&tid, m)| (tid, t.strings.get(m.comm).to_vec()))
        .collect();
    comms.sort();
    (
        format!("{:?}", t.origin),
        t.events.iter().map(|e| key(&e)).collect(),
        comms,
    )
}

/// A UTF-8 byte order mark before a text capture's first line is skipped by detection and by
/// every parse: held in memory (serial and parallel, small segments) and read as a stream. It
/// was refused by ftrace and trace-cmd report and kept inside the first comm by the others.
#[test]
fn utf8_bom_at_the_start_of_each_text_format_is_skipped() {
    for name in [
        "cyclictest.ftrace.txt",
        "cyclictest.trace_pipe.txt",
        "cyclictest-v7.trace-cmd-report.txt",
        "cyclictest.perf-script.txt",
    ] {
        let plain = std::fs::read(capture(name)).unwrap();
        let mut bom = b"\xef\xbb\xbf".to_vec();
        bom.extend_from_slice(&plain);
        let want = text_facts(&load(name, &plain));
        assert!(!want.1.is_empty(), "{name}");
        let parallel = LoadOptions {
            threads: Some(2),
            segment_bytes: Some(4096),
            ..Default::default()
        };
        for opts in [LoadOptions::default(), parallel] {
            let t = sources::load_bytes(name, &bom, &opts)
                .unwrap_or_else(|e| panic!("{name} with a BOM: refused: {e}"));
            assert_eq!(text_facts(&t), want, "{name} with a BOM, in memory");
            let stream = sources::open_reader(name, std::io::Cursor::new(bom.clone()), &opts)
                .and_then(|o| o.load(&opts))
                .unwrap_or_else(|e| panic!("{name} with a BOM, as a stream: refused: {e}"));
            assert_eq!(text_facts(&stream), want, "{name} with a BOM, as a stream");
        }
    }
}

/// A file name with an escape sequence in it reaches the terminal escaped: in a refusal, in a
/// warning, on the `file` line of `stats` and in `--check`'s verdict (it went through raw).
#[test]
fn escape_sequences_in_file_names_are_printed_escaped() {
    let dir = std::env::temp_dir().join(format!("cidscope-hostile-names-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let name = dir.join("evil\x1b]0;pwned\x07\x1b[31m.txt");
    let good = std::fs::read(capture("cyclictest.ftrace.txt")).unwrap();
    // cut mid-line: a truncated-line warning that names the file
    std::fs::write(&name, &good[..100_000]).unwrap();
    let path = name.to_str().unwrap();
    let shown = "evil\\u{1b}]0;pwned\\u{7}\\u{1b}[31m.txt";
    for args in [&["stats", path][..], &["--check", path]] {
        let (code, out, err) = cidscope(args);
        assert!(code == 0 || code == 4, "{args:?}: {code} {err}");
        let all = format!("{out}{err}");
        assert!(
            !all.contains('\x1b') && !all.contains('\x07'),
            "{args:?}: {all:?}"
        );
        assert!(all.contains(shown), "{args:?}: {all}");
    }
    std::fs::write(&name, b"not a capture\n").unwrap();
    let (code, _, err) = cidscope(&["stats", path]);
    assert_eq!(code, 2);
    assert!(!err.contains('\x1b') && err.contains(shown), "{err:?}");
    let (code, _, err) = cidscope(&["stats", &format!("{path}.missing")]);
    assert_eq!(code, 2);
    assert!(!err.contains('\x1b') && err.contains(shown), "{err:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A perf.data header whose attrs or data section offset points into the header itself (0, as
/// a zeroed field reads) is refused at that field, named, with what it holds: the offset named
/// was a garbage one read from the wrong place.
#[test]
fn perf_data_section_offset_inside_the_header_names_the_field() {
    let good = std::fs::read(capture("cyclictest.perf.data")).unwrap();
    for (at, name) in [(24usize, "attrs"), (40, "data")] {
        for v in [0u64, 103] {
            let mut d = good.clone();
            d[at..at + 8].copy_from_slice(&v.to_le_bytes());
            let e = sources::load_bytes("p.data", &d, &LoadOptions::default()).unwrap_err();
            assert_eq!(e.location, sources::Location::Offset(at as u64), "{e}");
            let m = e.to_string();
            assert!(
                m.contains(&format!(
                    "{name} section offset (the u64 at byte offset {at})"
                )) && m.contains(&format!("found {v}")),
                "{m}"
            );
        }
    }
}

/// `trace_clock` counter and x86-tsc are no time: a trace.dat recorded with one (made here by
/// moving the brackets of its trace_clock option) is refused at that option, naming the clock
/// and what to record instead, in both file versions. Ticks were read as nanoseconds.
#[test]
fn trace_dat_with_a_clock_that_is_no_time_is_refused_naming_it() {
    const CLOCKS: &[u8] = b"[local] global counter uptime perf mono mono_raw boot tai x86-tsc";
    for file in [DAT, "cyclictest-v7.trace.dat"] {
        let good = std::fs::read(capture(file)).unwrap();
        let at = good
            .windows(CLOCKS.len())
            .position(|w| w == CLOCKS)
            .expect("the trace_clock option");
        for (clock, what) in [("counter", "a count of events"), ("x86-tsc", "TSC cycles")] {
            let text = String::from_utf8_lossy(CLOCKS).replace(['[', ']'], "");
            let picked = text.replacen(clock, &format!("[{clock}]"), 1);
            let moved = format!("{picked}  ");
            let mut d = good.clone();
            d[at..at + CLOCKS.len()].copy_from_slice(&moved.as_bytes()[..CLOCKS.len()]);
            let e = sources::load_bytes(file, &d, &LoadOptions::default()).unwrap_err();
            let m = e.to_string();
            assert_eq!(e.location, sources::Location::Offset(at as u64), "{m}");
            assert!(
                m.contains(&format!("trace_clock `{clock}`")) && m.contains(what),
                "{m}"
            );
            assert!(m.contains("trace-cmd record -C local"), "{m}");
        }
    }
}

/// Text printed with a clock that counts ticks (`echo counter > trace_clock`: whole-number
/// TIMESTAMPs, made here from a real capture by dropping the dot) is refused at its first
/// event line, naming the clock and what to record instead; ticks were read as seconds.
#[test]
fn text_with_a_clock_that_is_no_time_is_refused_naming_it() {
    // (trace_pipe has no header to tell the format by: its first line is refused as such)
    for name in [
        "cyclictest.ftrace.txt",
        "cyclictest-v7.trace-cmd-report.txt",
        "cyclictest.trace_pipe.txt",
    ] {
        let text = std::fs::read_to_string(capture(name)).unwrap();
        let mut first_event = None;
        let ticks: String = text
            .lines()
            .enumerate()
            .map(|(i, l)| {
                let Some(b) = l.find("] ") else {
                    return format!("{l}\n");
                };
                // the first token after [CPU] and the flags that ends with ':' is the time
                let (head, tail) = l.split_at(b);
                let mut toks: Vec<String> = tail.split(' ').map(str::to_string).collect();
                if let Some(t) = toks
                    .iter_mut()
                    .find(|t| t.ends_with(':') && t.contains('.'))
                {
                    *t = t.replace('.', "");
                    first_event.get_or_insert(i + 1);
                }
                format!("{head}{}\n", toks.join(" "))
            })
            .collect();
        let line = first_event.expect("event lines") as u64;
        let e = sources::load_bytes(name, ticks.as_bytes(), &LoadOptions::default()).unwrap_err();
        assert_eq!(e.location, sources::Location::Line(line), "{e}");
        let m = e.to_string();
        assert!(
            m.contains("the trace clock counts ticks") && m.contains("trace_clock counter"),
            "{m}"
        );
        assert!(
            m.contains("echo local > /sys/kernel/tracing/trace_clock"),
            "{m}"
        );
    }
}

/// A line naming tid 4294967295 (the value cidscope holds for an unknown task) keeps its event
/// and is counted in a `tid-unknown` warning: its rseq_update went without a word.
#[test]
fn tid_4294967295_is_counted_never_silent() {
    let ftrace = "# tracer: nop\n#\n  bash-4294967295  [000] .....  1.000001: rseq_update: cpu_id=0 mm_cid=0\n  bash-7  [000] .....  1.000002: rseq_update: cpu_id=0 mm_cid=1\n";
    let perf = "bash 4294967295 [000] 1.000001: rseq:rseq_update: cpu_id=0 mm_cid=0\nbash 7 [000] 1.000002: rseq:rseq_update: cpu_id=0 mm_cid=1\n";
    for (name, text) in [("f.txt", ftrace), ("p.txt", perf)] {
        let t = load(name, text.as_bytes());
        assert_eq!(t.event_count(), 2, "{name}");
        let w = warning(&t, "tid-unknown");
        assert!(w.contains("1 events name tid 4294967295"), "{name}: {w}");
        let plain = text.replace("4294967295", "8");
        let t = load(name, plain.as_bytes());
        assert!(t.warnings.iter().all(|w| w.code != "tid-unknown"), "{name}");
    }
}

/// Two event lines run together (a line's end and newline deleted from a real capture) lose
/// no event without a word: the line is split, the second event read, the cut first one
/// counted, and `merged-lines` says how many.
#[test]
fn two_event_lines_merged_into_one_are_split_and_counted() {
    let name = "cyclictest.ftrace.txt";
    let text = std::fs::read_to_string(capture(name)).unwrap();
    let full = load(name, text.as_bytes());
    let lines: Vec<&str> = text.lines().collect();
    // three merges: whole first line + second, first cut mid-field + second, and again
    let picks: Vec<usize> = (0..lines.len())
        .filter(|&i| lines[i].contains("rseq_update: cpu_id=") && !lines[i + 1].starts_with('#'))
        .take(3)
        .collect();
    let mut out = String::new();
    for (i, l) in lines.iter().enumerate() {
        out.push_str(l);
        match picks.iter().position(|&p| p == i) {
            Some(0) => out.push_str("  "),
            Some(_) => {
                // keep up to "mm_c", as if the rest of the line were lost
                out.truncate(out.len() - l.len() + l.find("mm_cid=").unwrap() + 4);
                out.push_str("  ");
            }
            None => out.push('\n'),
        }
    }
    let t = load(name, out.as_bytes());
    let w = warning(&t, "merged-lines");
    assert!(
        w.contains(": 3 lines hold two event lines")
            && w.contains("2 of the first events were cut short"),
        "{w}"
    );
    let gone = missing(&full, &t);
    assert_eq!(gone.len(), 2, "only the two cut events are gone: {gone:?}");
    assert!(gone.iter().all(|k| k.3 == "rseq_update"), "{gone:?}");
}

/// A line of 50,000 event heads run together (each an event whose rest was lost) is read head
/// by head: no recursion per head (which overflowed the stack at about 12,000 heads on the
/// main thread, an abort no panic handler catches), every head counted as a merged line. On a
/// thread with a 256 KB stack, where recursion ends far sooner.
#[test]
fn a_line_of_thousands_of_heads_run_together_does_not_overflow_the_stack() {
    let mut text = String::from("# tracer: nop\n");
    for k in 0..50_000 {
        text.push_str(&format!("a-1 [000] 1.{:06}: e: ", k + 1));
    }
    text.push('\n');
    let t = std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(move || load("heads.ftrace.txt", text.as_bytes()))
        .expect("a thread")
        .join()
        .expect("the load ends without a panic");
    let w = warning(&t, "merged-lines");
    assert!(w.contains("49999 lines hold two event lines"), "{w}");
}

/// A capture concatenated with itself is read once, with a `duplicated-events` warning that
/// counts the copy (held in memory, parallel in small pieces, and streamed); two different
/// captures one after the other are both kept. Formats with a `# tracer:` header are told by
/// it, the others (trace_pipe, trace-cmd report, perf script) by time going back to the
/// file's first event.
#[test]
fn a_capture_concatenated_with_itself_is_counted_once() {
    for (name, at) in [
        ("cyclictest.ftrace.txt", "events after"),
        ("cyclictest.trace_pipe.txt", "events where time goes back"),
        (
            "cyclictest.trace-cmd-report.txt",
            "events where time goes back",
        ),
        ("cyclictest.perf-script.txt", "events where time goes back"),
        (
            "cyclictest.perf-script-F.txt",
            "events where time goes back",
        ),
    ] {
        concatenated_with_itself(name, at);
    }
}

fn concatenated_with_itself(name: &str, at: &str) {
    let one = std::fs::read(capture(name)).unwrap();
    let full = load(name, &one);
    let twice = [one.clone(), one.clone()].concat();
    let parallel = LoadOptions {
        threads: Some(2),
        segment_bytes: Some(64 << 10),
        ..Default::default()
    };
    for opts in [LoadOptions::default(), parallel] {
        let t = sources::load_bytes(name, &twice, &opts).unwrap();
        let s = sources::open_reader(name, std::io::Cursor::new(twice.clone()), &opts)
            .and_then(|o| o.load(&opts))
            .unwrap();
        for t in [t, s] {
            assert_eq!(t.event_count(), full.event_count());
            assert!(missing(&full, &t).is_empty());
            let w = warning(&t, "duplicated-events");
            assert!(
                w.contains(&format!("{} {at}", full.event_count())),
                "{name}: {w}"
            );
        }
    }
    if !name.ends_with(".ftrace.txt") {
        return;
    }
    let other = std::fs::read(capture("hackbench-pipe.ftrace.txt")).unwrap();
    let both = load("both", &[one, other.clone()].concat());
    let o = load("other", &other);
    assert_eq!(both.event_count(), full.event_count() + o.event_count());
    assert!(both.warnings.iter().all(|w| w.code != "duplicated-events"));
}
