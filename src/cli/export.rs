//! `cidscope export`: the observed timeline as Perfetto JSON, CSV and SVG.

use super::values::parse_offset_ns;
use super::{LoadArgs, ModelArgs, ThemeArg};
use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct ExportArgs {
    /// Capture to export.
    pub file: PathBuf,
    /// Write Chrome JSON trace events (open with ui.perfetto.dev) to this file.
    #[arg(long, value_name = "OUT.json")]
    pub perfetto: Option<PathBuf>,
    /// Write Perfetto's own protobuf trace (TracePacket/TrackEvent: a track per CPU and per
    /// model, the cidmask weight as counter tracks, flows from a CID's release to its next
    /// grant, interned names) to this file; ui.perfetto.dev and trace_processor load it.
    /// `-`: standard output.
    #[arg(long, value_name = "OUT.pftrace")]
    pub perfetto_proto: Option<PathBuf>,
    /// Write one CSV row per event to this file.
    #[arg(long, value_name = "OUT.csv")]
    pub csv: Option<PathBuf>,
    /// Write an SVG picture (lanes of per-CPU CID slots, cidmask weight, time axis, legend;
    /// colours from --theme) to this file.
    #[arg(long, value_name = "OUT.svg")]
    pub svg: Option<PathBuf>,
    /// SVG: where the window starts, counted from the capture's first event (0, 1s, 2.5ms,
    /// 300us). Default: the first event.
    #[arg(long, value_name = "T", value_parser = parse_offset_ns)]
    pub from: Option<u64>,
    /// SVG: where the window ends, counted from the capture's first event. Default: the last.
    #[arg(long, value_name = "T", value_parser = parse_offset_ns)]
    pub to: Option<u64>,
    /// SVG: the process to draw, by TGID. Default: the one the TUI opens on (the busiest
    /// process born in the capture, else the busiest).
    #[arg(long, value_name = "N")]
    pub tgid: Option<u32>,
    #[command(flatten)]
    pub load: LoadArgs,
    // with --policy / --compare: each model's compactions are instants in the Perfetto JSON
    #[command(flatten)]
    pub model: ModelArgs,
    #[command(flatten)]
    pub theme: ThemeArg,
}
