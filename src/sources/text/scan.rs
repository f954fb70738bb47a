//! Scanning text columns: timestamps, trimming, spaces.

/// `1623.480444` / `1622.415298712` / `12345` (a raw counter clock) → ns.
pub fn parse_ts(s: &[u8]) -> Option<u64> {
    parse_ts_with(s, true)
}

/// [`parse_ts`] of a column that must have a fraction: `None` for a whole number (a clock's
/// raw ticks, not seconds).
#[inline]
pub fn parse_ts_fraction(s: &[u8]) -> Option<u64> {
    parse_ts_with(s, false)
}

#[inline(always)]
fn parse_ts_with(s: &[u8], whole_ok: bool) -> Option<u64> {
    // Runs once per line: no search for the dot, and the fraction (6 or 9 digits) read
    // eight bytes at a time.
    let mut v: u64 = 0;
    let mut i = 0;
    // each byte read once: a mapped file cut while it is read turns bytes to zeros between two
    // reads of the same place
    while let Some(d) = s.get(i).map(|b| b.wrapping_sub(b'0')).filter(|d| *d <= 9) {
        if i == 10 {
            // more than ten digits of seconds: no clock of ours
            return None;
        }
        v = v * 10 + d as u64;
        i += 1;
    }
    if i == 0 {
        return None;
    }
    if i == s.len() {
        return whole_ok.then_some(v * 1_000_000_000);
    }
    if s[i] != b'.' {
        return None;
    }
    let frac = &s[i + 1..];
    let f = match frac.len() {
        0 => 0,
        1..=8 => digits8(frac)? * 10u64.pow(9 - frac.len() as u32),
        9 => digits8(&frac[..8])? * 10 + digits8(&frac[8..])?,
        _ => return None,
    };
    Some(v * 1_000_000_000 + f)
}

/// Up to eight ASCII digits → their value, or `None` if any byte is not a digit (SWAR: the
/// bytes are checked and combined in a u64, as simdjson does).
fn digits8(s: &[u8]) -> Option<u64> {
    debug_assert!(!s.is_empty() && s.len() <= 8);
    // left-pad with '0' so the number ends in the last byte (assembled in a register: a
    // variable-length copy to the stack costs a memcpy call and a store-forwarding stall)
    let x = match <[u8; 8]>::try_from(s) {
        Ok(b) => u64::from_le_bytes(b),
        Err(_) => {
            let mut y = 0u64;
            for (j, &c) in s.iter().enumerate() {
                y |= (c as u64) << (8 * j);
            }
            let pad = 8 * (8 - s.len() as u32);
            (y << pad) | (0x3030_3030_3030_3030 >> (64 - pad))
        }
    };
    digits_word(x)
}

/// Eight ASCII digits in a little-endian word (first digit lowest) → their value.
#[inline(always)]
fn digits_word(x: u64) -> Option<u64> {
    // every byte in 0x30..=0x39
    if (x & 0xF0F0_F0F0_F0F0_F0F0) != 0x3030_3030_3030_3030
        || ((x.wrapping_add(0x0606_0606_0606_0606)) & 0xF0F0_F0F0_F0F0_F0F0)
            != 0x3030_3030_3030_3030
    {
        return None;
    }
    let mut v = x - 0x3030_3030_3030_3030;
    v = v.wrapping_mul(10).wrapping_add(v >> 8);
    const MASK: u64 = 0x0000_00FF_0000_00FF;
    const MUL1: u64 = 100 + (1_000_000 << 32);
    const MUL2: u64 = 1 + (10_000 << 32);
    v = ((v & MASK).wrapping_mul(MUL1)).wrapping_add(((v >> 16) & MASK).wrapping_mul(MUL2)) >> 32;
    Some(v & 0xFFFF_FFFF)
}

pub fn trim_start(s: &[u8]) -> &[u8] {
    // comms are right-aligned in a 16-wide column: skip the padding eight bytes at a time
    let mut n = 0;
    while s.len() >= n + 8 && s[n..n + 8] == *b"        " {
        n += 8;
    }
    // the rest of the padding (0-7 bytes, a different count per comm) found in one word
    if s.len() >= n + 8 {
        let x = word(s, n);
        let keep =
            nonzero_exact(x ^ (ONES * b' ' as u64)) & nonzero_exact(x ^ (ONES * b'\t' as u64));
        if keep != 0 {
            return &s[n + (keep.trailing_zeros() / 8) as usize..];
        }
    }
    while n < s.len() && matches!(s[n], b' ' | b'\t') {
        n += 1;
    }
    &s[n..]
}

