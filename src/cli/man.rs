//! `cidscope man`: the man page to stdout, or every page into a directory (the pages:
//! [`super::man_page`]).

use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct ManArgs {
    /// Write the pages into this directory instead of cidscope.1 to stdout: cidscope.1 and one
    /// per command (cidscope-stats.1, ...), which cidscope.1 then names.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}
