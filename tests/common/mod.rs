//! Helpers shared by the integration tests of the binary readers.
#![allow(dead_code)]

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

pub fn traces() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("traces")
}

/// The path of a capture in `traces/`; `NAME.gz` files are decompressed into the test tmpdir.
pub fn capture(name: &str) -> PathBuf {
    let p = traces().join(name);
    if p.exists() {
        return p;
    }
    let gz = traces().join(format!("{name}.gz"));
    assert!(gz.exists(), "missing capture {name} (and {name}.gz)");
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    if !out.exists() {
        let mut d = flate2::read::GzDecoder::new(std::fs::File::open(&gz).unwrap());
        let mut buf = Vec::new();
        d.read_to_end(&mut buf).unwrap();
        let tmp = out.with_extension(format!("tmp{}", std::process::id()));
        std::fs::write(&tmp, buf).unwrap();
        std::fs::rename(&tmp, &out).unwrap();
    }
    out
}

pub fn truth(name: &str) -> serde_json::Value {
    let p = traces().join(format!("{name}.truth.json"));
    serde_json::from_slice(&std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display())))
        .unwrap()
}

/// Runs `cidscope ARGS`; returns (exit code, stdout, stderr).
pub fn cidscope(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_cidscope"))
        .args(args)
        .output()
        .expect("run cidscope");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `cidscope stats --json FILE` (must succeed).
pub fn stats(path: &Path) -> serde_json::Value {
    let p = path.to_str().unwrap();
    let (code, out, err) = cidscope(&["stats", "--json", p]);
    assert_eq!(code, 0, "cidscope stats --json {p} failed: {err}");
    serde_json::from_str(&out).unwrap()
}
