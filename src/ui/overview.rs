//! The dense overview (`w`): every CPU over the whole capture, a half cell per CPU and column
//! (a row of braille dots where half cells do not fit),
//! with a region (a stretch of time and a band of CPUs) that the arrows move, `+`/`-` narrow
//! and widen, and Enter zooms into: the lanes then show that stretch, from its first CPU.

use super::overlays::Region;
use super::state::State;
use super::viewport::{MIN_SPAN, full_window};
use crossterm::event::{KeyCode, KeyEvent};

/// Rows the screen leaves the overview's CPUs: the title, the status bar and the footer; the
/// overview's border and time row; the cursor pane's border and a line.
fn room(height: u16) -> usize {
    usize::from(height.saturating_sub(3 + 2 + 2)).max(1)
}

/// CPUs per row: two (half cells, each CPU its CID's colour) where they all fit so, else four
/// (braille dots, a row of dots per CPU, the cell in the colour of its first CPU's CID), so a
/// 64-CPU capture is on one screen even at 80×24.
pub fn per_row(ncpus: usize, height: u16) -> usize {
    if ncpus.div_ceil(2) <= room(height) {
        2
    } else {
        4
    }
}

/// Rows the overview wants for its CPUs on a screen `height` rows high: all of them where they
/// fit (they scroll where not).
pub fn cpu_rows(ncpus: usize, height: u16) -> u16 {
    let need = ncpus.div_ceil(per_row(ncpus, height));
    need.min(room(height)) as u16
}

/// The region when the overview opens: the window shown (or an eighth of the capture around
/// the cursor, when the whole capture is shown) and the CPUs of the lane window.
pub fn open(st: &State, cpu0: usize, ncpus: usize) -> Region {
    let (first, full) = full_window(&st.timeline);
    let (t0, span) = if st.view.span >= full {
        let span = (full / 8).max(MIN_SPAN);
        let ts = st.cursor_ts();
        (ts.saturating_sub(span / 2).max(first), span)
    } else {
        (st.view.t0, st.view.span)
    };
    let per = per_row(st.visible_cpus().len(), st.view.screen.height);
    Region {
        t0,
        span,
        cpu0,
        ncpus: ncpus.max(1),
        cpu_top: cpu0 - cpu0 % per,
    }
}

/// Keeps the region inside the capture and its CPUs, and on screen.
fn clamp(st: &State, r: &mut Region) {
    let (first, full) = full_window(&st.timeline);
    r.span = r.span.clamp(MIN_SPAN, full.max(MIN_SPAN));
    let last_t0 = (first + full).saturating_sub(r.span);
    r.t0 = r.t0.clamp(first, last_t0.max(first));
    let n = st.visible_cpus().len().max(1);
    r.ncpus = r.ncpus.clamp(1, n);
    r.cpu0 = r.cpu0.min(n - r.ncpus);
    let per = per_row(n, st.view.screen.height);
    let rows = usize::from(cpu_rows(n, st.view.screen.height));
    let shown = rows * per;
    if r.cpu0 < r.cpu_top {
        r.cpu_top = r.cpu0 - r.cpu0 % per;
    } else if r.cpu0 + r.ncpus > r.cpu_top + shown {
        let want = (r.cpu0 + r.ncpus).saturating_sub(shown);
        r.cpu_top = want.div_ceil(per) * per;
    }
    r.cpu_top = r.cpu_top.min(n.saturating_sub(shown).div_ceil(per) * per);
}

/// A key while the overview is open; false when it is not the overview's (it then acts as
/// usual).
pub fn key(st: &mut State, k: &KeyEvent) -> bool {
    let Some(mut r) = st.overlays.overview else {
        return false;
    };
    let shift = k.modifiers.contains(crossterm::event::KeyModifiers::SHIFT);
    let per = per_row(st.visible_cpus().len(), st.view.screen.height);
    match k.code {
        KeyCode::Left | KeyCode::Char('h') => r.t0 = r.t0.saturating_sub(r.span / 4),
        KeyCode::Right | KeyCode::Char('l') => r.t0 = r.t0.saturating_add(r.span / 4),
        KeyCode::Up if shift => r.cpu0 = r.cpu0.saturating_sub(r.ncpus),
        KeyCode::Down if shift => r.cpu0 += r.ncpus,
        KeyCode::Up => r.cpu0 = r.cpu0.saturating_sub(per),
        KeyCode::Down => r.cpu0 += per,
        KeyCode::Char('+') | KeyCode::Char('=') => {
            r.t0 += r.span / 4;
            r.span /= 2;
        }
        KeyCode::Char('-') | KeyCode::Char('_') => {
            r.t0 = r.t0.saturating_sub(r.span / 2);
            r.span = r.span.saturating_mul(2);
        }
        KeyCode::Char('>') => r.ncpus += per,
        KeyCode::Char('<') => r.ncpus = r.ncpus.saturating_sub(per),
        KeyCode::Enter => {
            zoom_into(st, r);
            return true;
        }
        _ => return false,
    }
    clamp(st, &mut r);
    st.overlays.overview = Some(r);
    true
}

/// Enter: the lanes show the region — its stretch of time, from its first CPU — and the
/// overview closes.
pub fn zoom_into(st: &mut State, r: Region) {
    let from = st.place();
    st.zoom_to(r.t0, r.t0 + r.span);
    let visible = st.visible_cpus();
    let cpus: Vec<usize> = visible.iter().skip(r.cpu0).take(r.ncpus).copied().collect();
    // the cursor on the region's first event on one of its CPUs, if one is near
    let (i, j) = st.event_range(r.t0, r.t0 + r.span);
    if let Some(k) = (i..j.min(i + 100_000)).find(|&k| {
        st.trace
            .events
            .get(k)
            .and_then(|e| e.known_cpu())
            .is_some_and(|c| cpus.contains(&usize::from(c)))
    }) {
        st.view.cursor = k;
    }
    st.view.lanes.cpu_top = r.cpu0;
    st.view.lanes.followed = Some(st.view.cursor);
    st.overlays.overview = None;
    let to = st.place();
    st.history.record(from, to);
    let origin = st.origin();
    let rel = |t: u64| crate::events::fmt_dur(t.saturating_sub(origin));
    st.overlays.message = Some(format!(
        "zoomed into +{}…+{}, CPUs {}-{}",
        rel(r.t0),
        rel(r.t0 + r.span),
        cpus.first().copied().unwrap_or(0),
        cpus.last().copied().unwrap_or(0)
    ));
}
