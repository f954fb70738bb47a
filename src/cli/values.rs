//! The domain types as clap parses them: each `ValueEnum` here names the values of a domain
//! type (their names and one-line help), so the flags hold the domain types themselves. Lists
//! that have a registry come from it — a format in `sources::formats::FORMATS`, a policy in
//! `model::policies::kind`, a workload in `sim::Workload::ALL` is a `--format`, `--policy`,
//! `--workload` value with no change here.

use crate::events::Format;
use crate::model::CidView;
use crate::model::policies::{
    InferSteps, JiffiesClock, KernelVersion, Regime, RqClockMode, ScanScope,
};
use crate::sim::Workload;
use crate::vm::qemu::AccelChoice;
use clap::ValueEnum;
use clap::builder::PossibleValue;
use std::sync::LazyLock;

impl ValueEnum for Format {
    fn value_variants<'a>() -> &'a [Self] {
        static ALL: LazyLock<Vec<Format>> = LazyLock::new(|| {
            crate::sources::formats::FORMATS
                .iter()
                .map(|f| f.format())
                .collect()
        });
        &ALL
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        let f = crate::sources::formats::of(*self)?;
        Some(PossibleValue::new(f.cli_name()).help(f.cli_help()))
    }
}

impl ValueEnum for CidView {
    fn value_variants<'a>() -> &'a [Self] {
        static ALL: LazyLock<Vec<CidView>> = LazyLock::new(|| CidView::all().collect());
        &ALL
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(PossibleValue::new(self.id()).help(self.describe()))
    }
}

impl ValueEnum for InferSteps {
    fn value_variants<'a>() -> &'a [Self] {
        &[InferSteps::Auto, InferSteps::Off]
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        let help = match self {
            InferSteps::Auto => {
                "after the plain replay, place the untraced kernel steps that explain its misses (reported as inferred_steps)"
            }
            InferSteps::Off => "the plain replay alone: every untraced step at its default place",
        };
        Some(PossibleValue::new(self.id()).help(help))
    }
}

impl ValueEnum for KernelVersion {
    fn value_variants<'a>() -> &'a [Self] {
        &[
            KernelVersion::V6_4,
            KernelVersion::V6_13,
            KernelVersion::V6_14,
        ]
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        let help = match self {
            KernelVersion::V6_4 => "6.4-6.12: first-zero allocation",
            KernelVersion::V6_13 => "6.13: recent_cid hint and expansion, no shrink",
            KernelVersion::V6_14 => "6.14-6.18: with the max_nr_cid shrink",
        };
        Some(PossibleValue::new(self.id()).help(help))
    }
}

impl ValueEnum for Regime {
    fn value_variants<'a>() -> &'a [Self] {
        &[Regime::Legacy, Regime::Fast]
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        let help = match self {
            Regime::Legacy => "<= 6.18: an update on every return to user after a switch/migration",
            Regime::Fast => ">= 6.19: an update only when the IDs changed",
        };
        Some(PossibleValue::new(self.id()).help(help))
    }
}

impl ValueEnum for ScanScope {
    fn value_variants<'a>() -> &'a [Self] {
        &[ScanScope::All, ScanScope::Visited]
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(match self {
            ScanScope::All => {
                PossibleValue::new("all").help("every possible CPU (what the kernels do)")
            }
            ScanScope::Visited => PossibleValue::new("visited").help(
                "only CPUs the mm ran on since its last complete scan (plus CPUs holding its CIDs)",
            ),
        })
    }
}

impl ValueEnum for JiffiesClock {
    fn value_variants<'a>() -> &'a [Self] {
        &[JiffiesClock::Timekeeper, JiffiesClock::Boundaries]
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(match self {
            JiffiesClock::Timekeeper => PossibleValue::new(self.id()).help(
                "as the kernel counts them: at the do_timer CPU's tick and stopped idle CPUs' \
                 interrupts (needs the ticks' now= and tick_stop; other captures use boundaries)",
            ),
            JiffiesClock::Boundaries => {
                PossibleValue::new(self.id()).help("at every tick boundary, at once")
            }
        })
    }
}

