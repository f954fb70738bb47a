//! Which CID policy and variant a kernel runs, from its release string (`uname -r`, trace.dat's
//! uname, perf.data's OSRELEASE): docs/models.md §10.

use super::policies::{HzSource, KernelVersion, Params, PolicyKind};

/// A kernel release as numbers: `6.18.15+deb13-cloud-amd64` → 6.18.15, `6.19.0-rc1` → 6.19.0 rc1.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Release {
    pub major: u32,
    pub minor: u32,
    pub patch: u32,
    /// `-rcN`; `None` for a release.
    pub rc: Option<u32>,
}

impl Release {
    /// Parses the leading `MAJOR.MINOR[.PATCH]` and an `-rcN` right after it; the rest (Debian
    /// `+debNN`, `-cloud-amd64`, local versions) is ignored.
    pub fn parse(s: &str) -> Option<Release> {
        let s = s.trim();
        let end = s
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(s.len());
        let mut nums = s[..end].split('.').filter(|x| !x.is_empty());
        let major = nums.next()?.parse().ok()?;
        let minor = nums.next()?.parse().ok()?;
        let patch = nums.next().and_then(|x| x.parse().ok()).unwrap_or(0);
        let rc = s[end..].strip_prefix("-rc").and_then(|r| {
            let d = r.find(|c: char| !c.is_ascii_digit()).unwrap_or(r.len());
            r[..d].parse().ok()
        });
        Some(Release {
            major,
            minor,
            patch,
            rc,
        })
    }

    fn at_least(&self, major: u32, minor: u32) -> bool {
        (self.major, self.minor) >= (major, minor)
    }
}

/// A kernel release string as given (`--kernel-version`, `uname -r`), known to name a
/// `MAJOR.MINOR`: the string is kept whole, as reports show it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelRelease {
    text: String,
    pub release: Release,
}

impl KernelRelease {
    pub fn as_str(&self) -> &str {
        &self.text
    }
}

impl std::str::FromStr for KernelRelease {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let release = Release::parse(s).ok_or_else(|| {
            format!(
                "expected a kernel release like 6.18.15 or 6.18.15+deb13-cloud-amd64, found {s:?}"
            )
        })?;
        Ok(KernelRelease {
            text: s.trim().to_string(),
            release,
        })
    }
}

impl std::fmt::Display for KernelRelease {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

/// The model of a kernel's CID policy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelModel {
    pub release: Release,
    /// `None`: the kernel has no modelled CID policy (no `mm_cid`, or 6.3's first form).
    pub policy: Option<PolicyKind>,
    /// lazy-compact's variant (`--kernel`), also the allocation resume-batch wraps; `None` for
    /// the other policies.
    pub variant: Option<KernelVersion>,
    /// resume-batch: the kernel's CONFIG_RSEQ_CID_SCAN_BATCH (B); `None` for the other policies.
    pub scan_batch: Option<u32>,
    /// Why, in words, with the commits that draw the lines.
    pub reason: String,
    /// Its process-private futex hash takes an `mm_users` reference when a clone grows it
    /// (6.17+, `futex_ref_drop`; [`Params::futex_hash_ref`]).
    pub futex_hash_ref: bool,
}

