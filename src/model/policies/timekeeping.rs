//! `jiffies` as the kernel advances them (docs/models.md §5.4): not at every boundary, but
//! when a CPU's tick runs `tick_do_update_jiffies64`. That is the CPU with the do_timer duty
//! (`tick_do_timer_cpu`) at its tick (`tick_sched_do_timer`, `kernel/time/tick-sched.c`
//! @6.18.15); a CPU whose idle tick is stopped, at its interrupts and when it leaves idle
//! (`tick_nohz_irq_enter`, `tick_nohz_idle_exit`); and any CPU that saw them stalled for
//! `MAX_STALLED_JIFFIES` of its own ticks. A CPU that stops its tick gives the duty up
//! (`tick_nohz_stop_tick`), and the next CPU whose tick runs takes it. Under TCG the vCPUs'
//! ticks run milliseconds after their boundary, so the 100 ms scan of 6.4-6.18 comes due a
//! tick later than the boundaries say.

/// `MAX_STALLED_JIFFIES` (`kernel/time/tick-sched.c`).
const MAX_STALLED_JIFFIES: u8 = 5;

/// The jiffies the kernel has counted, from the ticks and tick stops of a capture.
#[derive(Clone, Debug)]
pub struct Timekeeping {
    /// `tick_do_timer_cpu`; `None` is `TICK_DO_TIMER_NONE` (who held it before the capture
    /// is unknown: the first CPU whose tick runs takes it).
    timekeeper: Option<u16>,
    /// The boundaries counted at the last update (0: none yet).
    jiffies: u64,
    /// Per CPU, its idle tick stopped (`tick_stop`), until it leaves idle.
    stopped: Vec<bool>,
    /// Per CPU, the jiffies at its last tick and how many of its ticks saw them unchanged.
    stalled: Vec<(u64, u8)>,
}

impl Timekeeping {
    pub fn new(cpus: usize) -> Timekeeping {
        Timekeeping {
            timekeeper: None,
            jiffies: 0,
            stopped: vec![false; cpus],
            stalled: vec![(0, 0); cpus],
        }
    }

    /// The jiffies counted so far, once a tick has counted them.
    pub fn jiffies(&self) -> Option<u64> {
        (self.jiffies > 0).then_some(self.jiffies)
    }

    fn update(&mut self, boundaries: u64) {
        self.jiffies = self.jiffies.max(boundaries);
    }

    /// CPU `c`'s tick (`tick_nohz_handler`), `boundaries` passed by then.
    pub fn tick(&mut self, c: u16, boundaries: u64) {
        let ci = c as usize;
        if ci >= self.stopped.len() {
            return;
        }
        if self.stopped[ci] {
            self.update(boundaries); // tick_nohz_irq_enter
        }
        let holder = *self.timekeeper.get_or_insert(c);
        if holder == c {
            self.update(boundaries);
        }
        let j = self.jiffies;
        let s = &mut self.stalled[ci];
        if s.0 != j {
            *s = (j, 0);
        } else {
            s.1 += 1;
            if s.1 >= MAX_STALLED_JIFFIES {
                self.update(boundaries);
                self.stalled[ci] = (self.jiffies, 0);
            }
        }
    }

    /// CPU `c` stopped its idle tick (`tick_stop`): it gives up the duty.
    pub fn tick_stop(&mut self, c: u16) {
        if self.timekeeper == Some(c) {
            self.timekeeper = None;
        }
        if let Some(s) = self.stopped.get_mut(c as usize) {
            *s = true;
        }
    }

    /// CPU `c` switches from idle to `next` (0: it stays idle).
    pub fn idle_switch(&mut self, c: u16, next: u32, boundaries: u64) {
        let ci = c as usize;
        if self.stopped.get(ci) == Some(&true) {
            self.update(boundaries); // tick_nohz_idle_exit
            if next != 0 {
                self.stopped[ci] = false;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_duty_holders_tick_advances_them() {
        let mut t = Timekeeping::new(4);
        t.tick(2, 100); // CPU 2 takes the duty
        assert_eq!(t.jiffies(), Some(100));
        t.tick(1, 101); // another CPU's tick past the boundary: not counted
        assert_eq!(t.jiffies(), Some(100));
        t.tick(2, 101);
        assert_eq!(t.jiffies(), Some(101));
    }

    #[test]
    fn a_stopped_tick_gives_the_duty_to_the_next_ticking_cpu() {
        let mut t = Timekeeping::new(4);
        t.tick(2, 100);
        t.tick_stop(2);
        t.tick(3, 102);
        assert_eq!(t.jiffies(), Some(102));
        t.tick(3, 103);
        assert_eq!(t.jiffies(), Some(103));
        // CPU 2's stopped tick still counts at its interrupts and when it leaves idle
        t.idle_switch(2, 7, 104);
        assert_eq!(t.jiffies(), Some(104));
    }

    #[test]
    fn a_cpu_that_sees_them_stalled_advances_them() {
        let mut t = Timekeeping::new(4);
        t.tick(0, 100);
        // its first tick notes them, the next MAX_STALLED_JIFFIES - 1 count, the last updates
        for k in 1..=MAX_STALLED_JIFFIES as u64 {
            t.tick(1, 100 + k);
            assert_eq!(t.jiffies(), Some(100), "tick {k}");
        }
        t.tick(1, 106);
        assert_eq!(t.jiffies(), Some(106));
    }
}
