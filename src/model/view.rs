//! Which CIDs a set of lanes shows: what the capture observed, or what a registered policy model
//! predicts. `--policy` and `--compare` name them; `observed` needs no model.

use super::policies::PolicyKind;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CidView {
    /// What the capture shows, no model.
    Observed,
    /// A policy model's CIDs.
    Model(PolicyKind),
}

impl CidView {
    /// `observed`, then every registered policy (in `PolicyKind::ALL` order).
    pub fn all() -> impl Iterator<Item = CidView> {
        std::iter::once(CidView::Observed).chain(PolicyKind::ALL.into_iter().map(CidView::Model))
    }

    /// The name on the command line.
    pub fn id(self) -> &'static str {
        match self {
            CidView::Observed => "observed",
            CidView::Model(k) => k.id(),
        }
    }

    /// One line on what it shows.
    pub fn describe(self) -> &'static str {
        match self {
            CidView::Observed => {
                "what the capture shows, no model (not even the one of the kernel the capture names)"
            }
            CidView::Model(k) => k.describe(),
        }
    }

    pub fn from_id(s: &str) -> Option<CidView> {
        match s {
            "observed" => Some(CidView::Observed),
            _ => PolicyKind::from_id(s).map(CidView::Model),
        }
    }

    /// The model, or `None` for `observed`.
    pub fn kind(self) -> Option<PolicyKind> {
        match self {
            CidView::Observed => None,
            CidView::Model(k) => Some(k),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_view_is_named_once_and_round_trips() {
        let all: Vec<CidView> = CidView::all().collect();
        assert_eq!(all.len(), PolicyKind::ALL.len() + 1);
        for v in all {
            assert_eq!(CidView::from_id(v.id()), Some(v));
            assert!(!v.describe().is_empty());
        }
        assert_eq!(CidView::from_id("nope"), None);
    }
}
