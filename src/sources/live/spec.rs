//! The `--workload SPEC` language: comma-separated items, each `KIND[:ARG]...`, arguments
//! positional and optional (defaults below).
//!
//! ```text
//! periodic[:THREADS[:PERIOD[:BUSY]]]  wake every PERIOD, spin BUSY (cyclictest-like)  4:1ms:200us
//! hog[:THREADS]                       spin without sleeping                          CPUs+1
//! churn[:RATE[:LIFETIME]]             RATE new threads per second (`50` or `50/s`),
//!                                     each spins LIFETIME and exits                  50/s:2ms
//! migrate[:THREADS[:EVERY]]           spin, flip CPU affinity every EVERY             1:100ms
//! sleeper[:THREADS[:PERIOD]]          sleep PERIOD, touch, sleep again                2:50ms
//! ```
//! Durations take a unit: `ns`, `us`, `ms`, `s`, `m` (or `min`), `h` (`1.5ms` is fine).

use super::LiveError;
use std::fmt;
use std::time::Duration;

pub const SYNTAX_HELP: &str = "\
SPEC: comma-separated items KIND[:ARG]..., arguments optional (defaults in brackets):
  periodic[:THREADS[:PERIOD[:BUSY]]]  wake every PERIOD, spin BUSY          [4:1ms:200us]
  hog[:THREADS]                       busy loop, never sleeps               [CPUs+1]
  churn[:RATE[:LIFETIME]]             RATE new threads/s (50 or 50/s),
                                      each spins LIFETIME, then exits       [50/s:2ms]
  migrate[:THREADS[:EVERY]]           busy, CPU affinity flipped each EVERY [1:100ms]
  sleeper[:THREADS[:PERIOD]]          sleeps PERIOD between touches         [2:50ms]
Durations need a unit: ns, us, ms, s, m (or min), h.
Example: periodic:4:1ms:300us,hog:3,churn:50/s,migrate:1:100ms,sleeper:2
Default (no --workload): periodic:4:1ms:200us,hog:CPUs+1 (more threads than CPUs).
Each thread reads (cpu_id, mm_cid) from its own rseq area and reports them when they change.";

