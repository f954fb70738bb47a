//! Terminal input (keys, mouse) turned into changes of [`App`]: keys go through the binding
//! table, or into a prompt; the mouse puts the cursor, selects a range, zooms and hovers.

use super::app::App;
use super::keys::action_for;
use super::overlays::Mode;
use super::view;
use crossterm::event::{
    Event as TermEvent, KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseButton, MouseEvent,
    MouseEventKind,
};
use ratatui::layout::Rect;

/// A left-button drag in progress: where it started.
#[derive(Default, Debug)]
pub struct Drag {
    start: Option<(u16, u64)>,
}

pub fn handle(app: &mut App, ev: &TermEvent, area: Rect, drag: &mut Drag) {
    match ev {
        TermEvent::Key(k) if k.kind != KeyEventKind::Release => key(app, k),
        TermEvent::Mouse(m) => mouse(app, m, area, drag),
        _ => {}
    }
}

pub fn key(app: &mut App, k: &KeyEvent) {
    // from anywhere, a prompt or picker included: in raw mode these are keys, not signals
    if k.modifiers.contains(KeyModifiers::CONTROL) && k.code == KeyCode::Char('c') {
        app.state.quit = true;
        return;
    }
    if k.modifiers.contains(KeyModifiers::CONTROL) && k.code == KeyCode::Char('z') {
        app.state.suspend = true;
        return;
    }
    match &app.state.overlays.mode {
        Mode::Prompt { .. } => match k.code {
            KeyCode::Enter => app.submit(),
            KeyCode::Esc => app.cancel_mode(),
            KeyCode::Backspace => app.backspace(),
            KeyCode::Char(c) => {
                app.type_char(c);
            }
            _ => {}
        },
        Mode::Picker(_) => super::picker::key(&mut app.state, k),
        Mode::SetMark | Mode::JumpMark => match k.code {
            KeyCode::Char(c) => {
                app.type_char(c);
            }
            _ => app.cancel_mode(),
        },
        Mode::Normal => {
            // the overview's own keys (arrows, +/-, Enter) move and zoom into its region
            if !app.state.overlays.show_help && super::overview::key(&mut app.state, k) {
                return;
            }
            if let Some(a) = action_for(&app.bindings, k) {
                app.apply(a);
            } else if app.state.overlays.show_help {
                app.state.overlays.show_help = false;
            }
        }
    }
}

fn mouse(app: &mut App, m: &MouseEvent, area: Rect, drag: &mut Drag) {
    let hit = view::hit(area, app, m.column, m.row);
    let st = &mut app.state;
    match m.kind {
        MouseEventKind::Moved => st.view.hover = hit,
        // a click on the title line opens the process picker
        MouseEventKind::Down(MouseButton::Left) if m.row == area.y && hit.is_none() => {
            app.apply(super::keys::Action::PickProcess);
        }
        MouseEventKind::Down(MouseButton::Left) => {
            if let Some((_, ts)) = hit {
                drag.start = Some((m.column, ts));
                let i = st.event_near(ts);
                st.set_cursor(i);
            }
        }
        MouseEventKind::Drag(MouseButton::Left) => {
            if let (Some((col, a)), Some((_, b))) = (drag.start, hit)
                && col != m.column
            {
                st.sel.a = Some(a);
                st.sel.b = Some(b);
            }
            st.view.hover = hit;
        }
        MouseEventKind::Up(MouseButton::Left) => {
            if let (Some((col, _)), Some(_)) = (drag.start.take(), hit)
                && col != m.column
            {
                st.describe_selection();
            }
        }
        MouseEventKind::ScrollUp => {
            if let Some((_, ts)) = hit {
                st.zoom_at(0.5, ts);
            }
        }
        MouseEventKind::ScrollDown => {
            if let Some((_, ts)) = hit {
                st.zoom_at(2.0, ts);
            }
        }
        _ => {}
    }
}
