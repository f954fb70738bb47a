//! Which CID policy and variant a kernel runs, from its release string (`uname -r`, trace.dat's
//! uname, perf.data's OSRELEASE): docs/models.md §10.

use super::policies::{KernelVersion, PolicyKind};

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

/// The model of a kernel's CID policy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelModel {
    pub release: Release,
    /// `None`: the kernel has no modelled CID policy (no `mm_cid`, or 6.3's first form).
    pub policy: Option<PolicyKind>,
    /// lazy-compact's variant (`--kernel`); `None` for the other policies.
    pub variant: Option<KernelVersion>,
    /// Why, in words, with the commits that draw the lines.
    pub reason: String,
}

/// Maps a kernel release string to the policy and variant it runs (docs/models.md §10).
/// `None` when the string has no `MAJOR.MINOR` to read.
pub fn model_for_release(s: &str) -> Option<KernelModel> {
    let r = Release::parse(s)?;
    let v = format!("{}.{}.{}", r.major, r.minor, r.patch);
    let lazy = |variant: KernelVersion, why: &str| KernelModel {
        release: r,
        policy: Some(PolicyKind::LazyCompact),
        variant: Some(variant),
        reason: format!("{v}: lazy-compact, variant {}: {why}", variant.id()),
    };
    Some(if !r.at_least(6, 3) {
        KernelModel {
            release: r,
            policy: None,
            variant: None,
            reason: format!("{v}: before 6.3 the kernel has no mm_cid (rseq_update has no CID)"),
        }
    } else if !r.at_least(6, 4) {
        KernelModel {
            release: r,
            policy: None,
            variant: None,
            reason: format!(
                "{v}: 6.3's first mm_cid (allocated at every switch-in, freed at every switch-out, \
                 af7f588d8f73) is not modelled; the lazy per-CPU scheme came in 6.4 (223baf9d17f2)"
            ),
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
            reason: format!(
                "{v}: owner-mode, the rewrite of 6.19 (653fda7ae73d and the fixes of S7){rc}; \
                 checked in 7.2.13"
            ),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