#[derive(Clone, Debug, PartialEq)]
pub enum WorkItem {
    Periodic {
        threads: u32,
        period: Duration,
        busy: Duration,
    },
    Hog {
        threads: u32,
    },
    Churn {
        per_sec: f64,
        lifetime: Duration,
    },
    Migrate {
        threads: u32,
        every: Duration,
    },
    Sleeper {
        threads: u32,
        period: Duration,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub struct WorkloadSpec {
    pub items: Vec<WorkItem>,
}

const MAX_THREADS: u32 = 1024;

impl WorkloadSpec {
    /// Periodic threads and hogs, more threads than CPUs.
    pub fn default_for(ncpus: u32) -> WorkloadSpec {
        WorkloadSpec {
            items: vec![
                WorkItem::Periodic {
                    threads: 4,
                    period: Duration::from_millis(1),
                    busy: Duration::from_micros(200),
                },
                WorkItem::Hog { threads: ncpus + 1 },
            ],
        }
    }

    /// Parses SPEC; `ncpus` sets the default hog count.
    pub fn parse(text: &str, ncpus: u32) -> Result<WorkloadSpec, LiveError> {
        let mut items = Vec::new();
        for (i, item) in text.split(',').map(str::trim).enumerate() {
            if item.is_empty() {
                return Err(LiveError::Spec(format!(
                    "item {} is empty: expected KIND[:ARG]... (periodic, hog, churn, migrate, sleeper)",
                    i + 1
                )));
            }
            items.push(
                parse_item(item, ncpus)
                    .map_err(|e| LiveError::Spec(format!("item {} `{item}`: {e}", i + 1)))?,
            );
        }
        let total: u32 = items.iter().map(WorkItem::threads).sum();
        if total > MAX_THREADS {
            return Err(LiveError::Spec(format!(
                "{total} threads in all; at most {MAX_THREADS}"
            )));
        }
        Ok(WorkloadSpec { items })
    }

    /// Long-running threads (churn threads come and go).
    pub fn threads(&self) -> u32 {
        self.items.iter().map(WorkItem::threads).sum()
    }
}

impl WorkItem {
    fn threads(&self) -> u32 {
        match *self {
            WorkItem::Periodic { threads, .. }
            | WorkItem::Hog { threads }
            | WorkItem::Migrate { threads, .. }
            | WorkItem::Sleeper { threads, .. } => threads,
            WorkItem::Churn { .. } => 1,
        }
    }
}

fn parse_item(item: &str, ncpus: u32) -> Result<WorkItem, String> {
    let mut parts = item.split(':');
    let kind = parts.next().unwrap_or("");
    let args: Vec<&str> = parts.collect();
    let max_args = match kind {
        "periodic" => 3,
        "hog" => 1,
        "churn" | "migrate" | "sleeper" => 2,
        _ => {
            return Err(format!(
                "unknown kind `{kind}`; expected periodic, hog, churn, migrate or sleeper"
            ));
        }
    };
    if args.len() > max_args {
        return Err(format!(
            "`{kind}` takes at most {max_args} arguments, found {}",
            args.len()
        ));
    }
    let arg = |i: usize| args.get(i).copied().filter(|a| !a.is_empty());
    let threads = |i: usize, def: u32| -> Result<u32, String> {
        match arg(i) {
            None => Ok(def),
            Some(a) => match a.parse::<u32>() {
                Ok(n) if (1..=MAX_THREADS).contains(&n) => Ok(n),
                _ => Err(format!(
                    "expected a thread count 1..={MAX_THREADS}, found `{a}`"
                )),
            },
        }
    };
    let dur = |i: usize, def: Duration| -> Result<Duration, String> {
        match arg(i) {
            None => Ok(def),
            Some(a) => parse_duration(a),
        }
    };
    Ok(match kind {
        "periodic" => {
            let period = dur(1, Duration::from_millis(1))?;
            let busy = dur(2, Duration::from_micros(200))?;
            if period < Duration::from_micros(10) {
                return Err(format!("period {period:?} is below 10us"));
            }
            if busy >= period {
                return Err(format!(
                    "busy time {busy:?} must be shorter than the period {period:?}"
                ));
            }
            WorkItem::Periodic {
                threads: threads(0, 4)?,
                period,
                busy,
            }
        }
        "hog" => WorkItem::Hog {
            threads: threads(0, ncpus + 1)?,
        },
        "churn" => {
            let per_sec = match arg(0) {
                None => 50.0,
                Some(a) => {
                    let n = a.strip_suffix("/s").unwrap_or(a);
                    match n.parse::<f64>() {
                        Ok(r) if r > 0.0 && r <= 10_000.0 => r,
                        _ => {
                            return Err(format!(
                                "expected a rate in threads per second (e.g. 50/s, at most 10000), found `{a}`"
                            ));
                        }
                    }
                }
            };
            WorkItem::Churn {
                per_sec,
                lifetime: dur(1, Duration::from_millis(2))?,
            }
        }
        "migrate" => {
            let every = dur(1, Duration::from_millis(100))?;
            if every < Duration::from_micros(100) {
                return Err(format!("flip interval {every:?} is below 100us"));
            }
            WorkItem::Migrate {
                threads: threads(0, 1)?,
                every,
            }
        }
        _ => WorkItem::Sleeper {
            threads: threads(0, 2)?,
            period: dur(1, Duration::from_millis(50))?,
        },
    })
}

/// `300us`, `1.5ms`, `2s`, `100ns`.
pub fn parse_duration(a: &str) -> Result<Duration, String> {
    parse_duration_upto(a, 3600)
}

/// `parse_duration` with its own upper bound, `max_secs`, named in the message as the units
/// take it (`1h`, `24h`), so the limit it names is one it accepts.
pub fn parse_duration_upto(a: &str, max_secs: u64) -> Result<Duration, String> {
    let split = a
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .ok_or_else(|| format!("expected a duration with a unit ({UNITS}), found `{a}`"))?;
    let (num, unit) = a.split_at(split);
    let v: f64 = num
        .parse()
        .map_err(|_| format!("expected a number before the unit in `{a}`"))?;
    let scale = unit_secs(unit)
        .ok_or_else(|| format!("unknown unit `{unit}` in `{a}`; expected {UNITS}"))?;
    let secs = v * scale;
    if !secs.is_finite() || secs <= 0.0 || secs > max_secs as f64 {
        return Err(format!(
            "duration `{a}` must be above 0 and at most {}",
            fmt_d(Duration::from_secs(max_secs))
        ));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// The units a duration takes, as the messages name them.
pub const UNITS: &str = "ns, us, ms, s, m (or min), h";

/// Seconds per `unit`; `None` for a unit the language does not know.
pub fn unit_secs(unit: &str) -> Option<f64> {
    Some(match unit {
        "ns" => 1e-9,
        "us" => 1e-6,
        "ms" => 1e-3,
        "s" => 1.0,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        _ => return None,
    })
}

fn fmt_d(d: Duration) -> String {
    let ns = d.as_nanos();
    if ns > 0 && ns.is_multiple_of(3_600_000_000_000) {
        format!("{}h", ns / 3_600_000_000_000)
    } else if ns > 0 && ns.is_multiple_of(60_000_000_000) {
        format!("{}m", ns / 60_000_000_000)
    } else if ns.is_multiple_of(1_000_000_000) {
        format!("{}s", ns / 1_000_000_000)
    } else if ns.is_multiple_of(1_000_000) {
        format!("{}ms", ns / 1_000_000)
    } else if ns.is_multiple_of(1000) {
        format!("{}us", ns / 1000)
    } else {
        format!("{ns}ns")
    }
}

impl fmt::Display for WorkItem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            WorkItem::Periodic {
                threads,
                period,
                busy,
            } => write!(f, "periodic:{threads}:{}:{}", fmt_d(period), fmt_d(busy)),
            WorkItem::Hog { threads } => write!(f, "hog:{threads}"),
            WorkItem::Churn { per_sec, lifetime } => {
                write!(f, "churn:{per_sec}/s:{}", fmt_d(lifetime))
            }
            WorkItem::Migrate { threads, every } => {
                write!(f, "migrate:{threads}:{}", fmt_d(every))
            }
            WorkItem::Sleeper { threads, period } => {
                write!(f, "sleeper:{threads}:{}", fmt_d(period))
            }
        }
    }
}

impl fmt::Display for WorkloadSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let v: Vec<String> = self.items.iter().map(|i| i.to_string()).collect();
        f.write_str(&v.join(","))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_documented_example() {
        let s = WorkloadSpec::parse(
            "periodic:4:1ms:300us,hog:3,churn:50/s,migrate:1:100ms,sleeper:2",
            2,
        )
        .unwrap();
        assert_eq!(s.items.len(), 5);
        assert_eq!(
            s.items[0],
            WorkItem::Periodic {
                threads: 4,
                period: Duration::from_millis(1),
                busy: Duration::from_micros(300)
            }
        );
        assert_eq!(
            s.to_string(),
            "periodic:4:1ms:300us,hog:3,churn:50/s:2ms,migrate:1:100ms,sleeper:2:50ms"
        );
        // round trip
        assert_eq!(WorkloadSpec::parse(&s.to_string(), 2).unwrap(), s);
        assert_eq!(
            WorkloadSpec::parse("hog", 2).unwrap().items[0],
            WorkItem::Hog { threads: 3 }
        );
        assert_eq!(
            WorkloadSpec::default_for(2).to_string(),
            "periodic:4:1ms:200us,hog:3"
        );
    }

