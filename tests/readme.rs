//! Every command in the README and in docs/ runs here, and the key table of docs/keys.md is the
//! bindings'. A fenced block's kind says how it runs:
//!
//! * `sh`: in bash (`set -e`), from the repository's root, with this build's `cidscope` first on
//!   `PATH`;
//! * `tui`: each line in tmux at 120×40: it must draw its first frame (the footer's `? keys`)
//!   and quit with status 0 on `q`;
//! * `sh-root`: as `sh`, as root only (tracefs, perf);
//! * `sh-vm`: as `sh`, where `CIDSCOPE_VM_KERNEL` names a kernel (CI sets it);
//! * `sh-build`: the README's two commands: `cargo run --release` is the binary without
//!   arguments (opened in tmux as a `tui` line), `.ci/run` is CI's entry, which runs these tests
//!   (it is checked to end with `cargo test`, not run from inside them);
//! * `text` (or no kind): output, never a command — a `cidscope` command there is an error.

mod common;

use cidscope::ui::keys::{default_bindings, markdown_table};
use common::tmux::Tmux;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// A fenced block: its file, first line, kind and text.
struct Block {
    file: String,
    line: usize,
    kind: String,
    text: String,
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn pages() -> Vec<PathBuf> {
    let mut v = vec![root().join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .expect("docs/")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    v.extend(docs);
    v
}

fn blocks() -> Vec<Block> {
    let mut out = Vec::new();
    for p in pages() {
        let text = std::fs::read_to_string(&p).expect("page");
        let file = p.strip_prefix(root()).unwrap_or(&p).display().to_string();
        let mut open: Option<Block> = None;
        for (i, l) in text.lines().enumerate() {
            match (&mut open, l.strip_prefix("```")) {
                (None, Some(kind)) => {
                    open = Some(Block {
                        file: file.clone(),
                        line: i + 1,
                        kind: kind.trim().to_string(),
                        text: String::new(),
                    })
                }
                (Some(_), Some(_)) => out.extend(open.take()),
                (Some(b), None) => {
                    b.text.push_str(l);
                    b.text.push('\n');
                }
                (None, None) => {}
            }
        }
        assert!(open.is_none(), "{file}: a fenced block is not closed");
    }
    out
}

fn of_kind(kind: &str) -> Vec<Block> {
    blocks().into_iter().filter(|b| b.kind == kind).collect()
}

/// A directory holding `cidscope`, this build's binary.
fn bin_dir() -> PathBuf {
    // made once per test process: the tests run in parallel and must not race on the link
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("readme-bin-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("bin dir");
        let link = dir.join("cidscope");
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_cidscope"), &link).expect("symlink");
        dir
    })
    .clone()
}

fn path_with_bin() -> String {
    format!(
        "{}:{}",
        bin_dir().display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

/// Runs a block in bash; panics with the block, its place and its output when it fails.
fn run_sh(b: &Block) {
    let start = Instant::now();
    let out = Command::new("timeout")
        .args(["300", "bash", "-c"])
        .arg(format!("set -e\n{}", b.text))
        .current_dir(root())
        .env("PATH", path_with_bin())
        .env("NO_COLOR", "1")
        .output()
        .expect("bash");
    assert!(
        out.status.success(),
        "{}:{}: the ```{} block failed ({}):\n{}\nstdout:\n{}\nstderr:\n{}",
        b.file,
        b.line,
        b.kind,
        out.status,
        b.text,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    eprintln!(
        "ran {}:{} ({} lines) in {:.1} s",
        b.file,
        b.line,
        b.text.lines().count(),
        start.elapsed().as_secs_f64()
    );
}

/// Opens a TUI command line in tmux: its first frame, then `q` ends it with status 0.
fn run_tui(file: &str, line: usize, cmd: &str) {
    let t = Tmux::start_sized(
        "readme",
        &format!(
            "cd {} && PATH={} {cmd}; echo EXITED=$?; sleep 60",
            root().display(),
            path_with_bin()
        ),
        120,
        40,
    );
    let start = Instant::now();
    loop {
        let s = t.screen();
        if s.contains("? keys") {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "{file}:{line}: `{cmd}` drew no first frame:\n{s}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    t.keys(&["q"]);
    let s = t.wait_for("EXITED=");
    assert!(s.contains("EXITED=0"), "{file}:{line}: `{cmd}`:\n{s}");
    eprintln!("opened {file}:{line}: {cmd}");
}

#[test]
fn keys_page_holds_the_key_table_of_the_bindings() {
    let page = std::fs::read_to_string(root().join("docs/keys.md")).expect("docs/keys.md");
    let table = markdown_table(&default_bindings());
    assert!(
        page.contains(&table),
        "docs/keys.md's key table differs from the bindings; expected:\n{table}"
    );
}

#[test]
fn the_readme_fits_on_a_page_and_links_pages_that_exist() {
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README.md");
    assert!(
        readme.len() <= 15 * 1024,
        "README.md is {} bytes",
        readme.len()
    );
    for page in pages() {
        let text = std::fs::read_to_string(&page).expect("page");
        let dir = page.parent().expect("a directory");
        for (i, _) in text.match_indices("](") {
            let target: String = text[i + 2..]
                .chars()
                .take_while(|&c| c != ')' && c != '#')
                .collect();
            if target.starts_with("http") || target.is_empty() {
                continue;
            }
            assert!(
                dir.join(&target).exists(),
                "{}: the link to {target} leads nowhere",
                page.display()
            );
        }
    }
}

/// Every block is of a kind this test runs or of output; no command hides in output.
#[test]
fn every_block_is_run_or_is_output() {
    let kinds = [
        "sh", "tui", "sh-root", "sh-vm", "sh-build", "text", "", "json",
    ];
    let mut n = 0;
    for b in blocks() {
        assert!(
            kinds.contains(&b.kind.as_str()),
            "{}:{}: a block of kind {:?}; expected one of {kinds:?}",
            b.file,
            b.line,
            b.kind
        );
        if ["text", "", "json"].contains(&b.kind.as_str()) {
            for l in b.text.lines() {
                let l = l.trim_start().trim_start_matches("$ ");
                let command = ["cidscope ", "cargo "].iter().any(|c| {
                    l.strip_prefix(c).is_some_and(|rest| {
                        rest.starts_with(|ch: char| {
                            ch.is_ascii_alphanumeric() || "-./".contains(ch)
                        })
                    })
                });
                assert!(
                    !command,
                    "{}:{}: a command in a ```{} block (not run): {l}",
                    b.file, b.line, b.kind
                );
            }
        } else {
            n += 1;
        }
    }
    assert!(n >= 10, "only {n} blocks of commands");
}

#[test]
fn sh_blocks_run() {
    for b in of_kind("sh") {
        run_sh(&b);
    }
}

#[test]
fn root_blocks_run_as_root() {
    if !common::tracefs::is_root() {
        eprintln!("not root: the ```sh-root blocks (tracefs, perf) are not run");
        return;
    }
    if !Path::new("/sys/kernel/tracing/available_events").exists() {
        let _ = Command::new("mount")
            .args(["-t", "tracefs", "nodev", "/sys/kernel/tracing"])
            .status();
    }
    for b in of_kind("sh-root") {
        run_sh(&b);
    }
}

#[test]
fn vm_blocks_run_where_a_kernel_is_given() {
    if std::env::var_os("CIDSCOPE_VM_KERNEL").is_none() {
        eprintln!("CIDSCOPE_VM_KERNEL is not set: the ```sh-vm blocks are not run (CI runs them)");
        return;
    }
    for b in of_kind("sh-vm") {
        run_sh(&b);
    }
}

#[test]
fn tui_lines_open_and_quit() {
    for b in of_kind("tui") {
        for (k, l) in b.text.lines().enumerate() {
            if !l.trim().is_empty() {
                run_tui(&b.file, b.line + 1 + k, l.trim());
            }
        }
    }
}

#[test]
fn the_two_commands() {
    let build = of_kind("sh-build");
    assert_eq!(
        build.len(),
        1,
        "one ```sh-build block: the README's two commands"
    );
    let cmds: Vec<&str> = build[0]
        .text
        .lines()
        .map(|l| l.split('#').next().unwrap_or("").trim())
        .filter(|l| !l.is_empty())
        .collect();
    assert_eq!(cmds, ["cargo run --release", ".ci/run"]);
    // `cargo run --release` runs the binary without arguments: the bundled capture
    run_tui(&build[0].file, build[0].line + 1, "cidscope");
    // `.ci/run` is CI's entry and runs these tests: it must end in `cargo test`
    let ci = std::fs::read_to_string(root().join(".ci/run")).expect(".ci/run");
    let last = ci
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or_default();
    assert_eq!(last.trim(), "cargo test");
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(root().join(".ci/run"))
        .expect("meta")
        .permissions()
        .mode();
    assert!(mode & 0o111 != 0, ".ci/run is not executable");
}
