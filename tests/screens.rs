//! What the screen must show, in a real terminal (tmux) at 80×24, 120×40 and 200×50: the
//! triggers of `--compare`, a weight of 3 of 64 as bars, the key hints on a capture that names
//! its kernel, the why of the selected process at 80×24, the overview of a 64-CPU capture on
//! one screen, the cidmask strip, go-to, and a presenter's demo showing the lanes its narration
//! names. Each screen is kept in the test's target directory (`screens/NAME-WxH.txt`).

mod common;

use common::tmux::Tmux;
use std::time::Duration;

const SIZES: [(u16, u16); 3] = [(80, 24), (120, 40), (200, 50)];
const WORKERS: &str = "traces/v5-workers.ftrace.txt";
const C64: &str = "traces/kernels/k6.18.15-c64-workers.ftrace.txt.zst";

/// A session of `args` at `cols`×`rows`, once its first frame is drawn.
fn open(args: &str, cols: u16, rows: u16) -> Tmux {
    let bin = env!("CARGO_BIN_EXE_cidscope");
    let t = Tmux::start_sized("screens", &format!("{bin} {args}; sleep 60"), cols, rows);
    until(&t, "? keys", "the first frame");
    // the whole capture read (the status bar names the window's time per column)
    until(&t, "/col", "the end of the load");
    // and the models' replay, which runs off the drawing path: a model's lane set is titled
    // with its figures once it is in (`replaying…` in the title meanwhile, where it fits)
    if args.contains("--compare") || args.contains("--policy") {
        until(&t, "model: predicted", "the models' replay");
    }
    t
}

/// Waits (2 minutes at most: a debug build under load) until the screen holds `needle`.
fn until(t: &Tmux, needle: &str, what: &str) -> String {
    t.wait_for_within(needle, Duration::from_secs(120), what)
}

/// Types `keys` one by one, then waits for `needle`; keeps the screen as `name` and returns it.
fn after(t: &Tmux, keys: &[&str], needle: &str, name: &str, (c, r): (u16, u16)) -> String {
    t.keys(keys);
    let s = until(t, needle, name);
    // a last frame after the keys
    std::thread::sleep(Duration::from_millis(400));
    let s = if t.screen().contains(needle) {
        t.screen()
    } else {
        s
    };
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("screens");
    std::fs::create_dir_all(&dir).expect("dir");
    std::fs::write(dir.join(format!("{name}-{c}x{r}.txt")), &s).expect("keep the screen");
    s
}

/// The lines of the lane set titled `title` up to the next set (or the diff row).
fn set_lines<'a>(s: &'a str, title: &str) -> Vec<&'a str> {
    s.lines()
        .skip_while(|l| !l.starts_with(&format!("▸ {title}")))
        .skip(1)
        // up to the next set, the diff row or the next pane's border (a task row starts with
        // spaces too, a border with one)
        .take_while(|l| {
            !l.starts_with('▸') && !l.starts_with("diff") && !l.starts_with(" ▾") && {
                let mut c = l.chars();
                !(c.next() == Some(' ') && c.next().is_some_and(|x| x != ' '))
            }
        })
        .collect()
}

fn marks_row<'a>(s: &'a str, title: &str) -> &'a str {
    set_lines(s, title)
        .into_iter()
        .find(|l| l.starts_with("marks"))
        .unwrap_or_else(|| panic!("no marks row under {title}:\n{s}"))
}

#[test]
fn tick_and_resume_triggers_are_drawn() {
    for size in SIZES {
        let t = open(
            &format!("{WORKERS} --compare observed,lazy-compact,resume-batch,owner-mode"),
            size.0,
            size.1,
        );
        let s = after(
            &t,
            &["r"],
            "resume-triggered compaction 1 of",
            "triggers",
            size,
        );
        // the sets with a compaction at the cursor are in view, each drawn as its trigger
        let lazy = marks_row(&s, "lazy-compact");
        let batch = marks_row(&s, "resume-batch");
        assert!(lazy[5..].contains('t'), "{s}");
        assert!(batch[5..].contains('r'), "{s}");
        // S only where the trigger is unknown: never here
        assert!(!lazy[5..].contains('S') && !batch[5..].contains('S'), "{s}");
        // and on the lanes of the CPUs they scanned
        let lanes = set_lines(&s, "resume-batch");
        assert!(
            lanes
                .iter()
                .filter(|l| !l.starts_with("marks"))
                .any(|l| l.chars().skip(5).any(|c| c == 'r')),
            "{s}"
        );
    }
}