pub fn trim_end(s: &[u8]) -> &[u8] {
    let mut e = s.len();
    // a word at a time: the padding after a pid is 1-7 bytes, a byte loop's exit a
    // mispredicted branch on most lines
    while e >= 8 {
        let x = word(s, e - 8);
        let keep =
            nonzero_exact(x ^ (ONES * b' ' as u64)) & nonzero_exact(x ^ (ONES * b'\t' as u64));
        if keep != 0 {
            return &s[..e - 8 + highest(keep) + 1];
        }
        e -= 8;
    }
    while e > 0 && matches!(s[e - 1], b' ' | b'\t') {
        e -= 1;
    }
    &s[..e]
}

/// The last position of `a` in `s`, a word at a time from the end.
#[inline]
pub fn rfind_byte(s: &[u8], a: u8) -> Option<usize> {
    let mut e = s.len();
    while e >= 8 {
        let hit = !nonzero_exact(word(s, e - 8) ^ (ONES * a as u64)) & HIGH;
        if hit != 0 {
            return Some(e - 8 + highest(hit));
        }
        e -= 8;
    }
    s[..e].iter().rposition(|&b| b == a)
}

/// Index of the first non-space byte at or after `i` (a byte loop: the runs skipped are
/// mostly one byte long).
pub fn skip_spaces(s: &[u8], mut i: usize) -> usize {
    while i < s.len() && s[i] == b' ' {
        i += 1;
    }
    i
}

/// The decimal number `s[from..]` of 1-8 digits, read as one word when eight bytes end
/// where it ends (else byte by byte); `None` if a byte is not a digit.
#[inline]
pub fn digits_ending(s: &[u8], from: usize) -> Option<u64> {
    let n = s.len().checked_sub(from)?;
    if n == 0 || n > 8 || s.len() < 8 {
        return parse_u64(s.get(from..)?);
    }
    let x = word(s, s.len() - 8);
    // the bytes before the number read as '0'
    let low = if n == 8 { 0 } else { u64::MAX >> (8 * n) };
    digits_word((x & !low) | (0x3030_3030_3030_3030 & low))
}

pub const ONES: u64 = 0x0101_0101_0101_0101;
pub const HIGH: u64 = 0x8080_8080_8080_8080;

/// A byte of `x` is zero → its high bit set (exact for the lowest such byte).
#[inline(always)]
pub fn zero(x: u64) -> u64 {
    x.wrapping_sub(ONES) & !x & HIGH
}

/// A byte of `x` is not zero → its high bit set, exactly for every byte (no carries between
/// bytes: what a search from the end needs).
#[inline(always)]
fn nonzero_exact(x: u64) -> u64 {
    const LOW7: u64 = 0x7F7F_7F7F_7F7F_7F7F;
    (((x & LOW7).wrapping_add(LOW7)) | x) & HIGH
}

/// The index (0-7) of the highest byte whose high bit is set in `t` (`t != 0`).
#[inline(always)]
fn highest(t: u64) -> usize {
    7 - (t.leading_zeros() / 8) as usize
}

/// The eight bytes of `s` at `at`, as a little-endian word.
#[inline(always)]
fn word(s: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&s[at..at + 8]);
    u64::from_le_bytes(w)
}

/// A CPU number, below [`crate::events::Trace::MAX_CPUS`] (the kernel's largest NR_CPUS): a larger one is
/// damage, and would otherwise become thousands of empty lanes.
pub fn parse_cpu(s: &[u8]) -> Option<u16> {
    parse_u64(s)
        .filter(|&c| c < crate::events::Trace::MAX_CPUS as u64)
        .map(|c| c as u16)
}

pub fn parse_u64(s: &[u8]) -> Option<u64> {
    if s.is_empty() || s.len() > 19 {
        return None;
    }
    let mut v: u64 = 0;
    for &b in s {
        if !b.is_ascii_digit() {
            return None;
        }
        v = v * 10 + (b - b'0') as u64;
    }
    Some(v)
}

/// The `[CPU]` column whose '[' is at `i`: the CPU and the position of its ']'. Three digits
/// (the kernel's %03d) are one case, else up to five are read.
#[inline(always)]
pub fn cpu_column(line: &[u8], i: usize) -> Option<(u16, usize)> {
    if let Some(&[a, b, c, b']']) = line.get(i + 1..i + 5)
        && a.is_ascii_digit()
        && b.is_ascii_digit()
        && c.is_ascii_digit()
    {
        let v = (a - b'0') as u16 * 100 + (b - b'0') as u16 * 10 + (c - b'0') as u16;
        return Some((v, i + 4));
    }
    let mut j = i + 1;
    while j < line.len() && line[j].is_ascii_digit() {
        j += 1;
    }
    if j == i + 1 || j - i - 1 > 5 || line.get(j) != Some(&b']') {
        return None;
    }
    Some((parse_cpu(&line[i + 1..j])?, j))
}

