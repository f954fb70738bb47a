//! Broken perf.data of the kinds the perf corpus reads (compressed records, other versions,
//! other containers): refused with the byte offset and what was expected, or loaded with a
//! warning naming where what came before ends; never raw bytes in a message, never a panic.

mod common;
use common::*;

fn tmp(name: &str, data: &[u8]) -> String {
    let p = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::write(&p, data).expect("write");
    p.to_str().unwrap().to_string()
}

fn refused(args: &[&str], expect: &str) -> String {
    let (code, out, err) = cidscope(args);
    assert_eq!(code, 2, "{args:?}: exit {code}; {out} {err}");
    assert!(err.contains(expect), "{args:?}: {err:?} lacks {expect:?}");
    assert!(!err.contains("panicked"), "{err}");
    // one line, printable: no raw bytes
    assert!(
        err.trim_end().chars().all(|c| !c.is_control()),
        "raw bytes in {err:?}"
    );
    err
}

fn record(t: u32, body: &[u8]) -> Vec<u8> {
    let mut v = t.to_le_bytes().to_vec();
    v.extend_from_slice(&0u16.to_le_bytes());
    v.extend_from_slice(&((8 + body.len()) as u16).to_le_bytes());
    v.extend_from_slice(body);
    v
}

/// The bytes of traces/pv-z-pipe.perf.data before its first compressed record (header,
/// attrs, features, tracing data), at byte offset 100220.
fn pipe_prefix() -> Vec<u8> {
    let d = std::fs::read(capture("pv-z-pipe.perf.data")).expect("capture");
    assert_eq!(
        &d[100220..100224],
        &81u32.to_le_bytes(),
        "a COMPRESSED record there"
    );
    d[..100220].to_vec()
}

/// A zstd frame perf would write (never ended) holding `data` in one raw block.
fn zstd_raw(data: &[u8]) -> Vec<u8> {
    let mut v = vec![0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x00];
    v.extend_from_slice(&((data.len() as u32) << 3).to_le_bytes()[..3]);
    v.extend_from_slice(data);
    v
}

#[test]
fn perf_data_version_1_is_read_as_version_2() {
    // the version-1 header is the version-2 one under the magic PERFFILE (hotspot's
    // perf.data.true.v1 reads so, as perf reads it): a damaged one is refused as such
    let mut v1 = b"PERFFILE".to_vec();
    v1.extend_from_slice(&104u64.to_le_bytes());
    v1.resize(200, 0);
    let f = tmp("old.perf.data", &v1);
    refused(
        &["stats", &f],
        &format!("{f}: at byte offset 24: perf.data: expected the header's attrs section offset"),
    );
    let mut d = std::fs::read(capture("cyclictest.perf.data")).expect("capture");
    d[..8].copy_from_slice(b"PERFFILE");
    let f = tmp("v1.perf.data", &d);
    let (code, out, err) = cidscope(&["stats", "--json", &f]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(v["events"], 12494);
}

#[test]
fn what_is_no_perf_data_is_named_by_its_bytes_in_hex() {
    // bzip2, which the input layer does not decompress: the reader, made to read it, says what
    // it found without printing it
    let f = tmp(
        "z.perf.data.bz2",
        &[0x42, 0x5a, 0x68, 0x39, 0x31, 0x41, 0x59, 0x26, 0, 0],
    );
    refused(
        &["stats", "--format", "perf-data", &f],
        "expected the perf.data magic \"PERFILE2\", found the bytes 42 5a 68 39 31 41 59 26",
    );
    // gzip is decompressed by content first; a broken one is refused as gzip
    let f = tmp(
        "z.perf.data.gz",
        &[0x1f, 0x8b, 0x08, 0x00, 0xff, 0x00, 0x13, 0x37, 0, 0],
    );
    refused(&["stats", "--format", "perf-data", &f], "gzip data:");
}

#[test]
fn damaged_compressed_data_is_refused_at_its_record() {
    let d = std::fs::read(capture("pv-z-pipe.perf.data")).expect("capture");
    // the zstd magic of the first compressed record overwritten
    let mut bad = d.clone();
    bad[100228..100232].copy_from_slice(b"ABCD");
    let f = tmp("badmagic.perf.data", &bad);
    refused(
        &["stats", &f],
        &format!(
            "{f}: at byte offset 100220: perf.data: the PERF_RECORD_COMPRESSED here (perf record -z): expected a zstd frame (magic 28 b5 2f fd), found 41 42 43 44"
        ),
    );
    // a block header claiming a reserved block type
    let mut bad = d;
    bad[100228 + 6..100228 + 9].copy_from_slice(&[0xff, 0xff, 0xff]);
    let f = tmp("badblock.perf.data", &bad);
    refused(
        &["stats", &f],
        &format!("{f}: at byte offset 100220: perf.data: the PERF_RECORD_COMPRESSED here"),
    );
}

#[test]
fn a_damaged_record_inside_compressed_data_is_refused_with_both_offsets() {
    let mut d = pipe_prefix();
    // decompresses to a record header declaring 4 bytes
    let inner = record(9, &[]);
    let mut inner4 = inner.clone();
    inner4[6] = 4;
    d.extend(record(81, &zstd_raw(&inner4)));
    let f = tmp("badinner.perf.data", &d);
    refused(
        &["stats", &f],
        &format!(
            "{f}: at byte offset 100220: perf.data: the record at byte offset 0 of the records decompressed from the PERF_RECORD_COMPRESSED here declares a size of 4 bytes"
        ),
    );
}

#[test]
fn a_sample_cut_inside_compressed_data_is_counted_with_its_place() {
    let mut d = pipe_prefix();
    // a whole record whose body is too short for the sample format of the file
    d.extend(record(81, &zstd_raw(&record(9, &[0; 8]))));
    let f = tmp("shortsample.perf.data", &d);
    let (code, out, err) = cidscope(&["stats", "--json", &f]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    let w: Vec<&str> = v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|w| w.as_str())
        .collect();
    assert!(
        w.iter().any(|w| w.starts_with("bad-records-skipped: ")
            && w.contains("byte offset 0 of the records decompressed from the PERF_RECORD_COMPRESSED at byte offset 100220")
            && w.contains("ends before its PERF_SAMPLE_")),
        "{w:?}"
    );
}

#[test]
fn a_compressed_file_cut_mid_record_keeps_what_came_before() {
    let d = std::fs::read(capture("pv-z-file.perf.data")).expect("capture");
    // file mode keeps the formats after the data: cut, nothing decodes
    let f = tmp("zcut.perf.data", &d[..89500]);
    refused(
        &["stats", &f],
        "at byte offset 89500: perf.data: expected the table of",
    );
    // pipe mode: the cut record is lost, the ones before load
    let d = std::fs::read(capture("pv-z-pipe.perf.data")).expect("capture");
    let full = stats(&capture("pv-z-pipe.perf.data"));
    let f = tmp("zpcut.perf.data", &d[..d.len() - 300]);
    let (code, out, err) = cidscope(&["stats", "--json", &f]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert!(v["events"].as_u64() <= full["events"].as_u64());
    assert!(v["events"].as_u64() > Some(0));
    assert!(
        v["warnings"].as_array().unwrap().iter().any(|w| w
            .as_str()
            .is_some_and(|w| w.starts_with("truncated-record: "))),
        "{v}"
    );
}
