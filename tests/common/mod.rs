//! Helpers shared by the integration tests: captures in traces/ (binary readers) and styled
//! buffer dumps (TUI snapshots).
#![allow(dead_code)]

pub mod agreement;
pub mod tmux;
pub mod tracefs;

use ratatui::buffer::Buffer;
use ratatui::style::{Color, Modifier};
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
    cidscope_env(args, &[])
}

/// [`cidscope`] with variables added to its environment.
pub fn cidscope_env(args: &[&str], vars: &[(&str, &str)]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_cidscope"))
        .args(args)
        .envs(vars.iter().copied())
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

/// The buffer as text with its styles: each line lists runs of equal style as
/// `«fg/bg/mods»text`, so a snapshot shows colours, not only characters.
pub fn styled_dump(buf: &Buffer) -> String {
    let mut out = String::new();
    for y in 0..buf.area.height {
        let mut prev: Option<(Color, Color, Modifier)> = None;
        for x in 0..buf.area.width {
            let c = &buf[(x, y)];
            let st = (c.fg, c.bg, c.modifier);
            if prev != Some(st) {
                out.push_str(&format!(
                    "«{}/{}{}»",
                    short(c.fg),
                    short(c.bg),
                    mods(c.modifier)
                ));
                prev = Some(st);
            }
            out.push_str(c.symbol());
        }
        out.push('\n');
    }
    out
}

fn short(c: Color) -> String {
    match c {
        Color::Reset => "-".into(),
        Color::Rgb(r, g, b) => format!("#{r:02x}{g:02x}{b:02x}"),
        Color::Indexed(i) => format!("@{i}"),
        other => format!("{other:?}").to_lowercase(),
    }
}

fn mods(m: Modifier) -> String {
    if m.is_empty() {
        String::new()
    } else {
        format!("/{m:?}").replace("Modifier(", "").replace(')', "")
    }
}
