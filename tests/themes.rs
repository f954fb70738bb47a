//! Every shipped theme rendered (colours included) and checked against a snapshot; a partial
//! theme falls back to default; an invalid theme exits 2 naming the file and the key.

mod common;

use cidscope::sources::{LoadOptions, load};
use cidscope::ui::app::App;
use cidscope::ui::theme::{BUILTIN, Theme};
use cidscope::ui::view;
use ratatui::{Terminal, backend::TestBackend};
use std::path::Path;
use std::process::Command;

fn render_with(theme: Theme) -> String {
    let t = load(
        Path::new("traces/hog-threads.ftrace.txt"),
        &LoadOptions::default(),
    )
    .expect("load");
    let mut app = App::new(t);
    app.theme = theme;
    let mut term = Terminal::new(TestBackend::new(80, 24)).expect("terminal");
    term.draw(|f| view::draw(f, &app)).expect("draw");
    common::styled_dump(term.backend().buffer())
}

#[test]
fn each_builtin_theme() {
    for (name, _) in BUILTIN {
        let theme = Theme::load(name).expect("builtin theme");
        insta::assert_snapshot!(format!("theme_{name}"), render_with(theme));
    }
}

#[test]
fn no_color_theme() {
    insta::assert_snapshot!("theme_no_color", render_with(Theme::monochrome()));
}

#[test]
fn partial_theme_from_a_file() {
    let dir = std::env::temp_dir().join(format!("cidscope-theme-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let p = dir.join("mine.json");
    std::fs::write(
        &p,
        r##"{ "alarm": "#123456", "cid_palette": ["#010203"] }"##,
    )
    .expect("write");
    let t = Theme::load(p.to_str().expect("utf8")).expect("partial theme loads");
    let d = Theme::default();
    assert_eq!(t.alarm, ratatui::style::Color::Rgb(0x12, 0x34, 0x56));
    assert_eq!(t.cid_palette, vec![ratatui::style::Color::Rgb(1, 2, 3)]);
    assert_eq!((t.lost, t.weight, t.bound), (d.lost, d.weight, d.bound));
}

#[test]
fn invalid_theme_exits_2_naming_file_and_key() {
    let dir = std::env::temp_dir().join(format!("cidscope-badtheme-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let p = dir.join("bad.json");
    std::fs::write(&p, r#"{ "weight": "cyan", "bound": "not-a-colour" }"#).expect("write");
    let out = Command::new(env!("CARGO_BIN_EXE_cidscope"))
        .args([
            "--theme",
            p.to_str().expect("utf8"),
            "traces/hog-threads.ftrace.txt",
        ])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("bad.json: key \"bound\": expected a colour"),
        "{err}"
    );
    let out = Command::new(env!("CARGO_BIN_EXE_cidscope"))
        .args(["--theme", "nonexistent-theme"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
}

/// Every theme file in themes/ (not only those built in): no slot that is not a CID takes a
/// colour of the CID palette, so a selection, a lost-event mark, an alarm or a marker never
/// reads as a CID; your markers never share the colour of another ruler mark.
#[test]
fn no_theme_file_gives_a_mark_a_cid_colour() {
    use cidscope::ui::theme::NON_CID_SLOTS;
    let mut files: Vec<_> = std::fs::read_dir("themes")
        .expect("themes/")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    assert!(files.len() >= BUILTIN.len());
    for f in files {
        let name = f.display().to_string();
        let text = std::fs::read_to_string(&f).expect("read");
        let t = Theme::from_json(&name, &text, None).expect("parses");
        for key in NON_CID_SLOTS {
            let c = t.slot(key).expect("slot");
            assert!(
                !t.cid_palette.contains(&c),
                "{name}: {key} = {c:?} is also a CID colour"
            );
        }
        for other in [
            "tick_marker",
            "resume_marker",
            "scan_batch",
            "alarm",
            "lost",
            "cursor",
        ] {
            assert_ne!(
                t.marker,
                t.slot(other).expect("slot"),
                "{name}: marker = {other}"
            );
        }
    }
}
