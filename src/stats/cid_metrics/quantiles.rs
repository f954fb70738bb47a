//! Count, median, p99 and maximum of a stream of durations in bounded memory: exact up to
//! [`EXACT`] samples, then a log-linear histogram (32 sub-buckets per power of two, so a
//! quantile is within 1/32 ≈ 3 % of the exact sample; the maximum stays exact).

use serde::Serialize;

const SUB_BITS: u32 = 5;
/// Samples kept as they are (32 KiB); beyond, the histogram answers.
pub const EXACT: usize = 4096;
const SUB: u64 = 1 << SUB_BITS;

/// Durations in ns.
#[derive(Clone, Debug, Default)]
pub struct Quantiles {
    exact: Vec<u64>,
    counts: Vec<u64>,
    n: u64,
    max: u64,
    sum: u128,
}

/// What `cid_metrics` prints of a [`Quantiles`], in the unit its key names (µs or ms).
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct Summary {
    pub count: u64,
    pub p50: f64,
    pub p99: f64,
    pub max: f64,
    pub mean: f64,
}

fn bucket(v: u64) -> usize {
    if v < SUB {
        return v as usize;
    }
    let exp = 63 - v.leading_zeros(); // >= SUB_BITS
    let shift = exp - SUB_BITS;
    let sub = (v >> shift) - SUB; // 0..SUB
    ((exp - SUB_BITS + 1) as u64 * SUB + sub) as usize
}

/// The middle of bucket `b`'s value range.
fn value(b: usize) -> u64 {
    let b = b as u64;
    if b < SUB {
        return b;
    }
    let exp = b / SUB - 1 + SUB_BITS as u64;
    let sub = b % SUB;
    let shift = exp - SUB_BITS as u64;
    let lo = (SUB + sub) << shift;
    lo + ((1u64 << shift) >> 1)
}

impl Quantiles {
    pub fn add(&mut self, ns: u64) {
        let b = bucket(ns);
        if self.counts.len() <= b {
            self.counts.resize(b + 1, 0);
        }
        self.counts[b] += 1;
        if self.n < EXACT as u64 {
            self.exact.push(ns);
        } else if !self.exact.is_empty() {
            self.exact = Vec::new();
        }
        self.n += 1;
        self.max = self.max.max(ns);
        self.sum += ns as u128;
    }

    pub fn count(&self) -> u64 {
        self.n
    }

    pub fn max_ns(&self) -> u64 {
        self.max
    }

    /// The `q`-quantile (0..=1) in ns, `None` without samples. The highest quantile is the
    /// exact maximum; others are their bucket's middle, never above the maximum.
    pub fn quantile(&self, q: f64) -> Option<u64> {
        if self.n == 0 {
            return None;
        }
        // the rank of the sample (1-based, nearest-rank method)
        let rank = ((q * self.n as f64).ceil() as u64).clamp(1, self.n);
        if rank == self.n {
            return Some(self.max);
        }
        if self.exact.len() as u64 == self.n {
            let mut v = self.exact.clone();
            let (_, x, _) = v.select_nth_unstable((rank - 1) as usize);
            return Some(*x);
        }
        let mut seen = 0;
        for (b, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return Some(value(b).min(self.max));
            }
        }
        Some(self.max)
    }

    pub fn merge(&mut self, o: &Quantiles) {
        if self.exact.len() as u64 == self.n
            && o.exact.len() as u64 == o.n
            && self.n + o.n <= EXACT as u64
        {
            self.exact.extend(&o.exact);
        } else {
            self.exact = Vec::new();
        }
        if self.counts.len() < o.counts.len() {
            self.counts.resize(o.counts.len(), 0);
        }
        for (a, b) in self.counts.iter_mut().zip(&o.counts) {
            *a += b;
        }
        self.n += o.n;
        self.max = self.max.max(o.max);
        self.sum += o.sum;
    }

    /// The summary with values divided by `unit_ns` (1000 for µs, 1e6 for ms); `None` when empty.
    pub fn summary(&self, unit_ns: f64) -> Option<Summary> {
        let q = |x| self.quantile(x).map_or(0.0, |v| round3(v as f64 / unit_ns));
        (self.n > 0).then(|| Summary {
            count: self.n,
            p50: q(0.5),
            p99: q(0.99),
            max: round3(self.max as f64 / unit_ns),
            mean: round3(self.sum as f64 / self.n as f64 / unit_ns),
        })
    }
}

/// Three decimals: what a person reads; JSON stays short.
pub fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_monotone_and_close() {
        let mut last = 0;
        for v in (0..200_000u64).chain([1 << 40, u64::MAX / 3]) {
            let b = bucket(v);
            assert!(b >= last, "{v}");
            last = b;
            let m = value(b);
            let err = (m as f64 - v as f64).abs() / (v.max(1) as f64);
            assert!(err <= 1.0 / SUB as f64, "{v}: {m}");
        }
    }

    #[test]
    fn small_values_are_exact_and_the_top_is_the_maximum() {
        let mut q = Quantiles::default();
        for v in [1, 2, 3, 4, 5, 6, 7, 8, 9, 10] {
            q.add(v);
        }
        assert_eq!(q.quantile(0.5), Some(5));
        assert_eq!(q.quantile(1.0), Some(10));
        assert_eq!(q.quantile(0.99), Some(10));
        assert_eq!(Quantiles::default().quantile(0.5), None);
        let s = q.summary(1.0).unwrap();
        assert_eq!((s.count, s.p50, s.max, s.mean), (10, 5.0, 10.0, 5.5));
    }

    #[test]
    fn up_to_the_exact_cap_quantiles_are_the_samples() {
        let mut q = Quantiles::default();
        for v in [19_000, 25_000, 15_000] {
            q.add(v);
        }
        assert_eq!(q.quantile(0.5), Some(19_000));
        assert_eq!(q.summary(1e3).unwrap().p50, 19.0);
    }

    proptest::proptest! {
        #[test]
        fn a_quantile_is_within_3_percent_of_the_exact_one(v in proptest::collection::vec(0u64..10_000_000, 1..300), q in 0.0f64..1.0) {
            // each value repeated past the exact samples: the histogram answers
            let k = EXACT / v.len() + 1;
            let mut all: Vec<u64> = v.iter().flat_map(|&x| std::iter::repeat_n(x, k)).collect();
            let mut h = Quantiles::default();
            for &x in &all { h.add(x); }
            all.sort_unstable();
            let rank = ((q * all.len() as f64).ceil() as usize).clamp(1, all.len());
            let exact = all[rank - 1] as f64;
            let got = h.quantile(q).unwrap() as f64;
            proptest::prop_assert!((got - exact).abs() <= exact / 32.0 + 1.0, "{got} vs {exact}");
        }
    }
}
