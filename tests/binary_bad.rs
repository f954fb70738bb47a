//! Truncated, empty and mislabelled binary files: exit 2 with the byte offset, or a load with a
//! warning naming the offset where what came before is whole; never a panic.
//!
//! The bad files in `traces/` were cut from the captures next to them:
//! * `cut-header.perf.data`: the first 60 bytes of `stress-ng.perf.data` (inside the header);
//! * `cut-record.perf.data`: its first 200000 bytes (inside a record of the data section; the
//!   feature sections with the tracepoint formats, which follow the data, are gone);
//! * `cut-record-pipe.perf.data`: the first 500000 bytes of `cyclictest-pipe.perf.data`
//!   (pipe mode keeps the formats at the start: everything before the cut is readable);
//! * `cut-header.trace.dat`: the first 12000 bytes of `cyclictest.trace.dat` (inside the event
//!   formats);
//! * `cut-page.trace.dat.gz`: `cyclictest.trace.dat` (v6) cut 2000 bytes into CPU 0's page 100
//!   (its truth comes from truth.py's page walker, as trace-cmd refuses the file);
//! * `cut-data-v7.trace.dat`: `cyclictest-v7.trace.dat` cut inside CPU 1's compressed data,
//!   which also loses the options section trace-cmd writes after the data;
//! * `empty.perf.data`, `empty.trace.dat`: zero bytes.

mod common;
use cidscope::events::{Event, EventKind};
use cidscope::sources::{self, LoadOptions, Location};
use common::*;

fn fails(args: &[&str], expect: &str) {
    let (code, out, err) = cidscope(args);
    assert_eq!(
        code, 2,
        "{args:?}: expected exit 2, got {code}; stdout {out} stderr {err}"
    );
    assert!(
        err.contains(expect),
        "{args:?}: stderr {err:?} lacks {expect:?}"
    );
    assert!(!err.contains("panicked"), "{err}");
}

fn path(name: &str) -> String {
    capture(name).to_str().unwrap().to_string()
}

#[test]
fn perf_data_cut_in_the_header() {
    let p = path("cut-header.perf.data");
    fails(
        &["stats", &p],
        &format!(
            "cidscope: {p}: at byte offset 56: perf.data: expected the event-types section (8 bytes), found only 4 bytes before the end (the file is 60 bytes: truncated?)"
        ),
    );
}

#[test]
fn perf_data_cut_in_a_record_loses_its_formats() {
    let p = path("cut-record.perf.data");
    fails(
        &["stats", "--json", &p],
        &format!(
            "cidscope: {p}: at byte offset 200000: perf.data: expected the table of 21 feature sections at byte offset 390408, right after the data section, but the file ends at byte 200000: the file is truncated"
        ),
    );
}

