//! The command line itself: help that teaches, completions and the man page from the same
//! definitions, and output that survives a closed pipe.

use std::process::{Command, Stdio};

fn cidscope(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_cidscope"))
        .args(args)
        .output()
        .expect("run cidscope")
}

#[test]
fn help_teaches_with_examples() {
    let out = cidscope(&["--help"]);
    assert!(out.status.success());
    let s = String::from_utf8_lossy(&out.stdout);
    for needle in [
        "Examples:",
        "cidscope stats --json",
        "record-tgid",
        "Exit status",
    ] {
        assert!(s.contains(needle), "--help lacks {needle:?}");
    }
}

#[test]
fn completions_and_man_page() {
    for shell in ["bash", "zsh", "fish"] {
        let out = cidscope(&["completions", shell]);
        assert!(out.status.success(), "{shell}");
        let s = String::from_utf8_lossy(&out.stdout);
        assert!(
            s.contains("cidscope") && s.contains("stats"),
            "{shell}: {s}"
        );
    }
    let out = cidscope(&["man"]);
    assert!(out.status.success());
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(s.contains(".TH cidscope 1"), "{s}");
    assert!(s.contains("stats"));
}

#[test]
fn a_closed_pipe_is_not_a_crash() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_cidscope"))
        .args(["stats", "--json", "traces/hackbench-pipe.ftrace.txt"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    drop(child.stdout.take());
    let out = child.wait_with_output().expect("wait");
    assert_eq!(out.status.code(), Some(0));
    assert!(!String::from_utf8_lossy(&out.stderr).contains("panicked"));
}

#[test]
fn usage_errors_exit_2() {
    let out = cidscope(&["--no-such-flag"]);
    assert_eq!(out.status.code(), Some(2));
    let out = cidscope(&["stats"]);
    assert_eq!(out.status.code(), Some(2));
}
