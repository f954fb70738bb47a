//! Keys typed while a prompt or a marker key is pending: the search and CPU-list lines, and the
//! letter naming a marker.

use super::error::InputError;
use super::jump::jump_in;
use super::overlays::{Mode, PromptKind};
use super::search::{self, Query};
use super::state::State;

/// A character typed while a prompt or a marker key is pending. Returns true if consumed.
pub fn type_char(st: &mut State, c: char) -> bool {
    match &mut st.overlays.mode {
        Mode::Prompt { text, .. } => {
            text.push(c);
            true
        }
        Mode::SetMark => {
            st.overlays.mode = Mode::Normal;
            if c.is_ascii_alphanumeric() {
                let ts = st.cursor_ts();
                st.sel.marks.insert(c, ts);
                st.overlays.message = Some(format!("marker {c} set"));
            } else {
                st.overlays.message = Some("a marker is named by a letter or digit".into());
            }
            true
        }
        Mode::JumpMark => {
            st.overlays.mode = Mode::Normal;
            match st.sel.marks.get(&c).copied() {
                Some(ts) => {
                    let from = st.place();
                    let i = st.first_event_at_or_after(ts);
                    st.set_cursor(i);
                    let to = st.place();
                    st.history.record(from, to);
                    st.overlays.message = Some(format!("at marker {c}"));
                }
                None => st.overlays.message = Some(format!("no marker {c}")),
            }
            true
        }
        Mode::Normal | Mode::Picker(_) => false,
    }
}

pub fn backspace(st: &mut State) {
    if let Mode::Prompt { text, .. } = &mut st.overlays.mode {
        text.pop();
    }
}

pub fn cancel(st: &mut State) {
    st.overlays.mode = Mode::Normal;
}

/// Enter in a prompt.
pub fn submit(st: &mut State) {
    let Mode::Prompt { kind, text } = std::mem::take(&mut st.overlays.mode) else {
        return;
    };
    let from = st.place();
    match kind {
        PromptKind::Search => match Query::parse(&text) {
            Ok(q) => {
                let hits = search::find(&st.trace, &st.timeline, &q, st.sel.selected_mm());
                st.sel.search = Some((text, hits.clone()));
                if hits.is_empty() {
                    st.overlays.message = Some("no match".into());
                } else {
                    jump_in(st, &hits, true, "match");
                    follow_match(st);
                }
            }
            Err(e) => st.overlays.message = Some(e.to_string()),
        },
        PromptKind::Cpus => match parse_cpu_list(&text, st.timeline.lanes.len()) {
            Ok(f) => st.sel.cpu_filter = f,
            Err(e) => st.overlays.message = Some(e.to_string()),
        },
        PromptKind::GoTo => go_to(st, &text),
    }
    let to = st.place();
    st.history.record(from, to);
}

/// `:` and a line: the cursor to that time or event.
fn go_to(st: &mut State, text: &str) {
    let n = st.trace.events.len();
    let span = (st.origin(), st.timeline.first_ts, st.timeline.last_ts);
    let found = super::goto::parse(text)
        .and_then(|t| super::goto::resolve(t, n, span, |ts| st.event_near(ts)));
    match found {
        Ok(i) => {
            st.set_cursor(i);
            let ts = st.cursor_ts();
            st.overlays.message = Some(format!(
                "at event {} of {n}, +{} ({})",
                i + 1,
                crate::events::fmt_dur(ts.saturating_sub(st.origin())),
                crate::events::fmt_ts(ts)
            ));
        }
        Err(e) => st.overlays.message = Some(e.to_string()),
    }
}

/// After a jump to a match of a query naming a task (tid:, tgid:, comm:): shows the process of
/// the task it matched, if another one is shown.
pub fn follow_match(st: &mut State) {
    let Some(q) = st
        .sel
        .search
        .as_ref()
        .and_then(|(t, _)| Query::parse(t).ok())
    else {
        return;
    };
    if !q.selects_process() {
        return;
    }
    let Some(tid) = search::matched_task(&st.trace, &st.timeline, &q, st.view.cursor) else {
        return;
    };
    let mm = st.timeline.task_mm(tid);
    if st.sel.selected_mm() == Some(mm) || !st.sel.mm_list.contains(&mm) {
        return;
    }
    let msg = st.overlays.message.take().unwrap_or_default();
    st.select(super::selection::MmSel::Mm(mm));
    let label = st.mm_label(mm);
    st.overlays.message = Some(format!("{msg} · showing {label}"));
}

/// `0-3,7` → the CPUs; empty → all (None).
pub fn parse_cpu_list(s: &str, ncpus: usize) -> Result<Option<Vec<usize>>, InputError> {
    let s = s.trim();
    if s.is_empty() {
        return Ok(None);
    }
    let mut out = Vec::new();
    for part in s.split(',') {
        let part = part.trim();
        let bad = || InputError::CpuListSyntax {
            part: part.to_string(),
        };
        let (a, b) = match part.split_once('-') {
            Some((a, b)) => (
                a.trim().parse::<usize>().map_err(|_| bad())?,
                b.trim().parse::<usize>().map_err(|_| bad())?,
            ),
            None => {
                let v = part.parse::<usize>().map_err(|_| bad())?;
                (v, v)
            }
        };
        if a > b || b >= ncpus {
            return Err(InputError::CpuOutOfRange {
                part: part.to_string(),
                max: ncpus.saturating_sub(1),
            });
        }
        out.extend(a..=b);
    }
    out.sort_unstable();
    out.dedup();
    Ok(Some(out))
}
