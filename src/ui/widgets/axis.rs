//! The time axis shared by the lanes and the graphs under them, and the label column left of
//! them.

use crate::ui::state::State;
use ratatui::layout::Rect;

/// Maps screen columns to time for the lanes and the graphs under them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimeAxis {
    pub t0: u64,
    pub span: u64,
    pub cols: u16,
}

impl TimeAxis {
    /// `[start, end)` of column `x`.
    pub fn range(&self, x: u16) -> (u64, u64) {
        let c = self.cols.max(1) as u128;
        let a = self.t0 + (self.span as u128 * x as u128 / c) as u64;
        let b = self.t0 + (self.span as u128 * (x as u128 + 1) / c) as u64;
        (a, b.max(a + 1))
    }

    /// The column showing `ts`, if visible.
    pub fn col_of(&self, ts: u64) -> Option<u16> {
        // no columns (a terminal narrower than the labels): no time has a column
        if self.cols == 0 || ts < self.t0 || ts >= self.t0 + self.span {
            return None;
        }
        // The largest x whose column starts at or before ts (the inverse of `range`).
        let (d, c, s) = (
            (ts - self.t0) as u128,
            self.cols as u128,
            self.span.max(1) as u128,
        );
        let x = ((d + 1) * c).div_ceil(s).saturating_sub(1) as u16;
        Some(x.min(self.cols.saturating_sub(1)))
    }
}

/// The time under screen cell (col, row) when it is on the axis part of `area` (right of its
/// label column of width `lw`), for the window `[t0, t0 + span)`.
pub fn time_under(area: Rect, lw: u16, t0: u64, span: u64, col: u16, row: u16) -> Option<u64> {
    if row < area.y || row >= area.y + area.height || col < area.x + lw {
        return None;
    }
    if col >= area.x + area.width {
        return None;
    }
    let axis = TimeAxis {
        t0,
        span,
        cols: area.width - lw,
    };
    Some(axis.range(col - area.x - lw).0)
}

/// Width of the label column left of lanes and graphs ("CPU 12 ").
pub fn label_width(ncpus: u32) -> u16 {
    let digits = ncpus.saturating_sub(1).max(1).to_string().len() as u16;
    4 + digits + 1
}

/// Width of the label column left of the lanes and graphs: room for "CPU12" or, in the
/// thread view, the longest tid; every pane with a time axis uses it, so columns align.
pub fn lane_label_width(st: &State) -> u16 {
    let cpus = label_width(st.timeline.ncpus.max(st.visible_cpus().len() as u32));
    match (&st.derived.threads, st.view.threads) {
        (Some(t), true) => {
            let digits = t.tids.iter().max().map_or(1, |m| m.to_string().len()) as u16;
            cpus.max(digits + 1).min(12)
        }
        _ => cpus,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axis_columns_partition_the_window() {
        let ax = TimeAxis {
            t0: 1000,
            span: 1000,
            cols: 7,
        };
        let mut prev = ax.t0;
        for x in 0..7 {
            let (a, b) = ax.range(x);
            assert_eq!(a, prev);
            prev = b;
            assert_eq!(ax.col_of(a), Some(x));
        }
        assert_eq!(prev, 2000);
        assert_eq!(ax.col_of(999), None);
        assert_eq!(ax.col_of(2000), None);
    }
}
