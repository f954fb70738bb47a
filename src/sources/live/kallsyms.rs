//! Kernel text symbols from /proc/kallsyms: tells the scheduler tick (`tick_nohz_handler`, or
//! `tick_sched_timer` on kernels before 6.9) among `hrtimer_expire_entry` records, and names the
//! function of other timers when a session is recorded as text. Only root sees real addresses;
//! others see zeros, in which case no record is taken for a tick.

use crate::sources::tracefs::decode::Symbols;
use rustc_hash::FxHashMap;

/// The tick handlers, in the order tried.
pub const TICK_FUNCTIONS: [&str; 2] = ["tick_nohz_handler", "tick_sched_timer"];

#[derive(Clone, Debug, Default)]
pub struct Kallsyms {
    /// address → name, for text symbols (`t`/`T`) with a non-zero address.
    by_addr: FxHashMap<u64, Box<str>>,
    /// Addresses of the tick handlers found.
    tick: Vec<(u64, &'static str)>,
}

impl Kallsyms {
    /// Reads /proc/kallsyms; an unreadable file gives an empty table (no tick detection).
    pub fn load() -> Kallsyms {
        match std::fs::read_to_string("/proc/kallsyms") {
            Ok(text) => Self::parse(&text),
            Err(_) => Kallsyms::default(),
        }
    }

    pub fn parse(text: &str) -> Kallsyms {
        let mut k = Kallsyms::default();
        for line in text.lines() {
            let mut it = line.split_ascii_whitespace();
            let (Some(addr), Some(ty), Some(name)) = (it.next(), it.next(), it.next()) else {
                continue;
            };
            if !matches!(ty, "t" | "T") {
                continue;
            }
            let Ok(a) = u64::from_str_radix(addr, 16) else {
                continue;
            };
            if a == 0 {
                continue;
            }
            if let Some(&t) = TICK_FUNCTIONS.iter().find(|&&t| t == name) {
                k.tick.push((a, t));
            }
            k.by_addr.entry(a).or_insert_with(|| name.into());
        }
        k
    }

    /// The tick handler at `addr`, if it is one.
    pub fn tick_at(&self, addr: u64) -> Option<&'static str> {
        self.tick.iter().find(|t| t.0 == addr).map(|t| t.1)
    }

    pub fn has_tick(&self) -> bool {
        !self.tick.is_empty()
    }

    /// The addresses of the tick handlers found.
    pub fn tick_addresses(&self) -> Vec<u64> {
        self.tick.iter().map(|t| t.0).collect()
    }

    /// The symbol at exactly `addr` (function pointers point at symbol starts).
    pub fn name_at(&self, addr: u64) -> Option<&str> {
        self.by_addr.get(&addr).map(|s| &**s)
    }
}

impl Symbols for Kallsyms {
    fn tick_at(&self, addr: u64) -> Option<&'static str> {
        Kallsyms::tick_at(self, addr)
    }
    fn name_at(&self, addr: u64) -> Option<&str> {
        Kallsyms::name_at(self, addr)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_tick_handlers_and_names() {
        let k = Kallsyms::parse(
            "ffffffff814352e0 t tick_nohz_handler\n\
             ffffffff81400000 T hrtimer_wakeup\n\
             ffffffff81500000 d some_data\n\
             0000000000000000 t hidden\n\
             garbage\n",
        );
        assert_eq!(k.tick_at(0xffffffff814352e0), Some("tick_nohz_handler"));
        assert_eq!(k.tick_at(0xffffffff81400000), None);
        assert_eq!(k.name_at(0xffffffff81400000), Some("hrtimer_wakeup"));
        assert_eq!(k.name_at(0xffffffff81500000), None);
        assert!(k.has_tick());
        assert!(!Kallsyms::parse("0000000000000000 t tick_nohz_handler\n").has_tick());
    }
}