#[test]
fn pipe_perf_data_cut_in_a_record_keeps_what_came_before() {
    let s = stats(&capture("cut-record-pipe.perf.data"));
    // 4308 SAMPLE records end before the cut (counted by walking the records in Python).
    assert_eq!(s["events"], 4308);
    let w: Vec<&str> = s["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap())
        .collect();
    assert!(
        w.iter().any(|w| w.starts_with("truncated-record:") && w.contains("the file ends at byte offset 500000 inside the record at byte offset 499896 (128 bytes expected, 104 present)")),
        "{w:?}"
    );
    // Every event loaded is one of the full file's.
    let key = |e: &Event| (e.ts, e.cpu, e.tid, e.kind.static_name());
    let cut = sources::load(
        &capture("cut-record-pipe.perf.data"),
        &LoadOptions::default(),
    )
    .unwrap();
    let full = sources::load(
        &capture("cyclictest-pipe.perf.data"),
        &LoadOptions::default(),
    )
    .unwrap();
    let all: std::collections::HashSet<_> = full.events.iter().map(|e| key(&e)).collect();
    assert!(cut.events.iter().all(|e| all.contains(&key(&e))));
}

/// Where `pat` first occurs in `data`.
fn find(data: &[u8], pat: &[u8]) -> Option<usize> {
    data.windows(pat.len()).position(|w| w == pat)
}

/// Why `data` (a capture changed in place) is refused.
fn refusal(name: &str, data: &[u8]) -> String {
    sources::load_bytes(name, data, &LoadOptions::default())
        .expect_err("refused")
        .to_string()
}

/// A header_page whose `data` field lies past the page (every page would be read as cut): the
/// load is refused with both numbers, not read as a file of truncated pages.
#[test]
fn trace_dat_with_a_page_header_past_the_page_is_refused() {
    let mut data = std::fs::read(capture("cyclictest.trace.dat")).unwrap();
    let (from, to) = (
        &b"offset:16;\tsize:4080;"[..],
        &b"offset:99999;\tsize:1;"[..],
    );
    let at = find(&data, from).expect("the header_page's data field");
    data.splice(at..at + from.len(), to.iter().copied());
    let err = refusal("hdr.trace.dat", &data);
    assert!(
        err.contains("header_page puts a page's data at byte 99999, not inside a 4096-byte page"),
        "{err}"
    );
}

/// A v6 trace.dat saying it holds more CPUs than a kernel can have (NR_CPUS is at most 8192,
/// the limit a v7 file's CPU ids are held to) is refused at that count.
#[test]
fn trace_dat_v6_with_more_cpus_than_a_kernel_has_is_refused() {
    let mut data = std::fs::read(capture("cyclictest.trace.dat")).unwrap();
    // the count is the u32 before the options (or the flyrecord section)
    let at = match (find(&data, b"options  \0"), find(&data, b"flyrecord\0")) {
        (Some(o), Some(f)) if o < f => o,
        (_, f) => f.expect("the flyrecord section"),
    };
    assert_eq!(&data[at - 4..at], &2u32.to_le_bytes(), "two CPUs captured");
    data[at - 4..at].copy_from_slice(&9000u32.to_le_bytes());
    let err = refusal("cpus.trace.dat", &data);
    assert!(
        err.contains("expected a CPU count of at most 8192, found 9000"),
        "{err}"
    );
}

#[test]
fn trace_dat_cut_in_the_header() {
    let p = path("cut-header.trace.dat");
    fails(
        &["stats", &p],
        &format!(
            "cidscope: {p}: at byte offset 11912: trace.dat: the size of an ftrace event format says 479 bytes follow, but only 88 bytes are left (truncated or corrupt file)"
        ),
    );
}

#[test]
fn trace_dat_cut_mid_page_keeps_whole_entries_and_reports_the_rest_as_lost() {
    let s = stats(&capture("cut-page.trace.dat"));
    let t = truth("cut-page.trace.dat");
    let raw = &t["raw_walk"];
    assert_eq!(
        t["reader_refused_file"], true,
        "trace-cmd report refuses the cut file"
    );
    assert_eq!(s["events"], raw["events_total"]);
    assert_eq!(s["events"], 8492);
    assert_eq!(s["event_counts"], raw["event_counts"]);
    for (tid, r) in raw["rseq_per_tid"].as_object().unwrap() {
        assert_eq!(s["tasks"][tid]["rseq_updates"], r["count"], "tid {tid}");
        assert_eq!(s["tasks"][tid]["cids"], r["mm_cids"], "tid {tid}");
    }
    // 1 cut page + the rest of CPU 0 + all of CPU 1: one lost marker each, named by offset.
    assert_eq!(s["lost_markers"], 3);
    let w: Vec<&str> = s["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap())
        .collect();
    let has = |p: &str| w.iter().any(|w| w.contains(p));
    assert!(
        has("truncated-page")
            && has("CPU 0: the page at byte offset 5939200 is cut by the end of the file"),
        "{w:?}"
    );
    assert!(
        has("CPU 0: 7 ring-buffer page(s) from byte offset 5943296 are missing"),
        "{w:?}"
    );
    assert!(
        has("CPU 1: 61 ring-buffer page(s) from byte offset 5971968 are missing"),
        "{w:?}"
    );
    assert_eq!(
        raw["partial_pages"].as_u64().unwrap() + raw["missing_pages"].as_u64().unwrap(),
        1 + 7 + 61
    );
}

#[test]
fn trace_dat_v7_cut_in_the_data() {
    let p = path("cut-data-v7.trace.dat");
    fails(
        &["stats", &p],
        &format!(
            "cidscope: {p}: at byte offset 1161567: trace.dat: expected an options section here, but the file ends at byte 1127728: the file is truncated"
        ),
    );
}

#[test]
fn empty_binary_files() {
    for f in ["empty.perf.data", "empty.trace.dat"] {
        let p = path(f);
        fails(&["stats", &p], "empty file (0 bytes)");
        fails(
            &["stats", "--format", "perf-data", &p],
            "empty file (0 bytes)",
        );
        fails(
            &["stats", "--format", "trace-dat", &p],
            "empty file (0 bytes)",
        );
    }
}

#[test]
fn format_flag_overrides_detection_and_errors_name_the_offset() {
    let pd = path("stress-ng.perf.data");
    fails(
        &["stats", "--format", "trace-dat", &pd],
        "at byte offset 0: trace.dat: expected the tracing-data magic",
    );
    let txt = path("cyclictest.ftrace.txt");
    fails(
        &["stats", "--format", "perf-data", &txt],
        "at byte offset 0: perf.data: expected the perf.data magic \"PERFILE2\"",
    );
    let (code, out, _) = cidscope(&["stats", "--json", "--format", "perf-data", &pd]);
    assert_eq!(code, 0);
    assert!(out.contains("\"format\": \"perf.data\""));
    let (code, out, _) = cidscope(&[
        "stats",
        "--format",
        "trace-dat",
        &path("cyclictest.trace.dat"),
    ]);
    assert_eq!(code, 0);
    assert!(out.contains("format      trace.dat"), "{out}");
}

/// Every prefix (at a stride) and many corrupted copies of each binary format load or fail
/// with an offset; none panics.
#[test]
fn cuts_and_corruption_never_panic() {
    let opts = LoadOptions::default();
    for name in [
        "stress-ng.perf.data",
        "cut-record-pipe.perf.data",
        "cyclictest-v7.trace.dat",
    ] {
        let data = std::fs::read(capture(name)).unwrap();
        let mut cuts: Vec<usize> = (0..data.len()).step_by(data.len() / 97 + 1).collect();
        cuts.extend([1, 7, 15, 16, 17, 24, 103, 104, 105, data.len() - 1]);
        for cut in cuts {
            match sources::load_bytes(name, &data[..cut], &opts) {
                Ok(_) => {}
                Err(e) => assert!(
                    matches!(
                        e.location,
                        Location::Offset(_) | Location::File | Location::Line(_)
                    ),
                    "{e}"
                ),
            }
        }
        // Flip bytes in the metadata and in the data.
        let mut seed = 0x9e3779b97f4a7c15u64;
        let rounds: usize = std::env::var("CIDSCOPE_FUZZ_ROUNDS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(60);
        for _ in 0..rounds {
            let mut d = data.clone();
            for _ in 0..8 {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                let at =
                    (seed as usize) % d.len().min(if seed & 1 == 0 { 4096 } else { usize::MAX });
                d[at] ^= (seed >> 32) as u8 | 1;
            }
            let _ = sources::load_bytes(name, &d, &opts);
        }
    }
}

/// Corrupted ring-buffer pages (v6, uncompressed): the page walker keeps to the page.
#[test]
fn corrupt_pages_never_panic() {
    let data = std::fs::read(capture("cyclictest.trace.dat")).unwrap();
    let base = 5_529_600; // CPU 0's first page
    let rounds: usize = std::env::var("CIDSCOPE_FUZZ_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(15);
    let mut seed = 0x2545f4914f6cdd1du64;
    let mut d = data.clone();
    for _ in 0..rounds {
        d.copy_from_slice(&data);
        for _ in 0..64 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let at = base + (seed as usize) % (d.len() - base);
            d[at] = (seed >> 40) as u8;
        }
        let t = sources::load_bytes("pages", &d, &LoadOptions::default()).unwrap();
        assert_eq!(t.events.backward_steps(), 0);
    }
}

#[test]
fn zlib_compressed_v7_reads_like_zstd() {
    // The installed trace-cmd only has zstd; re-encode every compressed section and chunk of a
    // real zstd v7 file as zlib (what trace-cmd's zlib writer produces: compress2 streams) and
    // check the events are the same.
    let data = std::fs::read(capture("cyclictest-v7.trace.dat")).unwrap();
    let z = zlib_copy(&data);
    let a = sources::load_bytes("zstd", &data, &LoadOptions::default()).unwrap();
    let b = sources::load_bytes("zlib", &z, &LoadOptions::default()).unwrap();
    assert_eq!(a.events.len(), 20251);
    assert_eq!(a.events.len(), b.events.len());
    for (x, y) in a.events.iter().zip(&b.events) {
        assert_eq!((x.ts, x.cpu, x.tid), (y.ts, y.cpu, y.tid));
        assert_eq!(x.kind.static_name(), y.kind.static_name());
    }
    assert_eq!(
        a.events
            .iter()
            .filter(|e| e.kind == EventKind::Tick)
            .count(),
        b.events
            .iter()
            .filter(|e| e.kind == EventKind::Tick)
            .count()
    );
}

/// Rewrites a zstd trace.dat v7 as zlib. Offsets move, so the file is rebuilt: header with
/// "zlib", then every section re-encoded in place order, with option offsets patched.
fn zlib_copy(data: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let rd32 = |d: &[u8], o: usize| u32::from_le_bytes(d[o..o + 4].try_into().unwrap());
    let rd64 = |d: &[u8], o: usize| u64::from_le_bytes(d[o..o + 8].try_into().unwrap());
    let zstd = |b: &[u8], n: usize| {
        let mut out = vec![0u8; n];
        let k = ruzstd::decoding::FrameDecoder::new()
            .decode_all(b, &mut out)
            .unwrap();
        assert_eq!(k, n);
        out
    };
    let zlib = |b: &[u8]| {
        let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(b).unwrap();
        e.finish().unwrap()
    };
    // header: magic(10) "7\0" endian long page(4) "zstd\0" version\0 u64 options
    let mut p = 10 + 2 + 1 + 1 + 4;
    assert_eq!(&data[p..p + 5], b"zstd\0");
    p += 5;
    while data[p] != 0 {
        p += 1;
    }
    p += 1;
    let first_opts = rd64(data, p);
    let mut out = data[..18].to_vec();
    out.extend_from_slice(b"zlib\0test\0");
    let opts_ptr = out.len();
    out.extend_from_slice(&0u64.to_le_bytes());
    // Walk the sections reachable from the options chain, copying each and remembering
    // old → new offsets; then patch the offsets in the options.
    let mut map = std::collections::HashMap::new();
    let mut opt_sections = Vec::new();
    let mut next = first_opts;
    // First pass: collect option sections (decompressed) to learn section offsets.
    let mut section_offs = Vec::new();
    let mut buffers = Vec::new();
    while next != 0 {
        let o = next as usize;
        let flags = u16::from_le_bytes([data[o + 2], data[o + 3]]);
        let body = if flags & 1 != 0 {
            let (zs, us) = (rd32(data, o + 16) as usize, rd32(data, o + 20) as usize);
            zstd(&data[o + 24..o + 24 + zs], us)
        } else {
            data[o + 16..].to_vec()
        };
        let mut q = 0;
        loop {
            let id = u16::from_le_bytes([body[q], body[q + 1]]);
            let n = rd32(&body, q + 2) as usize;
            let b = &body[q + 6..q + 6 + n];
            match id {
                0 => {
                    next = rd64(b, 0);
                    break;
                }
                16..=21 => section_offs.push(rd64(b, 0)),
                3 => buffers.push(b.to_vec()),
                _ => {}
            }
            q += 6 + n;
        }
        opt_sections.push((o, flags, body));
    }
    // Copy metadata sections, re-encoded.
    for &off in &section_offs {
        let o = off as usize;
        let new = out.len() as u64;
        map.insert(off, new);
        let flags = u16::from_le_bytes([data[o + 2], data[o + 3]]);
        out.extend_from_slice(&data[o..o + 8]);
        if flags & 1 != 0 {
            let (zs, us) = (rd32(data, o + 16) as usize, rd32(data, o + 20) as usize);
            let raw = zstd(&data[o + 24..o + 24 + zs], us);
            let zz = zlib(&raw);
            out.extend_from_slice(&((zz.len() + 8) as u64).to_le_bytes());
            out.extend_from_slice(&(zz.len() as u32).to_le_bytes());
            out.extend_from_slice(&(us as u32).to_le_bytes());
            out.extend_from_slice(&zz);
        } else {
            let size = rd64(data, o + 8) as usize;
            out.extend_from_slice(&data[o + 8..o + 16 + size]);
        }
    }
    // Flyrecord data of the buffers: section header + per CPU chunk lists.
    let mut new_buffers = Vec::new();
    for b in &buffers {
        let fly = rd64(b, 0) as usize;
        let name_end = 8 + b[8..].iter().position(|&c| c == 0).unwrap() + 1;
        let clock_end = name_end + b[name_end..].iter().position(|&c| c == 0).unwrap() + 1;
        let mut nb = Vec::new();
        let new_fly = out.len() as u64;
        out.extend_from_slice(&data[fly..fly + 16]);
        nb.extend_from_slice(&new_fly.to_le_bytes());
        nb.extend_from_slice(&b[8..clock_end + 4]);
        let ncpu = rd32(b, clock_end + 4) as usize;
        nb.extend_from_slice(&(ncpu as u32).to_le_bytes());
        for k in 0..ncpu {
            let e = clock_end + 8 + k * 20;
            let cpu = rd32(b, e);
            let off = rd64(b, e + 4) as usize;
            let start = out.len();
            let count = rd32(data, off) as usize;
            out.extend_from_slice(&(count as u32).to_le_bytes());
            let mut q = off + 4;
            for _ in 0..count {
                let (zs, us) = (rd32(data, q) as usize, rd32(data, q + 4) as usize);
                let zz = zlib(&zstd(&data[q + 8..q + 8 + zs], us));
                out.extend_from_slice(&(zz.len() as u32).to_le_bytes());
                out.extend_from_slice(&(us as u32).to_le_bytes());
                out.extend_from_slice(&zz);
                q += 8 + zs;
            }
            nb.extend_from_slice(&cpu.to_le_bytes());
            nb.extend_from_slice(&(start as u64).to_le_bytes());
            nb.extend_from_slice(&((out.len() - start) as u64).to_le_bytes());
        }
        new_buffers.push(nb);
    }
    // One uncompressed options section with the patched options.
    let opts_at = out.len() as u64;
    out[opts_ptr..opts_ptr + 8].copy_from_slice(&opts_at.to_le_bytes());
    let mut body = Vec::new();
    let mut bufs = new_buffers.into_iter();
    for (_, _, ob) in &opt_sections {
        let mut q = 0;
        loop {
            let id = u16::from_le_bytes([ob[q], ob[q + 1]]);
            let n = rd32(ob, q + 2) as usize;
            let b = &ob[q + 6..q + 6 + n];
            q += 6 + n;
            match id {
                0 => break,
                16..=21 => {
                    body.extend_from_slice(&id.to_le_bytes());
                    body.extend_from_slice(&8u32.to_le_bytes());
                    body.extend_from_slice(&map[&rd64(b, 0)].to_le_bytes());
                }
                3 => {
                    let nb = bufs.next().unwrap();
                    body.extend_from_slice(&id.to_le_bytes());
                    body.extend_from_slice(&(nb.len() as u32).to_le_bytes());
                    body.extend_from_slice(&nb);
                }
                _ => {
                    body.extend_from_slice(&ob[q - 6 - n..q]);
                }
            }
        }
    }
    body.extend_from_slice(&0u16.to_le_bytes());
    body.extend_from_slice(&8u32.to_le_bytes());
    body.extend_from_slice(&0u64.to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
    out.extend_from_slice(&(body.len() as u64).to_le_bytes());
    out.extend_from_slice(&body);
    out
}

/// A compressed chunk that does not decompress ends its CPU's events there, however far the
/// workers had decoded its later chunks, and every split of the work gives the same trace: the
/// units decoded past the bad one are dropped, not merged.
#[test]
fn a_bad_chunk_ends_its_cpu_there_whatever_was_decoded_past_it() {
    let mut data = std::fs::read(capture("cyclictest-v7.trace.dat")).unwrap();
    let layout = cidscope::sources::trace_dat::layout::read(&data).unwrap();
    let cpu0 = layout.buffer.cpus[0].offset as usize;
    let u32_at = |d: &[u8], p: usize| u32::from_le_bytes(d[p..p + 4].try_into().unwrap());
    let count = u32_at(&data, cpu0);
    assert!(
        count > 8,
        "{count} chunks: the capture needs more for this test"
    );
    // chunk 6 (of `count`): its compressed bytes scrambled
    let mut p = cpu0 + 4;
    for _ in 0..5 {
        p += 8 + u32_at(&data, p) as usize;
    }
    let z = u32_at(&data, p) as usize;
    for b in &mut data[p + 8..p + 8 + z] {
        *b ^= 0x5a;
    }
    let dir = std::env::temp_dir().join(format!("cidscope-bad-chunk-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("bad-chunk.trace.dat");
    std::fs::write(&f, &data).unwrap();
    let load =
        |opts: LoadOptions| sources::load(&f, &opts).expect("the CPUs before the chunk load");
    let serial = load(LoadOptions {
        serial: true,
        ..Default::default()
    });
    let w: Vec<&str> = serial.warnings.iter().map(|w| w.message.as_str()).collect();
    let w = w.join("\n");
    assert!(
        w.contains(&format!(
            "CPU 0: compressed chunk 6 of {count} at byte offset {p} cannot be read"
        )),
        "{w}"
    );
    let last = |cpu: u16| {
        serial
            .events
            .iter()
            .filter(|e| e.cpu == cpu)
            .map(|e| e.ts)
            .max()
    };
    assert!(
        last(0) < last(1),
        "CPU 0 ends at the bad chunk: {:?} {:?}",
        last(0),
        last(1)
    );
    let whole = sources::load(&capture("cyclictest-v7.trace.dat"), &Default::default()).unwrap();
    let cpu1 = |t: &cidscope::events::Trace| t.events.iter().filter(|e| e.cpu == 1).count();
    assert_eq!(cpu1(&serial), cpu1(&whole), "CPU 1 loses nothing");
    for threads in [2, 3, 7] {
        let par = load(LoadOptions {
            threads: Some(threads),
            ..Default::default()
        });
        assert!(par.events == serial.events, "{threads} threads");
        assert_eq!(par.warnings, serial.warnings, "{threads} threads");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
