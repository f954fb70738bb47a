//! TUI rendering with ratatui's TestBackend, checked against insta snapshots: each view at
//! 120×40, and each again at 80×24, where what does not fit must be said on screen.

mod common;

use cidscope::sources::{LoadOptions, load, load_bytes};
use cidscope::ui::app::App;
use cidscope::ui::keys::Action;
use cidscope::ui::view;
use ratatui::layout::Rect;
use ratatui::{Terminal, backend::TestBackend};
use std::path::Path;

fn app(file: &str) -> App {
    let t = load(Path::new(file), &LoadOptions::default()).expect("load");
    App::new(t)
}

fn render(app: &App) -> String {
    render_at(app, 120, 40)
}

fn render_at(app: &App, w: u16, h: u16) -> String {
    let mut term = Terminal::new(TestBackend::new(w, h)).expect("terminal");
    term.draw(|f| view::draw(f, app)).expect("draw");
    term.backend().to_string()
}

/// The buffer with its colours (see `common::styled_dump`).
fn render_styled_at(app: &App, w: u16, h: u16) -> String {
    let mut term = Terminal::new(TestBackend::new(w, h)).expect("terminal");
    term.draw(|f| view::draw(f, app)).expect("draw");
    common::styled_dump(term.backend().buffer())
}

/// An app planned for a `w`×`h` screen (the lane window follows the cursor for that size).
fn sized(mut a: App, w: u16, h: u16) -> App {
    a.set_screen(Rect::new(0, 0, w, h));
    a
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
        s.contains("lazy-compact model: predicted 3492/3492, 3492/3492 with 0 inferred steps"),
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
    assert!(s.contains("CPUs 8-15"), "{s}");
    insta::assert_snapshot!(s);
}

// ---- 80×24: each view, and what it says about what does not fit

/// The main view at 80×24: both CPUs of hackbench, the time labels on their own row.
#[test]
fn small_main_view() {
    let mut a = sized(app("traces/hackbench-pipe.ftrace.txt"), 80, 24);
    for _ in 0..3 {
        a.apply(Action::ZoomIn);
    }
    for _ in 0..40 {
        a.apply(Action::StepNext);
    }
    let s = render_at(&a, 80, 24);
    assert!(s.contains("CPU0") && s.contains("CPU1"), "{s}");
    insta::assert_snapshot!(s);
}

/// The compare view at 80×24: all three sets fit (one row per CPU), with the diff row.
#[test]
fn small_compare_view() {
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
    let mut a = sized(App::new(t), 80, 24);
    a.state.set_models(runs);
    for _ in 0..6 {
        a.apply(Action::NextCidChange);
    }
    for _ in 0..6 {
        a.apply(Action::ZoomIn);
    }
    let s = render_at(&a, 80, 24);
    // each set shown, or named in the notice row with the key that shows it
    for set in ["observed", "lazy-compact", "owner-mode"] {
        assert!(
            s.contains(&format!("▸ {set}")) || s.contains(&format!("below: {set}")),
            "{set} missing:\n{s}"
        );
    }
    assert!(s.contains("diff"), "{s}");
    insta::assert_snapshot!(s);
}

/// `sim` on 128 CPUs at 80×24: a window of the CPUs, which follows the scan batch, and the
/// pane's title says which CPUs are shown and how to scroll.
#[test]
fn small_sim_view_follows_the_scan_batch() {
    use cidscope::model::policies::PolicyKind;
    use cidscope::sim::{SimConfig, Workload, simulate};
    let mut cfg = SimConfig::new(PolicyKind::ResumeBatch, 128, Workload::Cyclictest);
    cfg.threads = Some(64);
    cfg.duration_ns = 300_000_000;
    let out = simulate(&cfg);
    let mut a = sized(App::new(out.trace), 80, 24);
    a.state.models.show_observed = false;
    a.state.set_models(vec![out.run]);
    a.apply(Action::NextScan);
    for _ in 0..2000 {
        let at = a.state.models.views[0].scan_at(a.state.cursor_ts());
        if at.as_ref().is_some_and(|(p, _, _)| p.done == 5) {
            break;
        }
        a.apply(Action::StepNext);
    }
    let s = render_at(&a, 80, 24);
    assert!(s.contains("shown of 128"), "{s}");
    // batch 5 scans CPUs 32-39: they are in the window
    for cpu in [32, 39] {
        assert!(
            s.contains(&format!("CPU{cpu} ")),
            "CPU{cpu} not shown:\n{s}"
        );
    }
    insta::assert_snapshot!(s);
    // scrolling by hand moves the window; it stays until the cursor moves
    a.apply(Action::ScrollPageDown);
    let s = render_at(&a, 80, 24);
    assert!(!s.contains("CPU32 "), "{s}");
    a.apply(Action::StepNext);
    let s = render_at(&a, 80, 24);
    assert!(s.contains("CPU32 ") || s.contains("CPU40 "), "{s}");
}