/// Maps a kernel release string to the policy and variant it runs (docs/models.md §10).
/// `None` when the string has no `MAJOR.MINOR` to read.
pub fn model_for_release(s: &str) -> Option<KernelModel> {
    let r = Release::parse(s)?;
    let v = format!("{}.{}.{}", r.major, r.minor, r.patch);
    // kernel/futex/core.c @6.18.15 l.1633-1645 (futex_ref_drop's mmget), called from
    // copy_process (kernel/fork.c l.2301) through futex_hash_allocate_default
    let futex = r.at_least(6, 17);
    let futex_note = if futex {
        "; a thread's clone that grows the process-private futex hash holds an mm_users \
         reference across RCU grace periods (futex_ref_drop, checked in 6.18.15)"
    } else {
        ""
    };
    let lazy = |variant: KernelVersion, why: &str| KernelModel {
        release: r,
        policy: Some(PolicyKind::LazyCompact),
        variant: Some(variant),
        scan_batch: None,
        reason: format!(
            "{v}: lazy-compact, variant {}: {why}{futex_note}",
            variant.id()
        ),
        futex_hash_ref: futex,
    };
    Some(if !r.at_least(6, 3) {
        KernelModel {
            release: r,
            policy: None,
            variant: None,
            scan_batch: None,
            reason: format!("{v}: before 6.3 the kernel has no mm_cid (rseq_update has no CID)"),
            futex_hash_ref: false,
        }
    } else if !r.at_least(6, 4) {
        KernelModel {
            release: r,
            policy: None,
            variant: None,
            scan_batch: None,
            reason: format!(
                "{v}: 6.3's first mm_cid (allocated at every switch-in, freed at every switch-out, \
                 af7f588d8f73) is not modelled; the lazy per-CPU scheme came in 6.4 (223baf9d17f2)"
            ),
            futex_hash_ref: false,
        }
    } else if !r.at_least(6, 13) {
        lazy(
            KernelVersion::V6_4,
            "6.4-6.12 allocate the first free CID and have no recent_cid (223baf9d17f2); \
             the 6.12.y stable kernels keep that form (checked in 6.12.117)",
        )
    } else if !r.at_least(6, 14) {
        if r.rc.is_none() && r.patch >= 5 {
            lazy(
                KernelVersion::V6_14,
                "6.13.5+ has the max_nr_cid shrink backported (02d954c0fdf9, stable review of \
                 2025-02-24), so it allocates like 6.14",
            )
        } else {
            lazy(
                KernelVersion::V6_13,
                "6.13-6.13.4 have recent_cid and the max_nr_cid expansion (7e019dcc470f) but not \
                 the shrink (02d954c0fdf9, backported in 6.13.5)",
            )
        }
    } else if !r.at_least(6, 19) {
        lazy(
            KernelVersion::V6_14,
            "6.14-6.18 have recent_cid, expansion and the max_nr_cid shrink (7e019dcc470f, \
             02d954c0fdf9); checked in 6.18.15",
        )
    } else {
        let rc = if r.major == 6 && r.minor == 19 && r.rc.is_some() {
            "; 6.19-rc1..rc7 lack 4463c7aa11a6 (transitional CIDs are always dropped at \
             schedule-out), which the model does not vary"
        } else {
            ""
        };
        KernelModel {
            release: r,
            policy: Some(PolicyKind::OwnerMode),
            variant: None,
            scan_batch: None,
            reason: format!(
                "{v}: owner-mode, the rewrite of 6.19 (653fda7ae73d and the fixes of S7){rc}; \
                 checked in 7.2.13"
            ),
            // owner-mode counts its users itself (mm_cid.users), not mm_users
            futex_hash_ref: false,
        }
    })
}

/// The model of a kernel from its release and, for a kernel built with the compaction-in-batches
/// patches (seed 000: "rseq: Run the mm_cid_compaction from rseq_handle_notify_resume()" and
/// "sched: Compact RSEQ concurrency IDs in batches"), its CONFIG_RSEQ_CID_SCAN_BATCH: that
/// option exists only with them (`init/Kconfig` of the patched tree), and they replace
/// lazy-compact's task_work scan by batches run from the rseq resume handler, so such a kernel
/// runs resume-batch over its release's lazy-compact allocation (docs/models.md §3, §10).
pub fn model_for_kernel(release: &str, scan_batch: Option<u32>) -> Option<KernelModel> {
    let m = model_for_release(release)?;
    let Some(b) = scan_batch.filter(|&b| b > 0) else {
        return Some(m);
    };
    let r = m.release;
    let v = format!("{}.{}.{}", r.major, r.minor, r.patch);
    Some(match (m.policy, m.variant) {
        (Some(PolicyKind::LazyCompact), Some(variant)) => KernelModel {
            policy: Some(PolicyKind::ResumeBatch),
            scan_batch: Some(b),
            reason: format!(
                "{v} with CONFIG_RSEQ_CID_SCAN_BATCH={b}: the compaction-in-batches patches \
                 (seed 000), so resume-batch with batches of {b} CPUs over the allocation of \
                 lazy-compact variant {}",
                variant.id()
            ),
            ..m
        },
        // the patches were written against lazy-compact's scan; elsewhere the option is noted
        _ => KernelModel {
            reason: format!(
                "{}; its CONFIG_RSEQ_CID_SCAN_BATCH={b} is not modelled on this release",
                m.reason
            ),
            ..m
        },
    })
}