impl ValueEnum for RqClockMode {
    fn value_variants<'a>() -> &'a [Self] {
        &[RqClockMode::Running, RqClockMode::Now, RqClockMode::Stale]
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(match self {
            RqClockMode::Running => PossibleValue::new("running").help(
                "a busy CPU's rq->clock as of its last tick, switch or enqueue; an idle CPU's now",
            ),
            RqClockMode::Now => PossibleValue::new("now").help("every CPU's rq->clock is now"),
            RqClockMode::Stale => PossibleValue::new("stale")
                .help("every CPU's rq->clock as of its last tick, switch or enqueue, idle or not"),
        })
    }
}

impl ValueEnum for Workload {
    fn value_variants<'a>() -> &'a [Self] {
        &Workload::ALL
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(PossibleValue::new(self.id()).help(self.describe()))
    }
}

impl ValueEnum for AccelChoice {
    fn value_variants<'a>() -> &'a [Self] {
        &[AccelChoice::Auto, AccelChoice::Kvm, AccelChoice::Tcg]
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(match self {
            AccelChoice::Auto => PossibleValue::new("auto")
                .help("KVM where /dev/kvm opens and the guest boots, else TCG"),
            AccelChoice::Kvm => PossibleValue::new("kvm").help("hardware virtualization only"),
            AccelChoice::Tcg => PossibleValue::new("tcg").help(
                "QEMU's emulator (single-threaded: multi-threaded TCG crashed guests at boot)",
            ),
        })
    }
}

/// `1s`, `500ms`, `2.5s`, `100us`, `1000000ns`, `10m` (or `10min`), `1h`; a bare number is
/// seconds. At most 1h, as the message says.
pub fn parse_duration_ns(s: &str) -> Result<u64, String> {
    let s = s.trim();
    // longest suffixes first: `ms` before `s` and `m`, `min` before `m`
    let (num, mult) = [
        ("ns", 1.0),
        ("us", 1e3),
        ("ms", 1e6),
        ("min", 60e9),
        ("s", 1e9),
        ("m", 60e9),
        ("h", 3600e9),
    ]
    .into_iter()
    .find_map(|(unit, mult)| s.strip_suffix(unit).map(|n| (n, mult)))
    .unwrap_or((s, 1e9));
    let v: f64 = num.trim().parse().map_err(|_| {
        format!("expected a duration like 1s, 500ms, 100us, 10m or 1h, found \"{s}\"")
    })?;
    if !(v.is_finite() && v > 0.0) || v * mult > 3.6e12 {
        return Err(format!(
            "expected a duration between 1ns and 1h, found \"{s}\""
        ));
    }
    Ok((v * mult).round() as u64)
}

/// `0` or a duration as `parse_duration_ns` takes it: an offset into a capture.
pub fn parse_offset_ns(s: &str) -> Result<u64, String> {
    match s.trim() {
        "0" => Ok(0),
        t => parse_duration_ns(t),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every policy of the registry is a `--policy` value, under its own name and help.
    #[test]
    fn registered_policies_are_values() {
        use crate::model::policies::PolicyKind;
        for k in PolicyKind::ALL {
            let v = <CidView as ValueEnum>::from_str(k.id(), false);
            assert_eq!(v, Ok(CidView::Model(k)));
        }
        assert_eq!(
            <CidView as ValueEnum>::from_str("observed", false),
            Ok(CidView::Observed)
        );
    }

    /// `1h` is the limit the message names, so it is accepted; minutes too (issue 15).
    #[test]
    fn durations_take_minutes_and_hours_up_to_1h() {
        assert_eq!(parse_duration_ns("1h"), Ok(3_600_000_000_000));
        assert_eq!(parse_duration_ns("2m"), Ok(120_000_000_000));
        assert_eq!(parse_duration_ns("1.5min"), Ok(90_000_000_000));
        assert_eq!(parse_duration_ns("500ms"), Ok(500_000_000));
        assert_eq!(parse_duration_ns("3"), Ok(3_000_000_000));
        assert_eq!(parse_duration_ns("100us"), Ok(100_000));
        let e = parse_duration_ns("61m").unwrap_err();
        assert!(e.contains("1h"), "{e}");
        assert!(parse_duration_ns("1d").is_err());
    }
}
