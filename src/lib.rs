//! cidscope: makes the Linux kernel's rseq concurrency IDs (`mm_cid`) visible.
//!
//! Data flows one way: [`sources`] (capture files, live) → [`events`] (the canonical event) →
//! [`model`] (observed state, CID policies) → [`timeline`] (index, checkpoints, summaries) →
//! [`ui`] (terminal views). [`stats`] is the headless end of the same flow.

pub mod cli;
pub mod demo;
pub mod events;
pub mod export;
pub mod live_cli;
pub mod model;
pub mod sim;
pub mod sources;
pub mod stats;
#[doc(hidden)]
pub mod testing;
pub mod timeline;
pub mod ui;
pub mod vm;

/// The demo capture bundled into the binary: opened when `cidscope` runs without a file.
pub const DEMO_NAME: &str = "demo: hackbench-pipe.ftrace.txt (bundled)";
pub const DEMO_TRACE: &[u8] = include_bytes!("../traces/hackbench-pipe.ftrace.txt");