/// A kernel family the capture shows by itself, without naming its release.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FamilyShown {
    /// The family, as its releases: "6.19+".
    pub family: &'static str,
    /// The policy of that family's kernels.
    pub policy: PolicyKind,
    /// What in the capture shows it, in words.
    pub because: String,
}

/// The family a capture's records show, where they show one (docs/models.md §5.8): an
/// `rseq_update` traced with interrupts disabled comes only from 6.19+, whose exit-to-user
/// fast path writes the IDs with interrupts off (`include/linux/rseq_entry.h`: "the fast
/// path runs with interrupts disabled"). Before 6.19 the update runs only from
/// `resume_user_mode_work` (and signal delivery), with interrupts enabled. The converse
/// proves nothing: 6.19+ takes the slow path, interrupts on, now and then, and a capture may
/// hold no irq flags at all (perf script's text).
pub fn family_shown(trace: &crate::events::Trace) -> Option<FamilyShown> {
    let n = trace.rseq_irqs_off;
    (n > 0).then(|| FamilyShown {
        family: "6.19+",
        policy: PolicyKind::OwnerMode,
        because: format!(
            "{n} of its rseq_update records ran with interrupts off, which only the 6.19+ exit-to-user fast path does"
        ),
    })
}

/// What the user asked of the model (`--policy`, `--kernel`, `--hz`, `--kernel-version`), and
/// the rest of the parameters.
#[derive(Clone, Debug, Default)]
pub struct Asked {
    pub policy: Option<PolicyKind>,
    pub variant: Option<KernelVersion>,
    pub hz: Option<u32>,
    /// `--batch`: resume-batch's B (else the kernel's CONFIG_RSEQ_CID_SCAN_BATCH, else 8).
    pub batch: Option<u32>,
    /// `--kernel-version`: the release of the capture's kernel.
    pub kernel_version: Option<KernelRelease>,
    /// `--policy observed`: the capture alone, no model (not even its kernel's).
    pub observed_only: bool,
    /// Regime, scan, seeding, ...; its `version` and `hz` are set from the choice.
    pub base: Params,
}

/// What the capture itself says of its kernel (`Trace::kernel_release`, `Trace::kernel_hz`,
/// `Trace::kernel_scan_batch`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KernelFacts {
    pub release: Option<String>,
    pub hz: Option<u32>,
    /// CONFIG_RSEQ_CID_SCAN_BATCH: the kernel has the compaction-in-batches patches.
    pub scan_batch: Option<u32>,
    /// The family its records show ([`family_shown`]): the model where no release is named.
    pub family: Option<FamilyShown>,
}

impl KernelFacts {
    /// What `trace` says of its kernel.
    pub fn of(trace: &crate::events::Trace) -> KernelFacts {
        KernelFacts {
            release: trace.kernel_release.clone(),
            hz: trace.kernel_hz,
            scan_batch: trace.kernel_scan_batch,
            family: family_shown(trace),
        }
    }
}

/// The model a capture is replayed through, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChosenModel {
    pub policy: PolicyKind,
    /// With `version` and `hz`/`hz_source` chosen (`hz` 0: inferred from the tick).
    pub params: Params,
    /// The kernel release, when known (`--kernel-version`, else the capture's own).
    pub kernel_version: Option<String>,
    /// The lazy-compact variant the model runs (lazy-compact and resume-batch); `None` for a
    /// policy without variants.
    pub variant: Option<KernelVersion>,
    /// In words: the flag, or the kernel and the commits that draw its line.
    pub chosen_because: String,
}