/// A live-like view at 80×24 (kernel lanes and the threads' own reads, as `live --attach`
/// shows them) with the cidmask weight drawn.
#[test]
fn small_live_like_view() {
    use cidscope::events::EventKind;
    use cidscope::sources::live::RseqSample;
    use cidscope::ui::samples::Samples;
    let t = load(
        Path::new("traces/hackbench-pipe.ftrace.txt"),
        &LoadOptions::default(),
    )
    .expect("load");
    // the workload's threads (tgid 3082) read every CID they got, 1 us later
    let pid = 3082;
    let samples: Vec<RseqSample> = t
        .events
        .iter()
        .filter(|e| t.tasks.get(&e.tid).and_then(|m| m.tgid) == Some(pid))
        .filter_map(|e| match e.kind {
            EventKind::RseqUpdate { mm_cid, .. } => Some(RseqSample {
                ts: e.ts + 1_000,
                tid: e.tid,
                cpu: e.cpu,
                cid: mm_cid,
            }),
            _ => None,
        })
        .collect();
    let ncpus = t.ncpus_hint.unwrap_or(2);
    let mut s = Samples::new(pid, true);
    s.add(&samples, &t, pid, ncpus, true);
    let mut a = sized(App::new(t), 80, 24);
    a.state.samples = Some(s);
    a.state.refresh_summaries();
    for _ in 0..4 {
        a.apply(Action::ZoomIn);
    }
    for _ in 0..30 {
        a.apply(Action::NextCidChange);
    }
    let out = render_at(&a, 80, 24);
    assert!(out.contains("▸ kernel: rseq_update events"), "{out}");
    assert!(out.contains("▸ user space"), "{out}");
    assert!(out.contains('█'), "the weight is drawn:\n{out}");
    insta::assert_snapshot!(out);
}

/// The legend (`L`): every glyph as the lanes draw it, with its colour, at 80×24 and 120×40.
#[test]
fn legend_pane() {
    let mut a = sized(app("traces/hackbench-pipe.ftrace.txt"), 80, 24);
    a.apply(Action::ToggleLegend);
    let s = render_styled_at(&a, 80, 24);
    assert!(s.contains("legend — L closes"), "{s}");
    insta::assert_snapshot!("legend_pane_80x24", s);
    let mut a = sized(app("traces/v5-workers.ftrace.txt"), 120, 40);
    let runs = cidscope::model::policies::replay_all(
        &a.state.trace,
        &[cidscope::model::policies::PolicyKind::LazyCompact],
        &Default::default(),
    );
    a.state.set_models(runs);
    a.apply(Action::ToggleLegend);
    // scrolled to the colours of this view
    for _ in 0..60 {
        a.apply(Action::PaneDown);
    }
    let s = render_styled_at(&a, 120, 40);
    assert!(s.contains("colours in this view"), "{s}");
    assert!(s.contains("━━ lazy-compact"), "{s}");
    insta::assert_snapshot!("legend_pane_scrolled", s);
}

/// The help at 80×24: it scrolls, and says so; nothing of it is cut.
#[test]
fn small_help_scrolls() {
    let mut a = sized(app("traces/hackbench-pipe.ftrace.txt"), 80, 24);
    a.apply(Action::ToggleHelp);
    let first = render_at(&a, 80, 24);
    assert!(first.contains("lines 1-22 of"), "{first}");
    assert!(!first.contains('…'), "{first}");
    a.apply(Action::ScrollPageDown);
    let second = render_at(&a, 80, 24);
    assert!(second.contains("lines 21-42 of"), "{second}");
    insta::assert_snapshot!(second);
    a.apply(Action::StepNext);
    assert!(!a.state.overlays.show_help, "any other key closes it");
}

