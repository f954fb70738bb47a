//! The ruler over the lanes: the row of time labels every lane set shares, and each set's
//! marks row (compaction triggers and the batches that continue them, scans whose trigger is
//! unknown, mode switches, alarms, lost events, the user's markers, the A–B ends, the cursor).

use super::axis::TimeAxis;
use crate::ui::app::App;
use crate::ui::glyphs::{self, Glyph};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};

/// A mark on the ruler: its time and its glyph (character and colour from the glyph table).
pub type RulerMark = (u64, Glyph);

/// A mark over a stretch of time (a complete scan from its first batch to its last): drawn
/// under every other mark.
pub type RulerSpan = (u64, u64, Glyph);

/// Columns between time labels, at least.
const LABEL_STEP: u16 = 16;

/// The time labels of the ruler: (column, text) with text `|+1.25ms`, relative to `origin`.
/// One unit for the whole row, from the largest offset shown, and as many decimals as make
/// neighbouring labels differ (1 ns per column shows nanoseconds, a whole trace milliseconds).
pub fn ruler_labels(axis: TimeAxis, origin: u64) -> Vec<(u16, String)> {
    if axis.cols == 0 {
        return Vec::new();
    }
    let far = axis
        .t0
        .saturating_add(axis.span)
        .abs_diff(origin)
        .max(axis.t0.abs_diff(origin));
    let (unit, name) = [(1_000_000_000u64, "s"), (1_000_000, "ms"), (1_000, "us")]
        .into_iter()
        .find(|&(u, _)| far >= u)
        .unwrap_or((1, "ns"));
    // the time between two labels, at the closest they can be
    let step_ns = (axis.span as u128 * LABEL_STEP as u128 / axis.cols as u128).max(1) as u64;
    let mut decimals = 0usize;
    while decimals < 9 && unit / 10u64.pow(decimals as u32) > step_ns {
        decimals += 1;
    }
    // and one more, so that a label is exact to a tenth of the spacing (never below 1 ns)
    if unit / 10u64.pow(decimals as u32) >= 10 {
        decimals += 1;
    }
    let fmt = |t: u64| {
        let (sign, d) = if t >= origin {
            ('+', t - origin)
        } else {
            ('-', origin - t)
        };
        // rounded to the last decimal shown
        let scale = 10u128.pow(decimals as u32);
        let scaled = (d as u128 * scale + unit as u128 / 2) / unit as u128;
        let (whole, frac) = (scaled / scale, scaled % scale);
        if decimals == 0 {
            format!("|{sign}{whole}{name}")
        } else {
            format!("|{sign}{whole}.{frac:0decimals$}{name}")
        }
    };
    let mut out = Vec::new();
    let mut x = 0u16;
    while x + 8 < axis.cols {
        let label = fmt(axis.range(x).0);
        let w = label.chars().count() as u16;
        if x + w > axis.cols {
            break;
        }
        let next = x + LABEL_STEP.max(w + 2);
        out.push((x, label));
        x = next;
    }
    out
}

/// The row of time labels shared by every lane set (and the graph under them).
pub fn draw_time_row(app: &App, axis: TimeAxis, area: Rect, lw: u16, buf: &mut Buffer) {
    let theme = &app.theme;
    buf.set_string(
        area.x,
        area.y,
        format!("{:<w$}", "time", w = lw as usize),
        theme.dim(),
    );
    let style = glyphs::TIME_LABEL.style(theme, 0);
    for (x, label) in ruler_labels(axis, app.state.origin()) {
        buf.set_string(area.x + lw + x, area.y, label, style);
    }
}