/// Calls `f` with each eight-byte word of `s[from..]` and its position until `f` returns
/// `Some`; the last word is the one ending at `s.len()`, its bytes before the position masked
/// off (`mask`: the high bits `f` may use). No byte loop: a column's variable length would
/// make a byte loop's exit a mispredicted branch on every line.
#[inline(always)]
pub fn scan_words<T>(
    s: &[u8],
    from: usize,
    mut f: impl FnMut(u64, u64, usize) -> Option<T>,
) -> Option<T> {
    let mut i = from;
    while i + 8 <= s.len() {
        if let Some(r) = f(word(s, i), HIGH, i) {
            return Some(r);
        }
        i += 8;
    }
    if i >= s.len() {
        return None;
    }
    if s.len() >= 8 {
        // the word ending at the end: its first `skip` bytes were scanned already
        let at = s.len() - 8;
        let skip = i - at;
        return f(word(s, at), HIGH << (8 * skip), at);
    }
    let n = s.len() - i;
    f(short_word(&s[i..]), HIGH >> (8 * (8 - n)), i)
}

/// 1–7 bytes as a little-endian word, upper bytes zero: two overlapping loads combined in a
/// register (a variable-length copy to the stack would stall the load that reads it back).
#[inline(always)]
fn short_word(s: &[u8]) -> u64 {
    let n = s.len();
    let at = |k: usize, w: usize| -> u64 {
        let mut v = 0u64;
        for j in 0..w {
            v |= (s[k + j] as u64) << (8 * j);
        }
        v
    };
    match n {
        0 => 0,
        1 => s[0] as u64,
        2..=3 => at(0, 2) | (at(n - 2, 2) << (8 * (n - 2))),
        _ => at(0, 4) | (at(n - 4, 4) << (8 * (n - 4))),
    }
}

/// The first position at or after `from` holding `a` or `b`, eight bytes at a time (the
/// columns scanned here are 5–20 bytes long and this runs several times per line).
#[inline]
pub fn find2(s: &[u8], from: usize, a: u8, b: u8) -> Option<usize> {
    let (pa, pb) = (ONES * a as u64, ONES * b as u64);
    scan_words(s, from, |x, mask, at| {
        let t = (zero(x ^ pa) | zero(x ^ pb)) & mask;
        (t != 0).then(|| at + (t.trailing_zeros() / 8) as usize)
    })
}

/// The end of an event's name at `from`: its colon (or the space that shows this is no event
/// line), `None` when a '(' comes first (a syscall's `sys_foo(arg: 1, ...)`) or neither is found.
#[inline]
pub fn name_end(s: &[u8], from: usize) -> Option<usize> {
    let (colon, space, paren) = (ONES * b':' as u64, ONES * b' ' as u64, ONES * b'(' as u64);
    let r = scan_words(s, from, |x, mask, at| {
        let t = (zero(x ^ colon) | zero(x ^ space)) & mask;
        let p = zero(x ^ paren) & mask;
        // (the lowest bit of each is exact: a '(' before the end rejects the line)
        match (t != 0, p != 0) {
            (_, true) if t == 0 || p.trailing_zeros() < t.trailing_zeros() => Some(None),
            (true, _) => Some(Some(at + (t.trailing_zeros() / 8) as usize)),
            _ => None,
        }
    });
    r.flatten()
}