    #[test]
    fn errors_say_what_was_expected() {
        let e = |s: &str| WorkloadSpec::parse(s, 2).unwrap_err().to_string();
        assert!(
            e("spin:2").contains("unknown kind `spin`"),
            "{}",
            e("spin:2")
        );
        assert!(e("hog:x").contains("expected a thread count"));
        assert!(e("periodic:1:1ms:2ms").contains("shorter than the period"));
        assert!(e("periodic:1:5").contains("with a unit"));
        assert!(e("periodic:1:5fortnights").contains("unknown unit"));
        assert!(e("periodic:1:2h").contains("at most 1h"));
        assert!(e("hog,,hog").contains("item 2 is empty"));
        assert!(e("churn:0").contains("rate"));
        assert!(e("hog:1:2").contains("at most 1 arguments"));
        assert!(e("hog:1000,hog:1000").contains("at most 1024"));
    }

    /// The limit a message names is one the parser accepts, in the unit it names (issue 15).
    #[test]
    fn minutes_and_hours_up_to_the_named_limit() {
        assert_eq!(parse_duration("1h"), Ok(Duration::from_secs(3600)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("1.5min"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("60min"), Ok(Duration::from_secs(3600)));
        assert_eq!(parse_duration("3ms"), Ok(Duration::from_millis(3)));
        let e = parse_duration("61m").unwrap_err();
        assert!(e.contains("at most 1h"), "{e}");
        assert!(parse_duration_upto("24h", 86_400).is_ok());
        let e = parse_duration_upto("25h", 86_400).unwrap_err();
        assert!(e.contains("at most 24h"), "{e}");
        assert_eq!(fmt_d(Duration::from_secs(120)), "2m");
        assert_eq!(fmt_d(Duration::from_secs(3600)), "1h");
    }
}
