//! Interned byte strings (comms, event names). Comms are bytes, not UTF-8: the kernel copies
//! whatever a thread named itself, so a comm may hold any byte but NUL.

use std::borrow::Cow;
use std::hash::Hasher;

/// Index of an interned string.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct StrId(pub u32);

/// The strings end to end in one buffer, found by hash through a table of their ids: a
/// million distinct comms cost ~20 bytes each (a map of boxed strings and a list of them cost
/// ~130: two heap blocks per string and a table of 24-byte buckets).
#[derive(Clone, Default)]
pub struct Strings {
    bytes: Vec<u8>,
    /// Per id, where its bytes end in `bytes` (they start where the previous id's end).
    ends: Vec<usize>,
    table: hashbrown::HashTable<u32>,
    recent: [u32; 32],
}

impl std::fmt::Debug for Strings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Strings")
            .field("len", &self.ends.len())
            .field("bytes", &self.bytes.len())
            .finish()
    }
}

fn hash(b: &[u8]) -> u64 {
    let mut h = rustc_hash::FxHasher::default();
    h.write(b);
    h.finish()
}

/// The bytes of `id`.
fn slice<'a>(bytes: &'a [u8], ends: &[usize], id: u32) -> Option<&'a [u8]> {
    let end = *ends.get(id as usize)?;
    let start = match id {
        0 => 0,
        _ => ends[id as usize - 1],
    };
    bytes.get(start..end)
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
        if let Some(b) = slice(&self.bytes, &self.ends, r)
            && same(b, bytes)
        {
            return StrId(r);
        }
        let h = hash(bytes);
        let (all, ends) = (&self.bytes, &self.ends);
        let found = self.table.find(h, |&id| {
            slice(all, ends, id).is_some_and(|b| same(b, bytes))
        });
        if let Some(&id) = found {
            self.recent[slot] = id;
            return StrId(id);
        }
        let id = self.ends.len() as u32;
        self.recent[slot] = id;
        self.bytes.extend_from_slice(bytes);
        self.ends.push(self.bytes.len());
        let (all, ends) = (&self.bytes, &self.ends);
        self.table
            .insert_unique(h, id, |&id| hash(slice(all, ends, id).unwrap_or_default()));
        StrId(id)
    }

    pub fn intern_str(&mut self, s: &str) -> StrId {
        self.intern(s.as_bytes())
    }

    /// Looks a string up without interning it.
    pub fn find(&self, bytes: &[u8]) -> Option<StrId> {
        let (all, ends) = (&self.bytes, &self.ends);
        (self.table)
            .find(hash(bytes), |&id| slice(all, ends, id) == Some(bytes))
            .map(|&i| StrId(i))
    }

    pub fn get(&self, id: StrId) -> &[u8] {
        slice(&self.bytes, &self.ends, id.0).unwrap_or(b"")
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
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.len() <= 1
    }

    /// Approximate heap bytes, for memory reporting.
    pub fn heap_bytes(&self) -> usize {
        self.bytes.capacity()
            + self.ends.capacity() * std::mem::size_of::<usize>()
            + self.table.capacity() * 5
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
        assert_eq!(s.find(b"caf\xc3\xa9"), Some(b));
        assert_eq!(s.find(b"cafe"), None);
        assert_eq!(s.intern(b""), StrId::default());
    }

    /// Many strings (the table grows many times): each keeps its id and bytes.
    #[test]
    fn a_hundred_thousand_strings_keep_their_ids() {
        let mut s = Strings::new();
        let ids: Vec<StrId> = (0..100_000)
            .map(|i| s.intern(format!("w{i}").as_bytes()))
            .collect();
        for (i, id) in ids.iter().enumerate() {
            assert_eq!(s.get(*id), format!("w{i}").as_bytes());
            assert_eq!(s.intern(format!("w{i}").as_bytes()), *id);
            assert_eq!(s.find(format!("w{i}").as_bytes()), Some(*id));
        }
        assert_eq!(s.len(), 100_001);
    }
}
