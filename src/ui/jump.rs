//! The cursor to the next or previous entry of a sorted list (event indices or times), with the
//! message saying where it went: the step every jump (search match, CID change, alarm, ...) takes.

use super::state::State;

/// Moves the cursor to the next/previous entry of a sorted list of event indices.
pub fn jump_in(st: &mut State, idx: &[u32], forward: bool, what: &str) {
    let cur = st.view.cursor as u32;
    let target = if forward {
        idx.get(idx.partition_point(|&i| i <= cur)).copied()
    } else {
        idx.partition_point(|&i| i < cur)
            .checked_sub(1)
            .map(|k| idx[k])
    };
    st.overlays.message = Some(match target {
        Some(i) => {
            st.set_cursor(i as usize);
            let pos = idx.partition_point(|&k| k < i) + 1;
            format!("{what} {pos} of {}", idx.len())
        }
        None if idx.is_empty() => format!("no {what} here"),
        None => {
            let dir = if forward { "after" } else { "before" };
            format!("no {what} {dir} the cursor")
        }
    });
}

/// Like `jump_in`, but past the last entry on to the first (and before the first on to the
/// last), as a search does.
pub fn jump_wrapping(st: &mut State, idx: &[u32], forward: bool, what: &str) {
    let cur = st.view.cursor as u32;
    let past_end = if forward {
        idx.partition_point(|&i| i <= cur) == idx.len()
    } else {
        idx.partition_point(|&i| i < cur) == 0
    };
    if !past_end || idx.is_empty() {
        return jump_in(st, idx, forward, what);
    }
    let (target, pos) = if forward {
        (idx[0], 1)
    } else {
        (idx[idx.len() - 1], idx.len())
    };
    st.set_cursor(target as usize);
    let edge = if forward { "end" } else { "start" };
    st.overlays.message = Some(format!(
        "{what} {pos} of {} (wrapped past the {edge})",
        idx.len()
    ));
}

/// Like `jump_in` for a sorted list of times.
pub fn jump_to_time(st: &mut State, ts: &[u64], forward: bool, what: &str) {
    let idx: Vec<u32> = ts
        .iter()
        .map(|&t| st.first_event_at_or_after(t) as u32)
        .collect();
    jump_in(st, &idx, forward, what);
}
