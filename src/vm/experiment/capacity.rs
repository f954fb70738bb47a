//! The review question of seed 000 (patch 3/4): with batches of B CPUs, how many CPUs does it
//! take before one complete scan of the cidmask takes longer than 100 ms, the compaction
//! period?
//!
//! Cost model, from what the experiment measured (medians per kernel × vCPUs):
//! * a scanning call of `task_mm_cid_work` that visits `x` CPUs costs `a + b·x` µs, fitted by
//!   least squares to (CPUs visited per call, median call duration): a stock kernel visits every
//!   possible CPU per call, the resume-batch kernel B;
//! * a complete scan of N CPUs in batches of B is `⌈N/B⌉` such calls, and between two batches
//!   the mm waits `g` µs for its next return to user space (the median gap measured between
//!   batches of one scan: `scan_cost_us.batch_gap_us`);
//! * so `T(N) = ⌈N/B⌉·(a + b·B) + (⌈N/B⌉ − 1)·g`, and the answer is the least N (a multiple
//!   of B) with `T(N) > 100 ms`, given with `g = 0` (the scan's own cost) and with the measured
//!   `g`. The complete scans measured directly give a third estimate: `B · 100 ms / (p50 of a
//!   complete scan / its batches)`.
//!
//! Under TCG every duration is inflated, by a factor that need not be the same for the scan and
//! for the gap: the answers are lower bounds of what a native machine would need.

use super::summary::Group;
use serde::Serialize;

const LIMIT_US: f64 = 100_000.0;

#[derive(Serialize, Debug, Clone)]
pub struct Capacity {
    pub kernel: String,
    pub kernel_release: Option<String>,
    /// B: the kernel's own CONFIG_RSEQ_CID_SCAN_BATCH, or 8 (the patch's default) for a kernel
    /// that scans whole, as if it had the patches.
    pub batch_cpus: u32,
    pub batch_is_kernels_own: bool,
    /// `a + b·x`: µs per call and per CPU visited.
    pub call_us: f64,
    pub per_cpu_us: f64,
    /// (CPUs visited per call, median µs) the fit used.
    pub fit_points: Vec<(u32, f64)>,
    pub gap_us: Option<f64>,
    pub cpus_for_100ms_scan_only: Option<u64>,
    pub cpus_for_100ms_with_gaps: Option<u64>,
    /// From this kernel's measured complete scans (resume-batch).
    pub cpus_for_100ms_from_complete_scans: Option<u64>,
    pub cost_model: &'static str,
}

pub const COST_MODEL: &str = "T(N) = ceil(N/B)*c + (ceil(N/B)-1)*g with c the cost of one batch call: measured (median scanning call) on a kernel with batches, a + b*B on a kernel that scans whole (a + b*x fitted to its median scanning call against the CPUs one call visits); g the median gap between two batches of one scan; answer: least N (a multiple of B) with T(N) > 100 ms";

/// Least squares `y = a + b·x`; with one distinct x, `y = b·x`.
fn fit(points: &[(u32, f64)]) -> Option<(f64, f64)> {
    let n = points.len() as f64;
    if points.is_empty() {
        return None;
    }
    let mx = points.iter().map(|p| p.0 as f64).sum::<f64>() / n;
    let my = points.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = points.iter().map(|p| (p.0 as f64 - mx).powi(2)).sum();
    if sxx == 0.0 {
        return (mx > 0.0).then_some((0.0, my / mx));
    }
    let sxy: f64 = points.iter().map(|p| (p.0 as f64 - mx) * (p.1 - my)).sum();
    let b = (sxy / sxx).max(0.0);
    Some(((my - b * mx).max(0.0), b))
}

/// The least N, a multiple of `b_cpus`, for which ⌈N/B⌉ calls of `call` µs with `gap` µs
/// between them exceed 100 ms.
fn least_cpus(call: f64, gap: f64, b_cpus: u32) -> Option<u64> {
    if call + gap <= 0.0 || !(call + gap).is_finite() {
        return None;
    }
    // nb·call + (nb−1)·gap > LIMIT  ⇔  nb > (LIMIT + gap) / (call + gap)
    let nb = ((LIMIT_US + gap) / (call + gap)).floor() as u64 + 1;
    Some(nb.saturating_mul(b_cpus as u64))
}

fn median_of(groups: &[&Group], m: &str) -> Option<f64> {
    let mut v: Vec<f64> = groups
        .iter()
        .filter_map(|g| g.metrics.get(m)?.as_ref().map(|s| s.median))
        .collect();
    v.sort_by(f64::total_cmp);
    v.get(v.len().checked_sub(1)? / 2).copied()
}

