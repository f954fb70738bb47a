//! The process picker (`P` or Enter): every process with rseq activity in a list — comm, tgid,
//! threads, rseq_updates, CIDs seen, born in the capture — filtered as you type (a substring of
//! the comm or the tgid), moved through with the arrows, PgUp/PgDn, Home/End; Enter shows the
//! process, Esc closes. Tab and Shift-Tab still cycle through the same list.

use super::overlays::Mode;
use super::process_list::Picker;
use super::state::State;
use crossterm::event::{KeyCode, KeyEvent};

/// The picker over the current data, on the process shown.
pub fn open(st: &State) -> Picker {
    Picker::open(&st.timeline, &st.trace, &st.sel)
}

/// Rows a PgUp/PgDn moves.
const PAGE: isize = 10;

/// A key while the picker is open.
pub fn key(st: &mut State, k: &KeyEvent) {
    let Mode::Picker(p) = &mut st.overlays.mode else {
        return;
    };
    match k.code {
        KeyCode::Esc => st.overlays.mode = Mode::Normal,
        KeyCode::Enter => {
            let picked = p
                .current()
                .map(|r| (r.sel, r.label.clone(), r.comm.clone()));
            st.overlays.mode = Mode::Normal;
            match picked {
                Some((sel, label, comm)) => {
                    st.select(sel);
                    st.overlays.message = Some(format!("showing {label} {comm}").trim().into());
                }
                None => st.overlays.message = Some("no process matches".into()),
            }
        }
        KeyCode::Up | KeyCode::BackTab => p.step(-1),
        KeyCode::Down | KeyCode::Tab => p.step(1),
        KeyCode::PageUp => p.step(-PAGE),
        KeyCode::PageDown => p.step(PAGE),
        KeyCode::Home => p.pos = 0,
        KeyCode::End => p.step(isize::MAX / 2),
        KeyCode::Backspace => {
            let mut f = p.filter.clone();
            f.pop();
            p.set_filter(f);
        }
        KeyCode::Char(c) => {
            let f = format!("{}{c}", p.filter);
            p.set_filter(f);
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sources::{LoadOptions, load};
    use crate::ui::app::App;
    use crate::ui::keys::Action;
    use crate::ui::process_list::rows;
    use crossterm::event::KeyModifiers;

    fn press(app: &mut App, code: KeyCode) {
        key(&mut app.state, &KeyEvent::new(code, KeyModifiers::NONE));
    }

    fn typed(app: &mut App, s: &str) {
        for c in s.chars() {
            press(app, KeyCode::Char(c));
        }
    }

    #[test]
    fn filter_move_and_pick() {
        let t = load(
            std::path::Path::new("traces/v5-workers.ftrace.txt"),
            &LoadOptions::default(),
        )
        .expect("capture");
        let mut app = App::new(t);
        let n = app.state.sel.mm_list.len();
        app.apply(Action::PickProcess);
        let Mode::Picker(p) = &app.state.overlays.mode else {
            panic!("the picker opens");
        };
        assert_eq!(p.rows.len(), n + 1, "all tasks and every process");
        assert_eq!(p.current().map(|r| r.sel), Some(app.state.sel.selected()));
        // End, then Home; the list does not wrap
        press(&mut app, KeyCode::End);
        press(&mut app, KeyCode::Down);
        let Mode::Picker(p) = &app.state.overlays.mode else {
            panic!("still open");
        };
        assert_eq!(p.pos, n);
        press(&mut app, KeyCode::Home);
        press(&mut app, KeyCode::Up);
        // a filter that matches one tgid only
        let rows = rows(&app.state.timeline, &app.state.trace, &app.state.sel);
        let target = rows
            .iter()
            .find(|r| r.tgid.is_some() && r.sel != app.state.sel.selected())
            .expect("another process")
            .clone();
        let tgid = target.tgid.expect("tgid").to_string();
        typed(&mut app, &tgid);
        let Mode::Picker(p) = &app.state.overlays.mode else {
            panic!("still open");
        };
        assert!(
            p.filtered()
                .iter()
                .all(|r| r.tgid.is_some_and(|t| t.to_string().contains(&tgid)))
        );
        press(&mut app, KeyCode::Enter);
        assert_eq!(app.state.overlays.mode, Mode::Normal);
        let shown = app.state.sel.selected();
        let picked = rows.iter().find(|r| r.sel == shown).expect("a row");
        assert!(picked.tgid.is_some_and(|t| t.to_string().contains(&tgid)));
        assert!(!app.state.sel.mm_auto, "the user's choice");
        // Esc closes without a change; a filter matching nothing picks nothing
        app.apply(Action::PickProcess);
        typed(&mut app, "no-such-comm");
        press(&mut app, KeyCode::Enter);
        assert_eq!(app.state.sel.selected(), shown);
        assert_eq!(
            app.state.overlays.message.as_deref(),
            Some("no process matches")
        );
        app.apply(Action::PickProcess);
        press(&mut app, KeyCode::Esc);
        assert_eq!(app.state.overlays.mode, Mode::Normal);
    }

    #[test]
    fn the_first_pick_is_the_busiest_process_born_in_the_capture() {
        let t = load(
            std::path::Path::new("traces/hackbench-pipe.ftrace.txt"),
            &LoadOptions::default(),
        )
        .expect("capture");
        let app = App::new(t);
        let tl = &app.state.timeline;
        let mm = app.state.sel.selected_mm().expect("a process");
        let info = tl.mm_info(mm).expect("info");
        let born: Vec<_> = tl
            .mms_by_activity()
            .into_iter()
            .filter(|m| tl.mms[m.0 as usize].begins_in_capture())
            .collect();
        if born.is_empty() {
            assert_eq!(Some(mm), tl.mms_by_activity().first().copied());
        } else {
            assert!(info.begins_in_capture());
            let most = born
                .iter()
                .map(|m| tl.mm_stats[m.0 as usize].rseq_updates)
                .max();
            assert_eq!(Some(tl.mm_stats[mm.0 as usize].rseq_updates), most);
        }
    }
}
