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
