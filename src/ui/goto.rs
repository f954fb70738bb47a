//! Go to a time or an event (`:`): `+1.5ms` from the start of the data, `1639.2041` in the
//! capture's own seconds (as the cursor pane prints them), `#1234` or `1234` the event of that
//! number, `50%` of the way through the capture.

use super::error::InputError;

/// Where a typed go-to points.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// An event number, 1-based as the cursor pane counts.
    Event(u64),
    /// Nanoseconds after the start of the data.
    Offset(u64),
    /// An absolute timestamp, ns.
    Time(u64),
    /// Per ten thousand of the capture's length.
    Share(u64),
}

/// Nanoseconds of `num` in `unit` (none: seconds).
fn scaled(num: &str, unit: &str) -> Option<u64> {
    let per: f64 = match unit {
        "" | "s" => 1e9,
        "ms" => 1e6,
        "us" | "µs" => 1e3,
        "ns" => 1.0,
        _ => return None,
    };
    let v: f64 = num.parse().ok()?;
    (v.is_finite() && v >= 0.0).then(|| (v * per).round() as u64)
}

pub fn parse(text: &str) -> Result<Target, InputError> {
    let t: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    let bad = || InputError::GoToSyntax {
        found: text.trim().to_string(),
    };
    if let Some(n) = t.strip_prefix('#') {
        return n.parse().map(Target::Event).map_err(|_| bad());
    }
    if let Some(p) = t.strip_suffix('%') {
        let v: f64 = p.parse().map_err(|_| bad())?;
        if !(0.0..=100.0).contains(&v) {
            return Err(bad());
        }
        return Ok(Target::Share((v * 100.0).round() as u64));
    }
    let (rel, body) = match t.strip_prefix('+') {
        Some(b) => (true, b),
        None => (false, t.as_str()),
    };
    let split = body
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(body.len());
    let (num, unit) = body.split_at(split);
    if num.is_empty() {
        return Err(bad());
    }
    if !rel && unit.is_empty() && !num.contains('.') {
        return num.parse().map(Target::Event).map_err(|_| bad());
    }
    let ns = scaled(num, unit).ok_or_else(bad)?;
    Ok(if rel || !unit.is_empty() {
        Target::Offset(ns)
    } else {
        Target::Time(ns)
    })
}

/// The event index (0-based) a target means in a capture of `n` events from `first` to `last`
/// (ns), with `origin` the start of the data and `near` the index of the event nearest a
/// time.
pub fn resolve(
    target: Target,
    n: usize,
    (origin, first, last): (u64, u64, u64),
    near: impl Fn(u64) -> usize,
) -> Result<usize, InputError> {
    Ok(match target {
        Target::Event(k) => {
            if k == 0 || k as usize > n {
                return Err(InputError::NoSuchEvent { n: k, last: n });
            }
            k as usize - 1
        }
        Target::Offset(d) => near(origin.saturating_add(d)),
        Target::Time(ts) => near(ts),
        Target::Share(p) => {
            let span = last.saturating_sub(first) as u128;
            near(first + (span * p as u128 / 10_000) as u64)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_a_go_to_line_means() {
        assert_eq!(parse("#12"), Ok(Target::Event(12)));
        assert_eq!(parse("12"), Ok(Target::Event(12)));
        assert_eq!(parse("+1.5ms"), Ok(Target::Offset(1_500_000)));
        assert_eq!(parse("1.5 ms"), Ok(Target::Offset(1_500_000)));
        assert_eq!(parse("+2"), Ok(Target::Offset(2_000_000_000)));
        assert_eq!(parse("+250us"), Ok(Target::Offset(250_000)));
        assert_eq!(parse("1639.2041"), Ok(Target::Time(1_639_204_100_000)));
        assert_eq!(parse("50%"), Ok(Target::Share(5000)));
        for bad in ["", "x", "+", "1.5 parsecs", "150%", "#x", "-3"] {
            let e = parse(bad).unwrap_err();
            assert!(e.to_string().starts_with("go to: expected"), "{bad}: {e}");
        }
        let near = |ts: u64| (ts / 10) as usize;
        let span = (1000, 1000, 2000);
        assert_eq!(resolve(Target::Event(3), 5, span, near), Ok(2));
        assert!(resolve(Target::Event(6), 5, span, near).is_err());
        assert!(resolve(Target::Event(0), 5, span, near).is_err());
        assert_eq!(resolve(Target::Offset(500), 5, span, near), Ok(150));
        assert_eq!(resolve(Target::Share(5000), 5, span, near), Ok(150));
    }
}
