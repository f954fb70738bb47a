//! Interned byte strings (comms, event names). Comms are bytes, not UTF-8: the kernel copies
//! whatever a thread named itself, so a comm may hold any byte but NUL.

use rustc_hash::FxHashMap;
use std::borrow::Cow;

/// Index of an interned string.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct StrId(pub u32);

#[derive(Clone, Debug, Default)]
pub struct Strings {
    map: FxHashMap<Box<[u8]>, u32>,
    list: Vec<Box<[u8]>>,
    /// Ids of recently interned strings by a cheap hash of their shape: a parser interns the
    /// same few comms on every line, and a hit costs one comparison instead of a hash lookup.
    recent: [u32; 32],
}

fn shape(b: &[u8]) -> usize {
    match b {
        [] => 0,
        [f, .., l] => (b.len() * 7 + *f as usize * 3 + *l as usize) & 31,
        [f] => *f as usize & 31,
    }
}

/// `a == b` for short byte strings without a call to memcmp: two overlapping word loads
/// (with `b` a literal, the compiler folds its side into constants).
#[inline]
pub fn same(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    fn word(s: &[u8], i: usize) -> u64 {
        let mut w = [0u8; 8];
        w.copy_from_slice(&s[i..i + 8]);
        u64::from_le_bytes(w)
    }
    fn half(s: &[u8], i: usize) -> u32 {
        let mut w = [0u8; 4];
        w.copy_from_slice(&s[i..i + 4]);
        u32::from_le_bytes(w)
    }
    match n {
        0..=3 => a.iter().zip(b).all(|(x, y)| x == y),
        4..=7 => half(a, 0) == half(b, 0) && half(a, n - 4) == half(b, n - 4),
        8..=16 => word(a, 0) == word(b, 0) && word(a, n - 8) == word(b, n - 8),
        _ => {
            let mut i = 0;
            while i + 8 <= n {
                if word(a, i) != word(b, i) {
                    return false;
                }
                i += 8;
            }
            word(a, n - 8) == word(b, n - 8)
        }
    }
}

impl Strings {
    pub fn new() -> Self {
        let mut s = Strings::default();
        // Id 0 is the empty string, so a `StrId::default()` is always valid.
        s.intern(b"");
        s
    }

    pub fn intern(&mut self, bytes: &[u8]) -> StrId {
        let slot = shape(bytes);
        let r = self.recent[slot];
        if let Some(b) = self.list.get(r as usize)
            && same(b, bytes)
        {
            return StrId(r);
        }
        if let Some(&id) = self.map.get(bytes) {
            self.recent[slot] = id;
            return StrId(id);
        }
        let id = self.list.len() as u32;
        self.recent[slot] = id;
        let b: Box<[u8]> = bytes.into();
        self.list.push(b.clone());
        self.map.insert(b, id);
        StrId(id)
    }

    pub fn intern_str(&mut self, s: &str) -> StrId {
        self.intern(s.as_bytes())
    }

    /// Looks a string up without interning it.
    pub fn find(&self, bytes: &[u8]) -> Option<StrId> {
        self.map.get(bytes).map(|&i| StrId(i))
    }

    pub fn get(&self, id: StrId) -> &[u8] {
        self.list.get(id.0 as usize).map(|b| &b[..]).unwrap_or(b"")
    }

    /// The string as text; invalid UTF-8 is shown with replacement characters.
    pub fn get_lossy(&self, id: StrId) -> Cow<'_, str> {
        String::from_utf8_lossy(self.get(id))
    }

    /// For names known to be ASCII (event names); other bytes give "?".
    pub fn get_str(&self, id: StrId) -> &str {
        std::str::from_utf8(self.get(id)).unwrap_or("?")
    }

    pub fn len(&self) -> usize {
        self.list.len()
    }

    pub fn is_empty(&self) -> bool {
        self.list.len() <= 1
    }

    /// Approximate heap bytes, for memory reporting.
    pub fn heap_bytes(&self) -> usize {
        self.list.iter().map(|b| b.len() * 2 + 48).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interning_is_stable() {
        let mut s = Strings::new();
        let a = s.intern(b"my worker-1");
        let b = s.intern(b"caf\xc3\xa9");
        assert_eq!(s.intern(b"my worker-1"), a);
        assert_ne!(a, b);
        assert_eq!(s.get_lossy(b), "café");
        assert_eq!(s.get(StrId::default()), b"");
        assert_eq!(s.get(StrId(999)), b"");
        let bad = s.intern(b"\xff\xfe");
        assert_eq!(s.get_lossy(bad), "\u{fffd}\u{fffd}");
    }
}