/// Whether `s` holds `a`: the ']' test every event line's payload gets (a merged line holds a
/// second head), eight bytes a step, inline (a payload is ~100 bytes: memchr's dispatch would
/// cost more than the scan).
#[inline]
pub fn has_byte(s: &[u8], a: u8) -> bool {
    let pa = ONES * a as u64;
    scan_words(s, 0, |x, mask, _| (zero(x ^ pa) & mask != 0).then_some(())).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Bytes that trip word tricks: the searched ones, their high-bit twins, 0, 0xff, digits
    /// and the bytes next to '0' and '9'.
    fn tricky() -> impl Strategy<Value = Vec<u8>> {
        proptest::collection::vec(
            prop::sample::select(vec![
                b' ',
                b'\t',
                b'-',
                b'(',
                b'0',
                b'5',
                b'9',
                b'/',
                b':',
                b'a',
                0,
                0xff,
                0x80,
                b' ' ^ 0x80,
                b'-' ^ 0x80,
                b'0' + 0x80,
                0x20 - 1,
                0x7f,
            ]),
            0..40,
        )
    }

    proptest::proptest! {
        #[test]
        fn trim_end_is_the_byte_loop(s in tricky()) {
            let mut e = s.len();
            while e > 0 && matches!(s[e - 1], b' ' | b'\t') {
                e -= 1;
            }
            proptest::prop_assert_eq!(trim_end(&s), &s[..e]);
        }

        #[test]
        fn trim_start_is_the_byte_loop(s in tricky()) {
            let n = s.iter().position(|&b| !matches!(b, b' ' | b'\t')).unwrap_or(s.len());
            proptest::prop_assert_eq!(trim_start(&s), &s[n..]);
        }

        #[test]
        fn rfind_byte_is_rposition(s in tricky()) {
            for a in [b'-', b'(', b' '] {
                proptest::prop_assert_eq!(rfind_byte(&s, a), s.iter().rposition(|&b| b == a));
            }
        }

        #[test]
        fn digits_ending_is_parse_u64(s in tricky(), from in 0usize..45) {
            let from = from.min(s.len());
            let want = parse_u64(&s[from..]);
            proptest::prop_assert_eq!(digits_ending(&s, from), want);
        }

        #[test]
        fn digits_ending_reads_numbers_after_anything(pre in tricky(), n in 0u64..100_000_000) {
            let mut s = pre.clone();
            s.extend_from_slice(n.to_string().as_bytes());
            proptest::prop_assert_eq!(digits_ending(&s, pre.len()), Some(n));
        }

        #[test]
        fn find2_is_the_first_match(s in proptest::collection::vec(prop::sample::select(vec![b' ', b':', b'a', 0x80, 0xff, 0]), 0..40), from in 0usize..45) {
            let from = from.min(s.len());
            let want = (from..s.len()).find(|&j| s[j] == b' ' || s[j] == b':');
            proptest::prop_assert_eq!(find2(&s, from, b' ', b':'), want);
        }

        #[test]
        fn name_end_is_the_first_colon_or_space_after_no_paren(s in proptest::collection::vec(prop::sample::select(vec![b' ', b':', b'(', b'a', 0x80, 0xff, 0, b':' ^ 0x80]), 0..40), from in 0usize..45) {
            let from = from.min(s.len());
            let end = (from..s.len()).find(|&j| s[j] == b' ' || s[j] == b':');
            let paren = (from..s.len()).find(|&j| s[j] == b'(');
            let want = match (end, paren) {
                (Some(e), Some(p)) if p < e => None,
                (e, _) => e,
            };
            proptest::prop_assert_eq!(name_end(&s, from), want);
        }

        #[test]
        fn short_word_is_the_bytes(s in proptest::collection::vec(proptest::num::u8::ANY, 0..8)) {
            let mut w = [0u8; 8];
            w[..s.len()].copy_from_slice(&s);
            proptest::prop_assert_eq!(short_word(&s), u64::from_le_bytes(w));
        }

        #[test]
        fn has_byte_is_contains(s in proptest::collection::vec(prop::sample::select(vec![b']', b']' ^ 0x80, b'\\', b'^', 0x5c, 0, 0xff, b'a']), 0..70)) {
            proptest::prop_assert_eq!(has_byte(&s, b']'), s.contains(&b']'));
        }
    }

    #[test]
    fn timestamps() {
        assert_eq!(parse_ts(b"1623.480444"), Some(1_623_480_444_000));
        assert_eq!(parse_ts(b"1622.415298712"), Some(1_622_415_298_712));
        assert_eq!(parse_ts(b"0.5"), Some(500_000_000));
        assert_eq!(parse_ts(b"77"), Some(77_000_000_000));
        assert_eq!(parse_ts(b"1.2.3"), None);
        assert_eq!(parse_ts(b""), None);
        assert_eq!(parse_ts(b"99999999999.1"), None);
    }

    #[test]
    fn timestamps_every_fraction_width() {
        for digits in 0..=9u32 {
            let frac = "123456789".get(..digits as usize).unwrap_or("");
            let text = if digits == 0 {
                "42".to_string()
            } else {
                format!("42.{frac}")
            };
            let want = 42_000_000_000 + frac.parse::<u64>().unwrap_or(0) * 10u64.pow(9 - digits);
            assert_eq!(parse_ts(text.as_bytes()), Some(want), "{text}");
        }
        assert_eq!(parse_ts(b"1.0000000a"), None);
        assert_eq!(parse_ts(b"1.12345678:"), None);
        assert_eq!(parse_ts(b"1.1234567890"), None);
        assert_eq!(parse_ts(b"1./"), None);
        assert_eq!(parse_ts(b"5."), Some(5_000_000_000));
        assert_eq!(parse_ts(b"12345678901"), None);
        assert_eq!(parse_ts(b"99999999999999999999999999.5"), None);
        assert_eq!(
            parse_ts(b"9999999999.999999999"),
            Some(9_999_999_999_999_999_999)
        );
    }

    #[test]
    fn trim_start_skips_padding() {
        assert_eq!(trim_start(b"                bash"), b"bash");
        assert_eq!(trim_start(b" \t x"), b"x");
        assert_eq!(trim_start(b"        "), b"");
        assert_eq!(trim_start(b"x "), b"x ");
    }
}
