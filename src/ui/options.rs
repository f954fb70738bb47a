//! What the command line chooses for a TUI run: its look and keys, and the CID models shown.

/// How the TUI looks and reacts, from the command line and config files.
pub struct UiOptions {
    pub theme: super::theme::Theme,
    pub bindings: Vec<super::keys::Binding>,
}

/// Which CID models to show: `--policy P` shows P beside what the capture shows;
/// `--compare P1,P2` shows the listed ones (`observed` among them for the capture itself).
#[derive(Clone, Debug, Default)]
pub struct ModelChoice {
    pub policies: Vec<crate::model::policies::PolicyKind>,
    pub show_observed: bool,
    pub params: crate::model::policies::Params,
}
