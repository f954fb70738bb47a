//! Teaching demos: every demo builds and renders its narration (snapshots); stepping and playing
//! move the narration with the cursor.

use cidscope::demo::DEMOS;
use cidscope::ui::keys::Action;
use cidscope::ui::run::demo_app as app_for;
use cidscope::ui::session::demo::Demo;
use cidscope::ui::view;
use ratatui::{Terminal, backend::TestBackend};

fn render(app: &cidscope::ui::app::App) -> String {
    render_at(app, 120, 40)
}

fn render_at(app: &cidscope::ui::app::App, w: u16, h: u16) -> String {
    let mut term = Terminal::new(TestBackend::new(w, h)).expect("terminal");
    term.draw(|f| view::draw(f, app)).expect("draw");
    term.backend().to_string()
}

/// At 80×24 every demo shows each of its lane sets, or says which are hidden and how to reach
/// them; and scrolling reaches each hidden set.
#[test]
fn every_demo_at_80x24_shows_its_sets_or_says_which_are_hidden() {
    use cidscope::ui::widgets::lane_stack::{lane_sets, set_name};
    for d in DEMOS {
        let setup = (d.build)().unwrap_or_else(|e| panic!("{}: {e}", d.name));
        let mut app = app_for(d.name, setup);
        app.set_screen(ratatui::layout::Rect::new(0, 0, 80, 24));
        let s = render_at(&app, 80, 24);
        let names: Vec<String> = lane_sets(&app.state)
            .into_iter()
            .map(|k| set_name(&app.state, k))
            .collect();
        let hidden: Vec<&String> = names
            .iter()
            .filter(|n| !s.contains(&format!("▸ {n}")))
            .collect();
        if !hidden.is_empty() {
            assert!(
                s.contains("lane sets below") || s.contains("lane set below"),
                "{s}"
            );
            for n in &hidden {
                assert!(
                    s.contains(n.as_str()),
                    "{}: {n} neither shown nor named:\n{s}",
                    d.name
                );
            }
            // ↓ scrolls to each of them in turn
            for n in &hidden {
                let mut seen = false;
                for _ in 0..names.len() * 200 {
                    app.apply(Action::ScrollDown);
                    if render_at(&app, 80, 24).contains(&format!("▸ {n}")) {
                        seen = true;
                        break;
                    }
                }
                assert!(seen, "{}: ↓ never shows {n}", d.name);
            }
        }
        insta::assert_snapshot!(format!("demo_{}_80x24", d.name), s);
    }
}

/// Keys other than the demo's move the cursor, and the narration follows it: after `g` it is
/// before the first step, after `G` at the last.
#[test]
fn the_narration_follows_the_cursor_moved_by_other_keys() {
    let d = &DEMOS[0];
    let mut app = app_for(d.name, (d.build)().expect("demo"));
    let n = app.session_as::<Demo>().expect("demo").steps.len();
    for _ in 0..n {
        app.apply(Action::NextStep);
    }
    assert!(render(&app).contains(&format!("step {n} of {n}")));
    app.apply(Action::First);
    let s = render(&app);
    assert!(s.contains(&format!("before step 1 of {n}")), "{s}");
    app.apply(Action::NextStep);
    assert!(render(&app).contains(&format!("step 1 of {n}")));
    app.apply(Action::Last);
    assert!(render(&app).contains(&format!("step {n} of {n}")));
}

#[test]
fn narration_of_every_demo() {
    for d in DEMOS {
        let setup = (d.build)().unwrap_or_else(|e| panic!("{}: {e}", d.name));
        let mut app = app_for(d.name, setup);
        let n = app.session_as::<Demo>().map_or(0, |s| s.steps.len());
        let first = render(&app);
        assert!(
            first.contains(&format!("demo {} — step 1 of {n}", d.name)),
            "{first}"
        );
        insta::assert_snapshot!(format!("demo_{}_step1", d.name), first);
        app.apply(Action::NextStep);
        let second = render(&app);
        assert!(second.contains("step 2 of"), "{second}");
        insta::assert_snapshot!(format!("demo_{}_step2", d.name), second);
    }
}

#[test]
fn stepping_and_playing() {
    let d = &DEMOS[0];
    let mut app = app_for(d.name, (d.build)().expect("demo"));
    let steps = app.session_as::<Demo>().expect("demo").steps.clone();
    // ] and [ visit every step in time order and stop at the ends
    for (k, s) in steps.iter().enumerate() {
        assert_eq!(app.session_as::<Demo>().expect("demo").current, k);
        assert!(app.state.cursor_ts() >= s.ts);
        app.apply(Action::NextStep);
    }
    assert_eq!(
        app.session_as::<Demo>().expect("demo").current,
        steps.len() - 1
    );
    app.apply(Action::PrevStep);
    assert_eq!(
        app.session_as::<Demo>().expect("demo").current,
        steps.len() - 2
    );
    // playing from the start passes the second step's moment and the narration follows
    let (demo, st) = app.session_mut::<Demo>().expect("demo");
    demo.go_to_step(0, st);
    app.apply(Action::TogglePause);
    assert!(app.session_as::<Demo>().expect("demo").playing);
    app.apply(Action::Faster);
    let target = steps[1].ts;
    for _ in 0..100_000 {
        if app.state.cursor_ts() >= target {
            break;
        }
        let (demo, st) = app.session_mut::<Demo>().expect("demo");
        demo.play(100_000_000, st);
    }
    assert!(app.state.cursor_ts() >= target);
    assert!(app.session_as::<Demo>().expect("demo").current >= 1);
}

#[test]
fn demo_list_and_unknown_names() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_cidscope"))
        .args(["demo", "--list"])
        .output()
        .expect("run");
    assert!(out.status.success());
    let s = String::from_utf8_lossy(&out.stdout);
    for d in DEMOS {
        assert!(s.contains(d.name), "{s}");
    }
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_cidscope"))
        .args(["demo", "nope"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("demo --list"));
}
