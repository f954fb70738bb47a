//! Counted nouns as people write them: `1 task`, `2 tasks`, `1 process`, `3 processes`.

/// `n` and the noun, singular for one.
pub fn count(n: impl Into<u64>, noun: &str) -> String {
    let n = n.into();
    if n == 1 {
        format!("1 {noun}")
    } else if noun.ends_with('s') || noun.ends_with('x') || noun.ends_with("ch") {
        format!("{n} {noun}es")
    } else {
        format!("{n} {noun}s")
    }
}

#[cfg(test)]
mod tests {
    use super::count;

    #[test]
    fn one_is_singular() {
        assert_eq!(count(1u64, "task"), "1 task");
        assert_eq!(count(0u64, "task"), "0 tasks");
        assert_eq!(count(3u32, "process"), "3 processes");
        assert_eq!(count(1u32, "CID change"), "1 CID change");
        assert_eq!(count(2u16, "user"), "2 users");
    }
}