/// An alarm explained: after `x` on a duplicate CID the cursor pane names both holders, their
/// CPUs and since when, and what it means; both holders are drawn in the alarm style, and so
/// is a CID at its bound.
#[test]
fn alarm_explanation() {
    let t = load_bytes(
        "dup.txt",
        b"# entries-in-buffer/entries-written: 7/7   #P:2\n\
          <idle>-0 (-------) [000] .....  1.000000: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=w next_pid=11 next_prio=120\n\
          <idle>-0 (-------) [001] .....  1.000000: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=w next_pid=12 next_prio=120\n\
          w-11 (     10) [000] .....  1.000000: rseq_update: cpu_id=0 node_id=0 mm_cid=0\n\
          w-12 (     10) [001] .....  1.000010: rseq_update: cpu_id=1 node_id=0 mm_cid=0\n\
          w-12 (     10) [001] .....  1.000500: rseq_update: cpu_id=1 node_id=0 mm_cid=2\n\
          w-12 (     10) [001] .....  1.000800: rseq_update: cpu_id=1 node_id=0 mm_cid=1\n\
          w-11 (     10) [000] .....  1.001000: rseq_update: cpu_id=0 node_id=0 mm_cid=0\n",
        &LoadOptions::default(),
    )
    .expect("trace");
    let mut a = sized(App::new(t), 80, 24);
    a.apply(Action::NextAlarm);
    assert_eq!(a.state.overlays.message.as_deref(), Some("alarm 1 of 2"));
    let plain = render_at(&a, 80, 24);
    assert!(
        plain.contains("⚠ alarm: 2 running tasks of tgid 10 hold CID 0 at once"),
        "{plain}"
    );
    assert!(
        plain.contains("w-11 on CPU0 holds  CID 0 , since +0 ns"),
        "{plain}"
    );
    assert!(
        plain.contains("w-12 on CPU1 holds  CID 0 , since +10.000 us"),
        "{plain}"
    );
    assert!(plain.contains("rseq promises a CID unique"), "{plain}");
    // the holders' lane cells are in the alarm style, not their CID's colour
    let mut term = Terminal::new(TestBackend::new(80, 24)).expect("terminal");
    term.draw(|f| view::draw(f, &a)).expect("draw");
    let buf = term.backend().buffer().clone();
    let theme = &a.theme;
    let lane_cell = |cpu: u16| {
        let y = (0..24)
            .find(|&y| buf[(0, y)].symbol() == "C" && buf[(3, y)].symbol() == cpu.to_string())
            .expect("lane row");
        buf[(7, y)].clone()
    };
    for cpu in [0, 1] {
        assert_eq!(lane_cell(cpu).bg, theme.alarm, "CPU{cpu}:\n{plain}");
    }
    insta::assert_snapshot!("alarm_explanation_duplicate", render_styled_at(&a, 80, 24));
    a.apply(Action::NextAlarm);
    let plain = render_at(&a, 80, 24);
    assert!(
        plain.contains("⚠ alarm: CID 2 of tgid 10 is at or above its bound 2 (possible CPUs)"),
        "{plain}"
    );
    insta::assert_snapshot!("alarm_explanation_out_of_range", plain);
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
    assert!(render(&a).contains("no tracepoint records them"));
}

/// Thread lanes at 80×24 for a process of 62 threads: a window of the threads under the shared
/// time row and the set's marks row, the border title saying which are shown; ↑/↓ and
/// Shift-↑/↓ scroll it, and a cursor on a thread out of sight brings its row into view.
#[test]
fn small_thread_lanes_scroll_and_follow_the_cursor_task() {
    use cidscope::ui::selection::MmSel;
    let mut a = sized(app("traces/v5-workers.ftrace.txt"), 80, 24);
    let mm = a.state.timeline.mm_of_tgid(1216).expect("tgid 1216");
    a.state.select(MmSel::Mm(mm));
    a.apply(Action::ToggleThreads);
    let n = a
        .state
        .derived
        .threads
        .as_ref()
        .expect("thread lanes")
        .tids
        .len();
    assert!(n > 20, "{n} threads");
    let s = render_at(&a, 80, 24);
    let window = s
        .lines()
        .find_map(|l| l.split("thread lanes 1-").nth(1))
        .and_then(|r| r.split(' ').next())
        .and_then(|k| k.parse::<usize>().ok())
        .unwrap_or_else(|| panic!("no window in the title:\n{s}"));
    assert!(s.contains(&format!("shown of {n}: ↑ ↓ scroll")), "{s}");
    assert!(s.contains("time  |+") && s.contains("marks "), "{s}");
    insta::assert_snapshot!(s);
    a.apply(Action::ScrollDown);
    assert_eq!(a.state.view.thread_scroll, 1);
    a.apply(Action::ScrollPageDown);
    assert_eq!(a.state.view.thread_scroll, 1 + window);
    assert!(render_at(&a, 80, 24).contains(&format!("thread lanes {}-", 2 + window)));
    a.apply(Action::ScrollUp);
    assert_eq!(a.state.view.thread_scroll, window);
    // the cursor on an event of the last thread: its row comes into view
    let last = *a
        .state
        .derived
        .threads
        .as_ref()
        .expect("thread lanes")
        .tids
        .last()
        .expect("a thread");
    let i = (0..a.state.trace.events.len())
        .find(|&i| a.state.trace.events.get(i).is_some_and(|e| e.tid == last))
        .expect("an event of the last thread");
    a.state.set_cursor(i);
    a.follow_lanes();
    assert_eq!(a.state.view.thread_scroll, n - window);
    assert!(render_at(&a, 80, 24).contains(&format!("{last} ")));
    // the CPU lanes keep their own scroll
    a.apply(Action::ToggleThreads);
    assert!(render_at(&a, 80, 24).contains("per-CPU CID slots"));
}
