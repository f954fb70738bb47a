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
    /// Presenter mode, for teaching: the screen shows the lane sets each step's narration
    /// names (and only them, even at 80x24), each step first asks "what happens next?" with
    /// the cursor just before its moment (] shows it), and E exports the view to SVG.
    #[arg(long)]
    pub present: bool,
    #[command(flatten)]
    pub ui: UiArgs,
}
