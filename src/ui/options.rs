//! What the command line chooses for a TUI run: its look and keys, and the CID models shown.

use crate::model::CidView;
use crate::model::policies::{Params, PolicyKind};

/// How the TUI looks and reacts, from the command line and config files.
pub struct UiOptions {
    pub theme: super::theme::Theme,
    pub bindings: Vec<super::keys::Binding>,
}

/// Which CID models to show: `--policy P` shows P beside what the capture shows;
/// `--compare P1,P2` shows the listed ones (`observed` among them for the capture itself).
#[derive(Clone, Debug, Default)]
pub struct ModelChoice {
    pub policies: Vec<PolicyKind>,
    pub show_observed: bool,
    pub params: Params,
    /// What the flags asked for that is not shown as asked (said on the message line).
    pub note: Option<String>,
}

impl ModelChoice {
    /// From `--policy` and `--compare`. `--policy P` always means P beside the capture, so
    /// with a `--compare` list too, the capture and P are shown before the list's models; a
    /// model the list names twice is shown once. Either is said on the message line, never
    /// done silently.
    pub fn from_flags(policy: Option<CidView>, compare: &[CidView], params: Params) -> Self {
        let mut list: Vec<CidView> = Vec::new();
        let mut twice: Vec<&str> = Vec::new();
        for &p in compare {
            if list.contains(&p) {
                if !twice.contains(&p.id()) {
                    twice.push(p.id());
                }
            } else {
                list.push(p);
            }
        }
        let mut policies: Vec<PolicyKind> = Vec::new();
        for k in policy.iter().chain(&list).filter_map(|p| p.kind()) {
            if !policies.contains(&k) {
                policies.push(k);
            }
        }
        let show_observed =
            list.is_empty() || list.contains(&CidView::Observed) || policy.is_some();
        let mut notes = Vec::new();
        if !twice.is_empty() {
            notes.push(format!(
                "--compare names {} twice: shown once",
                twice.join(", ")
            ));
        }
        if let (Some(p), false) = (policy, list.is_empty()) {
            let mut shown: Vec<&str> = Vec::new();
            if show_observed {
                shown.push("observed");
            }
            shown.extend(policies.iter().map(|k| k.id()));
            notes.push(format!(
                "--policy {} with --compare: showing {} (--policy puts its model beside the capture)",
                p.id(),
                shown.join(", ")
            ));
        }
        ModelChoice {
            policies,
            show_observed,
            params,
            note: (!notes.is_empty()).then(|| notes.join("; ")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const OBSERVED: CidView = CidView::Observed;
    const LAZY_COMPACT: CidView = CidView::Model(PolicyKind::LazyCompact);
    const OWNER_MODE: CidView = CidView::Model(PolicyKind::OwnerMode);

    fn choice(policy: Option<CidView>, compare: &[CidView]) -> ModelChoice {
        ModelChoice::from_flags(policy, compare, Params::default())
    }

    #[test]
    fn policy_and_compare_combine_and_duplicates_are_said() {
        let c = choice(None, &[]);
        assert!(c.show_observed && c.policies.is_empty() && c.note.is_none());
        let c = choice(Some(OWNER_MODE), &[]);
        assert!(c.show_observed && c.note.is_none());
        assert_eq!(c.policies, vec![PolicyKind::OwnerMode]);
        // a --compare list without observed shows only its models
        let c = choice(None, &[LAZY_COMPACT, OWNER_MODE]);
        assert!(!c.show_observed && c.note.is_none());
        // --policy A --compare B: observed, A and B, and the message line says so
        let c = choice(Some(OWNER_MODE), &[LAZY_COMPACT]);
        assert!(c.show_observed);
        assert_eq!(
            c.policies,
            vec![PolicyKind::OwnerMode, PolicyKind::LazyCompact]
        );
        let note = c.note.unwrap_or_default();
        assert!(
            note.contains("showing observed, owner-mode, lazy-compact"),
            "{note}"
        );
        // x,x: once, and said
        let c = choice(None, &[LAZY_COMPACT, LAZY_COMPACT, OBSERVED, OBSERVED]);
        assert_eq!(c.policies, vec![PolicyKind::LazyCompact]);
        assert!(c.show_observed);
        let note = c.note.unwrap_or_default();
        assert!(
            note.contains("names lazy-compact, observed twice"),
            "{note}"
        );
    }
}