/// One answer per kernel; `batch` gives each kernel's CONFIG_RSEQ_CID_SCAN_BATCH (None: scans
/// whole). A kernel with batches has its batch call measured (`a + b·B` is its median scanning
/// call); a kernel that scans whole gets `a + b·x` fitted to its own CPU counts (to every
/// kernel's calls when it was run at one count only) and is asked "as if" with batches of 8.
pub fn answer(groups: &[Group], batch: impl Fn(&Group) -> Option<u32>) -> Vec<Capacity> {
    let point = |g: &Group| -> Option<(u32, f64)> {
        let y = g.metrics.get("scan_call_p50_us")?.as_ref()?.median;
        Some((batch(g).map_or(g.cpus, |b| b.min(g.cpus)), y))
    };
    let all: Vec<(u32, f64)> = groups.iter().filter_map(point).collect();
    let mut kernels: Vec<&str> = groups.iter().map(|g| g.kernel.as_str()).collect();
    kernels.dedup();
    kernels
        .into_iter()
        .filter_map(|k| {
            let mine: Vec<&Group> = groups.iter().filter(|g| g.kernel == k).collect();
            let own = mine.iter().find_map(|g| batch(g));
            let bc = own.unwrap_or(8).max(1);
            let pts: Vec<(u32, f64)> = mine.iter().filter_map(|g| point(g)).collect();
            let distinct = {
                let mut x: Vec<u32> = pts.iter().map(|p| p.0).collect();
                x.sort_unstable();
                x.dedup();
                x.len()
            };
            let (fit_points, (a, b)) = if distinct >= 2 || own.is_some() {
                (pts.clone(), fit(&pts)?)
            } else {
                (all.clone(), fit(&all)?)
            };
            // with batches, the call that visits B CPUs was measured: no extrapolation
            let call = match own {
                Some(_) => median_of(&mine, "scan_call_p50_us")?,
                None => a + b * bc as f64,
            };
            // the gap at the most vCPUs measured: what a bigger machine would see first
            let gap = mine
                .iter()
                .filter(|_| own.is_some())
                .filter_map(|g| Some((g.cpus, g.metrics.get("batch_gap_p50_us")?.as_ref()?.median)))
                .max_by_key(|p| p.0)
                .map(|p| p.1);
            // a complete scan of g.cpus in ⌈cpus/B⌉ batches: per batch, scan and gap together
            let direct = mine
                .iter()
                .filter(|_| own.is_some())
                .filter_map(|g| {
                    let ms = g.metrics.get("complete_scan_p50_ms")?.as_ref()?.median;
                    let per_batch_us = ms * 1000.0 / g.cpus.div_ceil(bc) as f64;
                    (per_batch_us > 0.0).then_some((g.cpus, per_batch_us))
                })
                .max_by_key(|p| p.0)
                .map(|(_, us)| ((LIMIT_US / us).ceil() as u64).saturating_mul(bc as u64));
            Some(Capacity {
                kernel: k.to_string(),
                kernel_release: mine.iter().find_map(|g| g.kernel_release.clone()),
                batch_cpus: bc,
                batch_is_kernels_own: own.is_some(),
                call_us: (call * 1000.0).round() / 1000.0,
                per_cpu_us: (b * 1000.0).round() / 1000.0,
                fit_points,
                gap_us: gap,
                cpus_for_100ms_scan_only: least_cpus(call, 0.0, bc),
                cpus_for_100ms_with_gaps: gap.and_then(|g| least_cpus(call, g, bc)),
                cpus_for_100ms_from_complete_scans: direct,
                cost_model: COST_MODEL,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_through_two_points_and_a_ray_through_one() {
        let (a, b) = fit(&[(8, 10.0), (64, 66.0)]).unwrap();
        assert!((a - 2.0).abs() < 1e-9 && (b - 1.0).abs() < 1e-9, "{a} {b}");
        assert_eq!(fit(&[(16, 32.0)]), Some((0.0, 2.0)));
        assert_eq!(fit(&[]), None);
    }

    #[test]
    fn the_seed_authors_own_numbers_give_their_answer() {
        // 128 CPUs in 16 batches of 8 took up to 15 ms (hackbench): ~937 µs a batch with its
        // gap; "it would take more than 800 CPUs to reach the 100ms limit"
        let n = least_cpus(10.0, 927.5, 8).unwrap();
        assert!((800..=900).contains(&n), "{n}");
        // the scan alone, at 10 µs a batch of 8: 10001 batches
        assert_eq!(least_cpus(10.0, 0.0, 8), Some(80_008));
    }
}