/// A set's marks row: its own marks, the user's markers, the A/B range ends and the cursor.
/// Where marks meet on one column the most important is drawn; the cursor draws the mark it
/// sits on boxed in its colour instead of hiding it.
pub fn draw_marks_row(
    app: &App,
    marks: &[RulerMark],
    spans: &[RulerSpan],
    axis: TimeAxis,
    area: Rect,
    lw: u16,
    buf: &mut Buffer,
) {
    let (st, theme) = (&app.state, &app.theme);
    buf.set_string(
        area.x,
        area.y,
        format!("{:<w$}", "marks", w = lw as usize),
        theme.dim(),
    );
    // per column, the mark drawn there: (rank, char, style); lower rank wins
    let mut row: Vec<Option<(usize, char, Style)>> = vec![None; axis.cols as usize];
    let mut put = |ts: u64, rank: usize, ch: char, style: Style| {
        if let Some(x) = axis.col_of(ts)
            && row[x as usize].is_none_or(|(r, _, _)| rank < r)
        {
            row[x as usize] = Some((rank, ch, style));
        }
    };
    for (name, &ts) in &st.sel.marks {
        put(ts, 0, *name, glyphs::USER_MARK.style(theme, 0));
    }
    for (name, ts) in [('A', st.sel.a), ('B', st.sel.b)] {
        if let Some(ts) = ts {
            put(ts, 1, name, glyphs::RANGE_END.style(theme, 0));
        }
    }
    for &(ts, glyph) in marks {
        let rank = 2 + glyphs::MARK_PRIORITY
            .iter()
            .position(|m| *m == glyph)
            .unwrap_or(glyphs::MARK_PRIORITY.len());
        put(ts, rank, glyph.ch(), glyph.style(theme, 0));
    }
    // under every mark: the stretches (a scan from its first batch to its last)
    let last = usize::from(axis.cols).saturating_sub(1);
    let t1 = axis.t0.saturating_add(axis.span);
    for &(a, b, glyph) in spans {
        if b < axis.t0 || a >= t1 {
            continue;
        }
        let from = axis.col_of(a).map_or(0, usize::from);
        let to = axis.col_of(b).map_or(last, usize::from);
        for cell in row.iter_mut().take(to + 1).skip(from) {
            if cell.is_none() {
                *cell = Some((usize::MAX, glyph.ch(), glyph.style(theme, 0)));
            }
        }
    }
    let cursor = axis.col_of(st.cursor_ts());
    for (x, cell) in row.iter().enumerate() {
        let at_cursor = cursor == Some(x as u16);
        let (ch, style) = match cell {
            Some((_, ch, _)) if at_cursor => (
                *ch,
                theme
                    .mark(theme.cursor)
                    .add_modifier(Modifier::REVERSED | Modifier::BOLD),
            ),
            Some((_, ch, style)) => (*ch, *style),
            None if at_cursor => (glyphs::CURSOR.ch(), glyphs::CURSOR.style(theme, 0)),
            None => continue,
        };
        buf.set_string(area.x + lw + x as u16, area.y, ch.to_string(), style);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Labels read `|+<number><unit>`, one unit per row, and neighbours always differ: at the
    /// narrowest zoom (1 ns per column) as over the whole of a long capture.
    #[test]
    fn ruler_labels_follow_the_zoom() {
        let origin = 1_000_000_000;
        for (off, span, cols) in [
            (5_640_000, 200, 200),              // 1 ns per column, 5.64 ms in
            (0, 25_255_000, 114),               // a whole 25 ms capture
            (98_646_000, 4_733_000, 112),       // batched-scan
            (3_000_000_000, 2_000_000_000, 80), // live, seconds
            (0, 200, 80),
            (1_234, 900, 70),
        ] {
            let axis = TimeAxis {
                t0: origin + off,
                span,
                cols,
            };
            let labels = ruler_labels(axis, origin);
            assert!(!labels.is_empty());
            let units: Vec<&str> = labels
                .iter()
                .map(|(_, l)| l.trim_start_matches(|c: char| !c.is_alphabetic()))
                .collect();
            assert!(units.iter().all(|u| *u == units[0]), "{labels:?}");
            for (x, l) in &labels {
                let num = l
                    .strip_prefix("|+")
                    .and_then(|r| r.strip_suffix(units[0]))
                    .unwrap_or_else(|| panic!("{l}"));
                assert!(num.parse::<f64>().is_ok(), "{l}");
                assert!(*x + (l.chars().count() as u16) <= cols);
            }
            for w in labels.windows(2) {
                assert_ne!(w[0].1, w[1].1, "{labels:?}");
                assert!(w[0].0 + w[0].1.chars().count() as u16 + 1 < w[1].0);
            }
        }
    }
}
