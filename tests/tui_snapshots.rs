//! TUI rendering at 120×40 with ratatui's TestBackend, checked against insta snapshots.

use cidscope::sources::{LoadOptions, load};
use cidscope::ui::app::App;
use cidscope::ui::keys::Action;
use cidscope::ui::view;
use ratatui::{Terminal, backend::TestBackend};
use std::path::Path;

fn app(file: &str) -> App {
    let t = load(Path::new(file), &LoadOptions::default()).expect("load");
    App::new(t)
}

fn render(app: &App) -> String {
    let mut term = Terminal::new(TestBackend::new(120, 40)).expect("terminal");
    term.draw(|f| view::draw(f, app)).expect("draw");
    term.backend().to_string()
}

#[test]
fn main_view_hackbench() {
    let mut a = app("traces/hackbench-pipe.ftrace.txt");
    for _ in 0..3 {
        a.apply(Action::ZoomIn);
    }
    for _ in 0..40 {
        a.apply(Action::StepNext);
    }
    insta::assert_snapshot!(render(&a));
}

#[test]
fn help_overlay() {
    let mut a = app("traces/hackbench-pipe.ftrace.txt");
    a.apply(Action::ToggleHelp);
    insta::assert_snapshot!(render(&a));
}

#[test]
fn all_tasks_view_without_tgids() {
    let a = app("traces/cyclictest.ftrace.txt");
    insta::assert_snapshot!(render(&a));
}

#[test]
fn rseq_accounting_pane() {
    let mut a = app("traces/hackbench-pipe.ftrace.txt");
    a.apply(Action::ToggleAccounting);
    insta::assert_snapshot!(render(&a));
}

/// The compare view: what the kernel did, lazy-compact and owner-mode in aligned lanes under
/// one cursor, the diff row, and the models' weight curves over the observed bars.
#[test]
fn compare_view() {
    use cidscope::model::policies::{Params, PolicyKind, replay_all};
    let t = load(
        Path::new("traces/v5-workers.ftrace.txt"),
        &LoadOptions::default(),
    )
    .expect("load");
    let runs = replay_all(
        &t,
        &[PolicyKind::LazyCompact, PolicyKind::OwnerMode],
        &Params::default(),
    );
    let mut a = App::new(t);
    a.state.set_models(runs);
    for _ in 0..6 {
        a.apply(Action::NextCidChange);
    }
    for _ in 0..6 {
        a.apply(Action::ZoomIn);
    }
    let s = render(&a);
    assert!(
        s.contains("lazy-compact model: 3492/3492 rseq_updates predicted (100.0%)"),
        "{s}"
    );
    assert!(s.contains("owner-mode model"));
    assert!(s.contains("diff "));
    insta::assert_snapshot!(s);
}

/// The scan-batch widget: a resume-batch scan of 128 CPUs in batches of 8, at its second batch,
/// with the CPUs of that batch highlighted in the lanes.
#[test]
fn scan_batch_widget() {
    use cidscope::model::policies::PolicyKind;
    use cidscope::sim::{SimConfig, Workload, simulate};
    let mut cfg = SimConfig::new(PolicyKind::ResumeBatch, 128, Workload::Cyclictest);
    cfg.threads = Some(64);
    cfg.duration_ns = 300_000_000;
    let out = simulate(&cfg);
    let mut a = App::new(out.trace);
    a.state.models.show_observed = false;
    a.state.set_models(vec![out.run]);
    a.apply(Action::NextScan);
    a.apply(Action::NextScan);
    // step until the scan is in its second batch
    for _ in 0..400 {
        let at = a.state.models.views[0].scan_at(a.state.cursor_ts());
        if at.as_ref().is_some_and(|(p, _, _)| p.done == 2) {
            break;
        }
        a.apply(Action::StepNext);
    }
    let (p, cpus, _) = a.state.models.views[0]
        .scan_at(a.state.cursor_ts())
        .expect("a scan in progress");
    assert_eq!((p.done, p.of), (2, 16));
    assert_eq!(cpus, (8..16).collect::<Vec<u16>>());
    for _ in 0..6 {
        a.apply(Action::ZoomIn);
    }
    let mut term = Terminal::new(TestBackend::new(120, 40)).expect("terminal");
    term.draw(|f| view::draw(f, &a)).expect("draw");
    let buf = term.backend().buffer().clone();
    // the labels of CPUs 8-15 are highlighted, CPU 7's is not
    let label_row = |cpu: u16| {
        (0..buf.area.height).find(|&y| {
            let s: String = (0..6).map(|x| buf[(x, y)].symbol().to_string()).collect();
            s.trim_end() == format!("CPU{cpu}")
        })
    };
    let reversed = |y: u16| {
        buf[(0, y)]
            .modifier
            .contains(ratatui::style::Modifier::REVERSED)
    };
    assert!(reversed(label_row(8).expect("CPU8 shown")));
    assert!(!reversed(label_row(7).expect("CPU7 shown")));
    let s = term.backend().to_string();
    assert!(s.contains("scan batch 2 of 16"), "{s}");
    assert!(s.contains("CPUs 8-15"));
    insta::assert_snapshot!(s);
}

