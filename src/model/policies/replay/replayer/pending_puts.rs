//! Puts probed whose decrement may not have run yet (docs/models.md §5.6, *a put's decrement
//! in its window*). `mmput` decrements `mm_users` right after the entry the probe fires at, but
//! a vCPU that stalls in the probe's handler decrements only when it runs again: at the latest
//! before its CPU's next record. The model runs an exit's or an exec's put at its probe; a
//! reading of the same mm on another CPU before that record may come from before the
//! decrement, and then holds one user more per such put. Which it was, no traced event says:
//! both in k6.18.15-c16-workers (a put's CPU silent for 9.3 ms, four readings one above) and in
//! k6.18.15-c4-churn (silent for 6.4 ms, the next reading already one below), so the put stays
//! at its probe and a reading inside the window is held against both.

use crate::model::tasks::MmId;

/// The puts the model ran at their probe whose CPU has not recorded since: CPU, mm.
#[derive(Clone, Debug, Default)]
pub(super) struct PendingPuts {
    open: Vec<(u16, MmId)>,
}

impl PendingPuts {
    /// A put of `mm` the model ran at its probe on `cpu`.
    pub fn put(&mut self, cpu: u16, mm: MmId) {
        self.open.push((cpu, mm));
    }

    /// `cpu` records: its puts are done.
    pub fn recorded(&mut self, cpu: u16) {
        if !self.open.is_empty() {
            self.open.retain(|&(c, _)| c != cpu);
        }
    }

    /// The window a reading of `mm` on `cpu` falls in: the puts of `mm` still open on other
    /// CPUs.
    pub fn window(&self, cpu: u16, mm: Option<MmId>) -> Window {
        let open = mm.map_or(0, |mm| {
            self.open
                .iter()
                .filter(|&&(c, m)| c != cpu && m == mm)
                .count()
        });
        Window(open as i64)
    }
}

/// The puts whose decrement a reading may not have seen yet (and the forks whose increment
/// it may have seen already, `fork_gets.rs`).
#[derive(Clone, Copy, Debug)]
pub(super) struct Window(i64);

impl Window {
    /// The window with `n` more steps the reading may see one user more for.
    pub fn and(self, n: usize) -> Window {
        Window(self.0 + n as i64)
    }

    /// The model's `mm_users` as the reading may have seen it: the reading, where it lies above
    /// the model's by no more than the window's puts; else the model's.
    pub fn seen(self, kernel: i64, model: i64) -> i64 {
        if kernel > model && kernel - model <= self.0 {
            kernel
        } else {
            model
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reading_inside_a_puts_window_may_see_it_undone() {
        let mut p = PendingPuts::default();
        let (a, b) = (MmId(1), MmId(2));
        p.put(3, a);
        let seen = |p: &PendingPuts, cpu, mm, kernel| p.window(cpu, mm).seen(kernel, 7);
        // another CPU reads one user more: the put's decrement had not run
        assert_eq!(seen(&p, 5, Some(a), 8), 8);
        // nor two more, nor on the put's own CPU, nor of another mm or none, nor fewer
        assert_eq!(seen(&p, 5, Some(a), 9), 7);
        assert_eq!(seen(&p, 3, Some(a), 8), 7);
        assert_eq!(seen(&p, 5, Some(b), 8), 7);
        assert_eq!(seen(&p, 5, None, 8), 7);
        assert_eq!(seen(&p, 5, Some(a), 6), 7);
        p.put(4, a);
        assert_eq!(seen(&p, 5, Some(a), 9), 9);
        // once the put's CPU records, its decrement is done
        p.recorded(3);
        p.recorded(4);
        assert_eq!(seen(&p, 5, Some(a), 8), 7);
    }
}