/// Whether `policy`'s allocation has the lazy-compact variants (`--kernel`).
fn has_variants(policy: PolicyKind) -> bool {
    matches!(policy, PolicyKind::LazyCompact | PolicyKind::ResumeBatch)
}

/// The model to replay a capture through: the one asked for (`--policy`), else the one of its
/// kernel's release (`--kernel-version`, else what the capture says, [`model_for_release`]).
/// `None` when neither names one (no model is run). HZ: `--hz`, else the kernel's CONFIG_HZ
/// when the capture says it, else 0 (inferred from the tick expiries). A capture that names its
/// kernel's CONFIG_RSEQ_CID_SCAN_BATCH gets resume-batch with that B ([`model_for_kernel`]).
pub fn choose(asked: &Asked, capture: &KernelFacts) -> Option<ChosenModel> {
    if asked.observed_only {
        return None;
    }
    let (release, from) = match (&asked.kernel_version, &capture.release) {
        (Some(v), _) => (Some(v.as_str()), "--kernel-version"),
        (None, Some(r)) => (Some(r.as_str()), "the capture"),
        (None, None) => (None, ""),
    };
    // (a header-less capture of a kernel with the seed-000 series: `--kernel-version` with
    // `--batch` names its CONFIG_RSEQ_CID_SCAN_BATCH)
    let batch_asked = capture.scan_batch.is_none() && asked.kernel_version.is_some();
    let scan_batch = capture.scan_batch.or(asked.batch.filter(|_| batch_asked));
    let known = release
        .and_then(|r| model_for_kernel(r, scan_batch))
        .map(|mut k| {
            if batch_asked && k.scan_batch.is_some() {
                k.reason += " (CONFIG_RSEQ_CID_SCAN_BATCH from --batch)";
            }
            k
        });
    let (policy, mut because) = match (asked.policy, &known) {
        (Some(p), Some(k)) if k.policy == Some(p) => (p, format!("--policy {p}; {}", k.reason)),
        (Some(p), Some(k)) => (
            p,
            format!(
                "--policy {p} (the kernel {} of {from} runs {}: {})",
                release.unwrap_or_default(),
                k.policy.map_or("no modelled policy", PolicyKind::id),
                k.reason
            ),
        ),
        (Some(p), None) => (p, format!("--policy {p} (kernel version unknown)")),
        (None, Some(k)) => (k.policy?, format!("{} (release from {from})", k.reason)),
        (None, None) => match &capture.family {
            // (no release: the family's policy, which has no variants to choose between)
            Some(f) if release.is_none() => (
                f.policy,
                format!(
                    "the capture's kernel is {} ({}), its release unknown",
                    f.family, f.because
                ),
            ),
            _ => return None,
        },
    };
    let variant = if has_variants(policy) {
        let v = match asked.variant {
            Some(v) => {
                because.push_str(&format!("; variant {} from --kernel", v.id()));
                v
            }
            None => known.as_ref().and_then(|k| k.variant).unwrap_or_default(),
        };
        Some(v)
    } else {
        None
    };
    let (hz, hz_source) = match (asked.hz, capture.hz) {
        (Some(h), _) => (h, HzSource::Given),
        (None, Some(h)) if release.is_some() => (h, HzSource::Kernel),
        _ => (0, HzSource::Given),
    };
    // B: --batch, else the kernel's own, else the default
    let batch = match (asked.batch, known.as_ref().and_then(|k| k.scan_batch)) {
        (Some(b), Some(k)) if b != k && policy == PolicyKind::ResumeBatch => {
            because.push_str(&format!("; B={b} from --batch (the kernel has {k})"));
            b
        }
        (Some(b), _) => b,
        (None, Some(k)) => k,
        (None, None) => asked.base.batch,
    };
    Some(ChosenModel {
        policy,
        params: Params {
            version: variant.unwrap_or(asked.base.version),
            futex_hash_ref: known
                .as_ref()
                .map_or(asked.base.futex_hash_ref, |k| k.futex_hash_ref),
            hz,
            hz_source,
            batch,
            kernel_policy: known.as_ref().and_then(|k| k.policy),
            ..asked.base.clone()
        },
        kernel_version: release.map(str::to_string),
        variant,
        chosen_because: because,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::policies::InferSteps;

    /// `--kernel-version` keeps the string whole and refuses one without `MAJOR.MINOR`.
    #[test]
    fn a_kernel_release_flag_value_is_checked_and_kept_whole() {
        let r: KernelRelease = " 6.18.15+deb13-cloud-amd64".parse().unwrap();
        assert_eq!(r.as_str(), "6.18.15+deb13-cloud-amd64");
        assert_eq!(
            (r.release.major, r.release.minor, r.release.patch),
            (6, 18, 15)
        );
        let e = "cloud".parse::<KernelRelease>().unwrap_err();
        assert!(e.contains("expected a kernel release"), "{e}");
        assert!("6".parse::<KernelRelease>().is_err());
    }

    fn pv(s: &str) -> (Option<PolicyKind>, Option<KernelVersion>) {
        let m = model_for_release(s).unwrap_or_else(|| panic!("{s}"));
        (m.policy, m.variant)
    }

    #[test]
    fn parses_release_strings() {
        let r = Release::parse("6.18.15+deb13-cloud-amd64").unwrap();
        assert_eq!((r.major, r.minor, r.patch, r.rc), (6, 18, 15, None));
        let r = Release::parse("6.19.0-rc1").unwrap();
        assert_eq!((r.major, r.minor, r.patch, r.rc), (6, 19, 0, Some(1)));
        let r = Release::parse("7.2").unwrap();
        assert_eq!((r.major, r.minor, r.patch), (7, 2, 0));
        let r = Release::parse(" 6.1.0-37-amd64\n").unwrap();
        assert_eq!((r.major, r.minor, r.patch, r.rc), (6, 1, 0, None));
        assert_eq!(Release::parse("linux"), None);
        assert_eq!(Release::parse("6"), None);
        assert_eq!(Release::parse(""), None);
    }

    #[test]
    fn maps_the_kernels_of_the_captures() {
        use KernelVersion::*;
        use PolicyKind::*;
        assert_eq!(
            pv("6.18.15+deb13-cloud-amd64"),
            (Some(LazyCompact), Some(V6_14))
        );
        assert_eq!(pv("7.2.13+deb14-cloud-amd64"), (Some(OwnerMode), None));
        assert_eq!(
            pv("6.12.117+deb13-cloud-amd64"),
            (Some(LazyCompact), Some(V6_4))
        );
        assert_eq!(pv("6.18.44"), (Some(LazyCompact), Some(V6_14)));
    }

    #[test]
    fn maps_the_version_lines() {
        use KernelVersion::*;
        use PolicyKind::*;
        assert_eq!(pv("5.15.0-91-generic"), (None, None));
        assert_eq!(pv("6.3.13"), (None, None));
        assert_eq!(pv("6.4.0"), (Some(LazyCompact), Some(V6_4)));
        assert_eq!(pv("6.12.0"), (Some(LazyCompact), Some(V6_4)));
        assert_eq!(pv("6.13"), (Some(LazyCompact), Some(V6_13)));
        assert_eq!(pv("6.13.4"), (Some(LazyCompact), Some(V6_13)));
        assert_eq!(pv("6.13.5"), (Some(LazyCompact), Some(V6_14)));
        assert_eq!(pv("6.14-rc4"), (Some(LazyCompact), Some(V6_14)));
        assert_eq!(pv("6.19.0-rc1"), (Some(OwnerMode), None));
        assert_eq!(pv("6.19.2"), (Some(OwnerMode), None));
        assert_eq!(pv("7.0.0"), (Some(OwnerMode), None));
        assert_eq!(model_for_release("x.y"), None);
    }

    #[test]
    fn reasons_say_why() {
        let m = model_for_release("6.19.0-rc1").unwrap();
        assert!(m.reason.contains("4463c7aa11a6"), "{}", m.reason);
        let m = model_for_release("6.13.4").unwrap();
        assert!(m.reason.contains("6.13.5"), "{}", m.reason);
        let m = model_for_release("6.12.117+deb13-cloud-amd64").unwrap();
        assert!(
            m.reason.starts_with("6.12.117: lazy-compact, variant 6.4"),
            "{}",
            m.reason
        );
        let m = model_for_release("6.3.1").unwrap();
        assert!(m.reason.contains("not modelled"), "{}", m.reason);
    }

    #[test]
    fn the_kernel_chooses_the_model_unless_the_user_did() {
        let none = Asked::default();
        let facts = |r: &str, hz| KernelFacts {
            release: Some(r.into()),
            hz,
            ..Default::default()
        };
        assert_eq!(choose(&none, &KernelFacts::default()), None);
        // no release, but records that show the 6.19+ family: its policy, HZ from the tick
        let shown = KernelFacts {
            family: Some(FamilyShown {
                family: "6.19+",
                policy: PolicyKind::OwnerMode,
                because: "3 of its rseq_update records ran with interrupts off".into(),
            }),
            ..Default::default()
        };
        let c = choose(&none, &shown).expect("the family's model");
        assert_eq!(
            (c.policy, c.variant, c.params.hz),
            (PolicyKind::OwnerMode, None, 0)
        );
        assert!(c.chosen_because.contains("6.19+"), "{}", c.chosen_because);
        // a named release outweighs what the records show
        let named = KernelFacts {
            family: shown.family.clone(),
            ..facts("6.12.117+deb13-cloud-amd64", Some(250))
        };
        assert_eq!(
            choose(&none, &named).map(|c| c.policy),
            Some(PolicyKind::LazyCompact)
        );
        let c = choose(&none, &facts("6.12.117+deb13-cloud-amd64", Some(250))).unwrap();
        assert_eq!(
            (c.policy, c.variant, c.params.hz, c.params.hz_source),
            (
                PolicyKind::LazyCompact,
                Some(KernelVersion::V6_4),
                250,
                HzSource::Kernel
            )
        );
        assert!(
            c.chosen_because
                .starts_with("6.12.117: lazy-compact, variant 6.4")
                && c.chosen_because.ends_with("(release from the capture)"),
            "{}",
            c.chosen_because
        );
        assert_eq!(
            c.kernel_version.as_deref(),
            Some("6.12.117+deb13-cloud-amd64")
        );
        // --policy observed: no model, whatever the kernel
        let observed = Asked {
            kernel_version: Some("7.2.13".parse().unwrap()),
            observed_only: true,
            ..Asked::default()
        };
        assert!(choose(&observed, &facts("6.18.15", Some(1000))).is_none());
        // --kernel-version wins over the header; owner-mode has no variant
        let asked = Asked {
            kernel_version: Some("7.2.13".parse().unwrap()),
            hz: Some(250),
            ..Asked::default()
        };
        let c = choose(&asked, &facts("6.18.15", Some(1000))).unwrap();
        assert_eq!(
            (c.policy, c.variant, c.params.hz, c.params.hz_source),
            (PolicyKind::OwnerMode, None, 250, HzSource::Given)
        );
        assert!(
            c.chosen_because.contains("--kernel-version"),
            "{}",
            c.chosen_because
        );
        // --policy wins, and the choice says what the kernel would have run
        let asked = Asked {
            policy: Some(PolicyKind::ResumeBatch),
            ..Asked::default()
        };
        let c = choose(&asked, &facts("6.12.117", None)).unwrap();
        assert_eq!(
            (c.policy, c.variant),
            (PolicyKind::ResumeBatch, Some(KernelVersion::V6_4))
        );
        assert!(
            c.chosen_because
                .starts_with("--policy resume-batch (the kernel 6.12.117"),
            "{}",
            c.chosen_because
        );
        assert_eq!(c.params.hz, 0);
        let c = choose(&asked, &KernelFacts::default()).unwrap();
        assert_eq!(
            c.chosen_because,
            "--policy resume-batch (kernel version unknown)"
        );
        let asked = Asked {
            variant: Some(KernelVersion::V6_13),
            kernel_version: Some("6.18.15".parse().unwrap()),
            ..Asked::default()
        };
        let c = choose(&asked, &KernelFacts::default()).unwrap();
        assert_eq!(c.variant, Some(KernelVersion::V6_13));
        assert!(c.chosen_because.ends_with("variant 6.13 from --kernel"));
        // a kernel without a modelled policy and no --policy: no model
        let asked = Asked {
            kernel_version: Some("5.15.0".parse().unwrap()),
            ..Asked::default()
        };
        assert_eq!(choose(&asked, &KernelFacts::default()), None);
    }

    /// The seed-000 kernel (6.18.15 with the compaction-in-batches patches) says
    /// CONFIG_RSEQ_CID_SCAN_BATCH: it runs resume-batch with that B, as its own policy.
    #[test]
    fn a_kernel_with_scan_batch_runs_resume_batch() {
        let m = model_for_kernel("6.18.15", Some(8)).unwrap();
        assert_eq!(
            (m.policy, m.variant, m.scan_batch),
            (
                Some(PolicyKind::ResumeBatch),
                Some(KernelVersion::V6_14),
                Some(8)
            )
        );
        assert!(
            m.reason.contains("CONFIG_RSEQ_CID_SCAN_BATCH=8")
                && m.reason.contains("compaction-in-batches patches"),
            "{}",
            m.reason
        );
        // stock kernels and B=0 are as before
        assert_eq!(
            model_for_kernel("6.18.15", None),
            model_for_release("6.18.15")
        );
        assert_eq!(
            model_for_kernel("6.18.15", Some(0)),
            model_for_release("6.18.15")
        );
        // owner-mode kernels have no batched scan to run
        let m = model_for_kernel("7.2.13", Some(8)).unwrap();
        assert_eq!(
            (m.policy, m.scan_batch),
            (Some(PolicyKind::OwnerMode), None)
        );
        assert!(m.reason.contains("not modelled"), "{}", m.reason);

        let seed = KernelFacts {
            release: Some("6.18.15".into()),
            hz: Some(250),
            scan_batch: Some(8),
            family: None,
        };
        let c = choose(&Asked::default(), &seed).unwrap();
        assert_eq!(
            (c.policy, c.variant, c.params.batch, c.params.hz),
            (PolicyKind::ResumeBatch, Some(KernelVersion::V6_14), 8, 250)
        );
        // inference is asked by --infer-steps alone, whatever named the policy
        assert_eq!(c.params.infer, InferSteps::Auto);
        assert!(
            c.chosen_because
                .contains("CONFIG_RSEQ_CID_SCAN_BATCH=8: the compaction-in-batches patches"),
            "{}",
            c.chosen_because
        );
        let b16 = KernelFacts {
            scan_batch: Some(16),
            ..seed.clone()
        };
        assert_eq!(choose(&Asked::default(), &b16).unwrap().params.batch, 16);
        // --batch wins and says so; --policy lazy-compact says what the kernel runs
        let asked = Asked {
            batch: Some(4),
            ..Asked::default()
        };
        let c = choose(&asked, &seed).unwrap();
        assert_eq!((c.policy, c.params.batch), (PolicyKind::ResumeBatch, 4));
        assert!(
            c.chosen_because
                .ends_with("B=4 from --batch (the kernel has 8)")
        );
        let asked = Asked {
            policy: Some(PolicyKind::LazyCompact),
            ..Asked::default()
        };
        let c = choose(&asked, &seed).unwrap();
        assert_eq!(c.policy, PolicyKind::LazyCompact);
        assert!(
            c.chosen_because.contains("runs resume-batch"),
            "{}",
            c.chosen_because
        );
        assert_eq!(c.params.infer, InferSteps::Auto);
    }
}