/// The process picker over the compare capture: every process with rseq activity, filtered by
/// a typed substring, the cursor's row highlighted.
#[test]
fn process_picker() {
    use cidscope::ui::overlays::Mode;
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    let mut a = app("traces/v5-workers.ftrace.txt");
    a.apply(Action::PickProcess);
    let whole = render(&a);
    assert!(whole.contains("rseq_updates"), "{whole}");
    assert!(whole.contains("all tasks"), "{whole}");
    for c in "mcw".chars() {
        cidscope::ui::picker::key(
            &mut a.state,
            &KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE),
        );
    }
    let s = render(&a);
    assert!(matches!(a.state.overlays.mode, Mode::Picker(_)));
    assert!(s.contains("filter: mcw"), "{s}");
    insta::assert_snapshot!(s);
}

/// Thread lanes: a row per thread of the selected process with its CID over time and the CPU
/// of each run, observed and a model's, under the same cursor.
#[test]
fn thread_lanes_view() {
    use cidscope::model::policies::{Params, PolicyKind, replay_all};
    let t = load(
        Path::new("traces/v5-workers.ftrace.txt"),
        &LoadOptions::default(),
    )
    .expect("load");
    let runs = replay_all(&t, &[PolicyKind::LazyCompact], &Params::default());
    let mut a = App::new(t);
    a.state.set_models(runs);
    a.apply(Action::ToggleThreads);
    for _ in 0..6 {
        a.apply(Action::NextCidChange);
    }
    for _ in 0..5 {
        a.apply(Action::ZoomIn);
    }
    let th = a
        .state
        .derived
        .threads
        .as_ref()
        .expect("thread lanes built");
    assert!(th.tids.len() >= 2, "{:?}", th.tids);
    assert_eq!(th.models.len(), 1, "the model's thread lanes too");
    let s = render(&a);
    assert!(s.contains("thread lanes"), "{s}");
    assert!(s.contains("lazy-compact model"), "{s}");
    insta::assert_snapshot!("thread_lanes_view_with_model", s);
    // back to the CPU lanes
    a.apply(Action::ToggleThreads);
    assert!(a.state.derived.threads.is_none());
    assert!(render(&a).contains("per-CPU CID slots"));
    // without a model, two rows per thread fit: the CPU of each run under its CIDs
    let mut a = app("traces/v5-workers.ftrace.txt");
    a.apply(Action::ToggleThreads);
    for _ in 0..6 {
        a.apply(Action::NextCidChange);
    }
    for _ in 0..10 {
        a.apply(Action::ZoomIn);
    }
    let s = render(&a);
    assert!(s.contains("▏CPU1"), "{s}");
    insta::assert_snapshot!("thread_lanes_view", s);
}

/// "Why" in the cursor pane at a CID change of the compare capture: the observed cause, each
/// model's cause for its own CID and its nearest compaction with what it freed and lazied.
#[test]
fn why_at_the_cursor() {
    use cidscope::model::policies::{Params, PolicyKind, replay_all};
    let t = load(
        Path::new("traces/v5-workers.ftrace.txt"),
        &LoadOptions::default(),
    )
    .expect("load");
    let runs = replay_all(&t, &[PolicyKind::LazyCompact], &Params::default());
    let mut a = App::new(t);
    a.state.set_models(runs);
    // to a tick-triggered compaction, then on to the next CID change
    a.apply(Action::NextTick);
    a.apply(Action::NextCidChange);
    let s = render(&a);
    assert!(s.contains("why [observed] task "), "{s}");
    assert!(s.contains("[lazy-compact] nearest compaction"), "{s}");
    assert!(s.contains("freed "), "{s}");
    insta::assert_snapshot!(s);
    // without a model, the pane says what the capture cannot tell
    let mut a = app("traces/v5-workers.ftrace.txt");
    a.apply(Action::NextCidChange);
    assert!(render(&a).contains("not in the capture"));
}