#[test]
fn a_weight_of_3_of_64_reads_as_bars() {
    for size in SIZES {
        let t = open(C64, size.0, size.1);
        let mut keys = vec!["/", "t", "i", "d", ":", "6", "2", "7", "Enter"];
        keys.extend(["+"; 10]);
        let s = after(&t, &keys, "event 4462 of 9224", "weight64", size);
        let s = if s.contains("above this scale") {
            s
        } else {
            until(&t, "above this scale", "the bound stated")
        };
        let lines: Vec<&str> = s.lines().collect();
        let top = lines
            .iter()
            .position(|l| l.contains("bound 64 possible CPUs: above this scale"))
            .expect("the bound stated");
        // the scale's top is the data's, a few CIDs, not 64
        let label: u32 = lines[top]
            .split_whitespace()
            .next()
            .and_then(|n| n.parse().ok())
            .expect("a labelled top");
        assert!((3..=4).contains(&label), "{}", lines[top]);
        let graph: Vec<&&str> = lines[top + 1..]
            .iter()
            .take_while(|l| !l.starts_with(' ') || l.starts_with("     "))
            .collect();
        // bars: the bottom row full over most of the window, and on a taller graph more rows
        // of them (at 80×24 the top row also carries the curves and the stated bound)
        let bottom = graph.last().expect("a bottom row");
        let full = bottom.chars().filter(|&c| c == '█').count();
        assert!(
            full * 2 >= usize::from(size.0) - 8,
            "{full} full bars:\n{}",
            lines.join("\n")
        );
        let rows = graph.iter().filter(|l| l.contains('█')).count();
        if size.1 >= 40 {
            assert!(rows >= 3, "bars on {rows} rows:\n{}", lines.join("\n"));
        }
    }
}

#[test]
fn hints_stay_on_a_capture_that_names_its_kernel() {
    for size in SIZES {
        let t = open(C64, size.0, size.1);
        let s = after(&t, &["+", "+"], "lazy-compact", "hints", size);
        let lines: Vec<&str> = s.lines().filter(|l| !l.trim().is_empty()).collect();
        let footer = lines.last().expect("a footer");
        assert!(
            footer.contains("? keys") && footer.contains("q quit"),
            "{s}"
        );
        // the title names the model and the status bar keeps the window and its zoom
        assert!(lines[0].contains("lazy-compact 6.14"), "{s}");
        let status = lines[lines.len() - 2];
        assert!(status.contains("/col"), "{s}");
        if size.0 >= 120 {
            assert!(lines[0].contains("kernel 6.18.15"), "{s}");
        }
        // and how well it predicts: by itself, then with the steps the inference placed
        if size.0 >= 200 {
            assert!(
                lines[0].contains("predicted ") && lines[0].contains("inferred step"),
                "{s}"
            );
        }
    }
}

#[test]
fn the_why_of_the_selected_process_is_in_view() {
    for size in SIZES {
        let t = open(C64, size.0, size.1);
        // the process's next CID change
        let s = after(&t, &["c"], "CID change 1 of", "why", size);
        let why: Vec<&str> = s.lines().filter(|l| l.contains("why [")).collect();
        let observed = why
            .iter()
            .find(|l| l.contains("why [observed]"))
            .unwrap_or_else(|| panic!("no observed why:\n{s}"));
        assert!(observed.contains("CID"), "{s}");
        assert!(why.iter().any(|l| l.contains("why [lazy-compact]")), "{s}");
        // it is about the selected process: the title's
        assert!(s.lines().next().unwrap_or("").contains("tgid 576"), "{s}");
    }
}

