//! Captures side by side in a real terminal (tmux) at 120×40 and 200×50: `cidscope A B` stacks
//! B's lane set under A's, named by B's kernel, on the time axis shared from each workload's
//! start; scrubbing moves both; the cursor pane shows both captures' CID metrics. An
//! experiment's directory opens the same way.

mod common;

use common::tmux::Tmux;
use std::time::Duration;

const STOCK: &str = "traces/kernels/k6.18.15-c16-burst.ftrace.txt.zst";
const SEED: &str = "traces/kernels/k6.18.15-cidscope-seed000-c16-burst.ftrace.txt.zst";

fn until(t: &Tmux, needle: &str) -> String {
    t.wait_for_within(needle, Duration::from_secs(120), "")
}

/// The lane rows of the set titled `title` (up to the next set title or the diff row).
fn set_rows<'a>(s: &'a str, title: &str) -> Vec<&'a str> {
    s.lines()
        .skip_while(|l| !l.starts_with(&format!("▸ {title}")))
        .skip(1)
        .take_while(|l| !l.starts_with('▸') && !l.starts_with("diff") && !l.starts_with(' '))
        .filter(|l| l.starts_with("CPU"))
        .collect()
}

fn open(args: &str, cols: u16, rows: u16) -> Tmux {
    let bin = env!("CARGO_BIN_EXE_cidscope");
    let t = Tmux::start_sized(
        "compare",
        &format!("cd {}; {bin} {args}; sleep 60", env!("CARGO_MANIFEST_DIR")),
        cols,
        rows,
    );
    until(&t, "/col");
    t
}

fn keep(name: &str, s: &str) {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("screens");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(name), s).unwrap();
}

#[test]
fn two_captures_stack_and_scrub_together() {
    for (c, r) in [(120, 40), (200, 50)] {
        let t = open(&format!("{STOCK} {SEED}"), c, r);
        until(&t, "metrics [6.18.15-cidscope-seed000]");
        // the first capture's metrics come from a thread once it is read
        let s = until(&t, "metrics [6.18.15+deb13-cloud-amd64] max CID");
        keep(&format!("compare-{c}x{r}.txt"), &s);
        // the second capture's set, under its kernel's name, with its workload's CIDs
        assert!(s.contains("▸ 6.18.15-cidscope-seed000: tgid"), "{s}");
        let seed = set_rows(&s, "6.18.15-cidscope-seed000");
        assert!(!seed.is_empty(), "{s}");
        assert!(
            seed.iter()
                .any(|l| l[5..].chars().any(|ch| ch.is_ascii_digit())),
            "no CID in the second set:\n{s}"
        );
        // both captures' metrics in the cursor pane
        assert!(
            s.contains("metrics [6.18.15+deb13-cloud-amd64] max CID"),
            "{s}"
        );
        assert!(
            s.contains("metrics [6.18.15-cidscope-seed000] max CID"),
            "{s}"
        );
        // scrubbing (zoom in, then go to another time) moves the second set too
        t.keys(&["+", ":", "30%", "Enter"]);
        std::thread::sleep(Duration::from_millis(800));
        let a = t.screen();
        t.keys(&[":", "75%", "Enter"]);
        std::thread::sleep(Duration::from_millis(800));
        let b = t.screen();
        keep(&format!("compare-scrubbed-{c}x{r}.txt"), &b);
        assert_ne!(a, b);
        assert_ne!(
            set_rows(&a, "observed"),
            set_rows(&b, "observed"),
            "{a}\n{b}"
        );
        assert_ne!(
            set_rows(&a, "6.18.15-cidscope-seed000"),
            set_rows(&b, "6.18.15-cidscope-seed000"),
            "{a}\n{b}"
        );
        t.keys(&["q"]);
    }
}

#[test]
fn an_experiment_directory_opens_its_runs_side_by_side() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("compare-exp");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    for (src, dst) in [
        (STOCK, "a-c16-r1.ftrace.txt.zst"),
        (SEED, "b-c16-r1.ftrace.txt.zst"),
    ] {
        std::fs::copy(root.join(src), dir.join(dst)).unwrap();
    }
    // a failed run is not opened
    let json = serde_json::json!({
        "experiment": {"kernels": ["A", "B"], "cpus": [16], "repeat": 2},
        "runs": [
            {"kernel": "A", "cpus": 16, "repeat": 1, "status": "ok", "file": "a-c16-r1.ftrace.txt.zst"},
            {"kernel": "B", "cpus": 16, "repeat": 1, "status": "ok", "file": "b-c16-r1.ftrace.txt.zst"},
            {"kernel": "B", "cpus": 16, "repeat": 2, "status": "failed", "file": "missing.txt"}
        ]
    });
    std::fs::write(dir.join("experiment.json"), json.to_string()).unwrap();
    let t = open(dir.to_str().unwrap(), 120, 40);
    let s = until(&t, "metrics [6.18.15-cidscope-seed000]");
    assert!(s.contains("▸ 6.18.15-cidscope-seed000: tgid"), "{s}");
    t.keys(&["q"]);
    // a directory that is no experiment says so
    let (code, _, err) = common::cidscope(&[root.join("traces").to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("a directory opens as an experiment"), "{err}");
}
