//! Teaching demos: every demo builds and renders its narration (snapshots); stepping and playing
//! move the narration with the cursor.

use cidscope::demo::DEMOS;
use cidscope::ui::keys::Action;
use cidscope::ui::run::demo_app as app_for;
use cidscope::ui::session::demo::Demo;
use cidscope::ui::view;
use ratatui::{Terminal, backend::TestBackend};

fn render(app: &cidscope::ui::app::App) -> String {
    let mut term = Terminal::new(TestBackend::new(120, 40)).expect("terminal");
    term.draw(|f| view::draw(f, app)).expect("draw");
    term.backend().to_string()
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
