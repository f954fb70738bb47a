//! `E`: the view exported to an SVG file — the window shown and the process selected, in the
//! theme's colours — for slides and mailing-list posts without leaving the TUI. The file goes
//! to the current directory, named after the capture and numbered so that none is
//! overwritten.

use super::app::App;
use super::svg_colors::svg_colors;
use crate::events::fmt_dur;
use crate::export::svg::{SvgOptions, render};
use std::path::{Path, PathBuf};

/// A free name for the next picture of `capture` in `dir`.
pub fn next_path(dir: &Path, capture: &str) -> PathBuf {
    let stem: String = Path::new(capture)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("capture")
        .split('.')
        .next()
        .unwrap_or("capture")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let stem = if stem.is_empty() {
        "capture".into()
    } else {
        stem
    };
    (1..)
        .map(|n| dir.join(format!("cidscope-{stem}-{n}.svg")))
        .find(|p| !p.exists())
        .unwrap_or_else(|| dir.join(format!("cidscope-{stem}.svg")))
}

/// Writes the view to a new file in `dir`; the message saying where, or what failed.
pub fn export(app: &App, dir: &Path) -> String {
    let st = &app.state;
    if st.trace.events.is_empty() {
        return "nothing to export yet: no events".into();
    }
    let mm = st.sel.selected_mm();
    let label = match mm {
        Some(m) => st.mm_label(m),
        None => "all tasks".into(),
    };
    let opts = SvgOptions {
        from: st.view.t0,
        to: st.view.t1().max(st.view.t0 + 1),
        mm,
        label,
        colors: svg_colors(&app.theme),
        width: 1200,
    };
    let path = next_path(dir, &st.trace.path);
    let svg = render(&st.trace, &st.timeline, &opts);
    let origin = st.origin();
    match std::fs::write(&path, svg) {
        Ok(()) => format!(
            "wrote {} (+{}…+{}, {}; the capture's lanes)",
            path.display(),
            fmt_dur(opts.from.saturating_sub(origin)),
            fmt_dur(opts.to.saturating_sub(origin)),
            opts.label
        ),
        Err(e) => format!("cannot write {}: {e}", path.display()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sources::{LoadOptions, load};

    #[test]
    fn the_view_is_written_to_a_new_file_each_time() {
        let t = load(
            Path::new("traces/hackbench-pipe.ftrace.txt"),
            &LoadOptions::default(),
        )
        .expect("load");
        let app = App::new(t);
        let dir = std::env::temp_dir().join(format!("cidscope-svgkey-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let m1 = export(&app, &dir);
        let m2 = export(&app, &dir);
        let p1 = dir.join("cidscope-hackbench-pipe-1.svg");
        let p2 = dir.join("cidscope-hackbench-pipe-2.svg");
        assert!(m1.contains("cidscope-hackbench-pipe-1.svg"), "{m1}");
        assert!(m2.contains("-2.svg"), "{m2}");
        let svg = std::fs::read_to_string(&p1).expect("written");
        assert!(svg.starts_with("<?xml") && svg.contains("tgid 3082 hackbench"));
        assert!(p2.exists());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