#[test]
fn the_overview_holds_a_64_cpu_capture_on_one_screen() {
    for size in SIZES {
        let t = open(C64, size.0, size.1);
        let s = after(
            &t,
            &["w"],
            "overview (observed): 64 CPUs",
            "overview64",
            size,
        );
        let title = s
            .lines()
            .find(|l| l.contains("overview (observed)"))
            .expect("title");
        // every CPU shown: no window of them
        assert!(!title.contains("shown)"), "{s}");
        assert!(
            s.lines().any(|l| l.starts_with("CPU56")),
            "the last rows are on screen:\n{s}"
        );
        // Enter zooms into the region: the lanes are back
        let s = after(&t, &["Enter"], "zoomed into", "overview64-enter", size);
        assert!(s.contains("per-CPU CID slots"), "{s}");
    }
}

#[test]
fn the_cidmask_strip() {
    for size in SIZES {
        let t = open(C64, size.0, size.1);
        let mut keys = vec!["M", "/", "t", "i", "d", ":", "6", "2", "7", "Enter"];
        keys.extend(["+"; 10]);
        let s = after(&t, &keys, "event 4462 of 9224", "cidmask", size);
        let lines: Vec<&str> = s.lines().collect();
        let at = lines
            .iter()
            .position(|l| l.contains("cidmask of tgid 576"))
            .unwrap_or_else(|| panic!("no strip:\n{s}"));
        // a row per bit (or two), set bits drawn where CIDs are held
        let rows: Vec<&&str> = lines[at + 1..]
            .iter()
            .take_while(|l| l.starts_with("bit") || l.starts_with(|c: char| c.is_ascii_digit()))
            .collect();
        assert!(!rows.is_empty(), "{s}");
        assert!(
            rows.iter()
                .any(|l| l.contains('▀') || l.contains('▄') || l.contains(' ')),
            "{s}"
        );
        // e walks the kernel's steps of a CID change
        let s = after(
            &t,
            &["c", "e"],
            "the kernel's steps of a CID change",
            "steps",
            size,
        );
        assert!(
            s.contains("cidmask before") && s.contains("cidmask after"),
            "{s}"
        );
    }
}

#[test]
fn go_to_a_time_and_an_event() {
    for size in SIZES {
        let t = open(WORKERS, size.0, size.1);
        let mut keys = vec![":"];
        keys.extend(["+", "5", "7", ".", "3", "9", "m", "s", "Enter"]);
        let s = after(&t, &keys, "at event 161 of 7980", "goto", size);
        assert!(s.contains("event 161 of 7980"), "{s}");
        let s = after(
            &t,
            &[":", "#", "4", "0", "0", "0", "Enter"],
            "at event 4000 of 7980",
            "goto-event",
            size,
        );
        assert!(s.contains("event 4000 of 7980"), "{s}");
        // Ctrl-O back to where the first jump landed
        let s = after(&t, &["C-o"], "jump history", "goto-back", size);
        assert!(s.contains("event 161 of 7980"), "{s}");
    }
}

#[test]
fn the_presenter_shows_the_lanes_its_narration_names() {
    for size in SIZES {
        let t = open("demo workers --present", size.0, size.1);
        // step 1 asks; ] reveals it: the observed lanes and lazy-compact's, which it names
        until(&t, "what happens next?", "the question");
        let s = after(&t, &["]"], "A process begins", "present", size);
        for set in ["▸ observed", "▸ lazy-compact model"] {
            assert!(s.contains(set), "{set}:\n{s}");
        }
        assert!(!s.contains("▸ owner-mode"), "{s}");
        // on to the owner-mode step: its set, and only it
        // on, step by step (each asked, then shown), to the owner-mode step
        for _ in 0..12 {
            if t.screen().contains("owner-mode switches to per-CPU") {
                break;
            }
            t.keys(&["]"]);
            std::thread::sleep(Duration::from_millis(300));
        }
        let s = after(
            &t,
            &[],
            "owner-mode switches to per-CPU",
            "present-owner",
            size,
        );
        assert!(s.contains("▸ owner-mode model"), "{s}");
        assert!(!s.contains("▸ lazy-compact model"), "{s}");
        // the CPUs of the set, both of them
        assert!(
            s.lines().filter(|l| l.starts_with("CPU")).count() >= 2,
            "{s}"
        );
    }
}
