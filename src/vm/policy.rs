//! Which CID model a guest kernel runs, from its `uname -r`.
//!
//! A stand-in until the kernel-version table of `src/model/kernel.rs` lands: replace
//! [`for_release`]'s body with a call to it. Until then: before 6.19 lazy-compact (with the
//! allocation variant of its version, §2.3 of the models spec), from 6.19 owner-mode.

use crate::model::policies::{KernelVersion, PolicyKind};

/// `6.18.15+deb13-cloud-amd64` → (6, 18); `7.2-rc3` → (7, 2).
pub fn major_minor(release: &str) -> Option<(u32, u32)> {
    let mut it = release.split(|c: char| !c.is_ascii_digit());
    let major = it.next()?.parse().ok()?;
    let minor = it.next()?.parse().ok()?;
    Some((major, minor))
}

/// The policy (and lazy-compact variant) of a kernel release; `None` when the release does not
/// start with MAJOR.MINOR or predates CIDs (6.3).
pub fn for_release(release: &str) -> Option<(PolicyKind, KernelVersion)> {
    let v = major_minor(release)?;
    if v < (6, 3) {
        return None;
    }
    Some(if v >= (6, 19) {
        (PolicyKind::OwnerMode, KernelVersion::default())
    } else if v >= (6, 14) {
        (PolicyKind::LazyCompact, KernelVersion::V6_14)
    } else if v >= (6, 13) {
        (PolicyKind::LazyCompact, KernelVersion::V6_13)
    } else {
        (PolicyKind::LazyCompact, KernelVersion::V6_4)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn releases_map_to_their_policy() {
        let p = for_release;
        assert_eq!(
            p("6.18.15+deb13-cloud-amd64"),
            Some((PolicyKind::LazyCompact, KernelVersion::V6_14))
        );
        assert_eq!(
            p("6.12.117+deb13-cloud-amd64"),
            Some((PolicyKind::LazyCompact, KernelVersion::V6_4))
        );
        assert_eq!(
            p("6.13.0"),
            Some((PolicyKind::LazyCompact, KernelVersion::V6_13))
        );
        assert_eq!(
            p("6.19.0-rc1"),
            Some((PolicyKind::OwnerMode, KernelVersion::V6_14))
        );
        assert_eq!(
            p("7.2.13+deb14-cloud-amd64").map(|x| x.0),
            Some(PolicyKind::OwnerMode)
        );
        assert_eq!(p("6.2.0"), None);
        assert_eq!(p("linux"), None);
        assert_eq!(major_minor("10.1"), Some((10, 1)));
    }
}
