//! `cidscope demo`: the teaching demos.

use super::UiArgs;
use clap::Args;

#[derive(Args, Debug)]
pub struct DemoArgs {
    /// The demo to show (default: the first, workers).
    pub name: Option<String>,
    /// List the demos and exit.
    #[arg(long)]
    pub list: bool,
    #[command(flatten)]
    pub ui: UiArgs,
}
