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

/// Each command's help lists its own flags: the replay's and the model's only where they apply.
#[test]
fn each_command_helps_with_its_own_flags() {
    let help = |args: &[&str]| String::from_utf8_lossy(&cidscope(args).stdout).into_owned();
    let replay = ["--format", "--skip-bad-lines", "--no-memory-check"];
    let model = ["--policy", "--compare", "--hz", "--kernel ", "--no-seed"];
    let look = ["--theme", "--keys"];
    let man = help(&["man", "--help"]);
    for flag in replay.iter().chain(&model).chain(&look) {
        assert!(!man.contains(flag), "man --help lists {flag}:\n{man}");
    }
    assert!(man.contains("--dir"), "{man}");
    for c in ["live", "attach", "demo", "completions"] {
        let h = help(&[c, "--help"]);
        for flag in replay.iter().chain(&model) {
            assert!(!h.contains(flag), "{c} --help lists {flag}");
        }
    }
    let stats = help(&["stats", "--help"]);
    for flag in replay.iter().chain(&model) {
        assert!(stats.contains(flag), "stats --help lacks {flag}");
    }
    let sim = help(&["sim", "--help"]);
    assert!(sim.contains("--policy") && sim.contains("--theme") && !sim.contains("--format"));
    let top = help(&["--help"]);
    for flag in replay.iter().chain(&model).chain(&look) {
        assert!(top.contains(flag), "--help lacks {flag}");
    }
    // what every command accepted before it listed only its own flags still parses
    let out = cidscope(&["man", "--policy", "lazy-compact", "--format", "ftrace"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `cidscope-X(1)` references in `pages` (roff) whose page is not among `names`.
fn dangling(pages: &[String], names: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for p in pages {
        let plain = p
            .replace("\\-", "-")
            .replace("\\fB", "")
            .replace("\\fR", "");
        let mut rest = plain.as_str();
        while let Some(i) = rest.find("cidscope-") {
            let tail = &rest[i + "cidscope-".len()..];
            let name: String = tail
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric())
                .collect();
            if tail[name.len()..].starts_with("(1)") && !names.contains(&format!("cidscope-{name}"))
            {
                out.push(format!("cidscope-{name}(1)"));
            }
            rest = &tail[name.len()..];
        }
    }
    out
}

#[test]
fn man_page_names_no_missing_page_lists_keys_and_exit_statuses() {
    let out = cidscope(&["man"]);
    assert!(out.status.success());
    let page = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(
        dangling(std::slice::from_ref(&page), &[]),
        Vec::<String>::new()
    );
    // the keys section: every action of the key table, with its name in keys.json
    let keys = &page[page.find(".SH KEYS").expect("a KEYS section")..];
    let keys = &keys[..keys[1..].find("\n.SH ").map_or(keys.len(), |i| i + 1)];
    for b in cidscope::ui::keys::default_bindings() {
        let name = b.action.name().replace('-', "\\-");
        assert!(keys.contains(&name), "KEYS lacks {}", b.action.name());
    }
    let exit = &page[page.find(".SH \"EXIT STATUS\"").expect("EXIT STATUS")..];
    for code in ["\n0\n", "\n1\n", "\n2\n"] {
        assert!(exit.contains(code), "exit status {code:?} missing:\n{exit}");
    }
    // with --dir: a page per command, and every page cidscope.1 names is there
    let dir = std::env::temp_dir().join(format!("cidscope-man-{}", std::process::id()));
    let out = cidscope(&["man", "--dir", dir.to_str().expect("utf-8")]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut names = Vec::new();
    let mut pages = Vec::new();
    for e in std::fs::read_dir(&dir).expect("dir").flatten() {
        let f = e.file_name().to_string_lossy().into_owned();
        names.push(f.trim_end_matches(".1").to_string());
        pages.push(std::fs::read_to_string(e.path()).expect("page"));
    }
    let _ = std::fs::remove_dir_all(&dir);
    for c in ["cidscope", "cidscope-stats", "cidscope-sim", "cidscope-vm"] {
        assert!(names.iter().any(|n| n == c), "no {c}.1 in {names:?}");
    }
    assert!(pages.iter().any(|p| p.contains("cidscope\\-sim\\fR(1)")));
    assert_eq!(dangling(&pages, &names), Vec::<String>::new());
}

/// The capture example is kept as it is written (no filling), so it pastes from `man`.
#[test]
fn man_page_keeps_the_capture_example_verbatim() {
    let page = String::from_utf8_lossy(&cidscope(&["man"]).stdout).into_owned();
    let help = String::from_utf8_lossy(&cidscope(&["--help"]).stdout).into_owned();
    let example: Vec<&str> = help
        .lines()
        .skip_while(|l| !l.starts_with("Capture on a test box"))
        .skip(1)
        .take_while(|l| !l.is_empty())
        .collect();
    assert_eq!(example.len(), 5, "{help}");
    let ex = page.find(".SH EXAMPLES").expect("EXAMPLES");
    let block = &page[ex..];
    let (nf, fi) = (
        block.find("\n.nf\n").expect(".nf"),
        block.find("\n.fi\n").expect(".fi"),
    );
    let block = &block[nf..=fi];
    for line in &example {
        let roff = line.replace('\\', "\\e").replace('-', "\\-");
        assert!(
            block.contains(&format!("\n{roff}\n")),
            "{line:?} not verbatim in:\n{block}"
        );
    }
    // and as man shows it, where groff is installed
    let Ok(mut groff) = std::process::Command::new("groff")
        .args(["-man", "-Tutf8"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
    else {
        return;
    };
    use std::io::Write;
    groff
        .stdin
        .take()
        .expect("stdin")
        .write_all(page.as_bytes())
        .expect("write");
    let shown = groff.wait_with_output().expect("groff");
    let shown = String::from_utf8_lossy(&shown.stdout);
    let shown: Vec<&str> = shown.lines().map(str::trim_end).collect();
    for line in &example {
        assert!(
            shown.iter().any(|s| s.ends_with(line)),
            "man shows {line:?} otherwise"
        );
    }
}
