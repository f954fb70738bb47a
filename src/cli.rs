//! Command-line interface: the flags (clap), and what they become — load options, model
//! parameters, a simulator or VM configuration, the TUI's look. Flags and JSON keys are
//! contracts: add freely, never rename or remove.
//!
//! [`command`] is the command line (`Cli`, its commands, the tolerated former global flags);
//! one file per command's arguments ([`stats`], [`export`], [`live`] with attach, [`demo`],
//! [`sim`], [`vm`], [`man`]); the flag groups several commands share (load, look, model) are
//! here; [`values`] makes the domain types flag values; [`man_page`] renders the man pages;
//! [`capture`] opens a headless command's capture (a stream ends at SIGINT); [`stdout`] writes
//! its output (a closed pipe is no error); [`error`] is the layer's error.

pub mod capture;
pub mod command;
pub mod demo;
pub mod error;
pub mod export;
pub mod live;
pub mod man;
pub mod man_page;
pub mod sim;
pub mod stats;
pub mod stdout;
pub mod values;
pub mod vm;

pub use error::CliError;
pub use values::{parse_duration_ns, parse_offset_ns};

use crate::events::Format;
use crate::model::CidView;
use crate::model::kernel::KernelRelease;
use crate::model::policies::{KernelVersion, PolicyKind, Regime, ScanScope};
use clap::Args;

/// How a capture is read: the replay's and every command that reads a capture file.
#[derive(Args, Debug, Clone, Default)]
pub struct LoadArgs {
    /// Read the input as this format instead of detecting it from the content.
    #[arg(long, value_enum)]
    pub format: Option<Format>,

    /// Skip lines that do not parse (counted in a warning) instead of stopping at the first.
    #[arg(long)]
    pub skip_bad_lines: bool,

    /// Open a capture even when it looks too large for the available memory.
    #[arg(long)]
    pub no_memory_check: bool,

    /// trace.dat: read this instance buffer (`trace-cmd record -B NAME`; "" for the top-level
    /// one) instead of the default. The buffers not read are counted in a warning.
    #[arg(long, value_name = "NAME")]
    pub instance: Option<String>,
}

impl LoadArgs {
    pub fn options(&self) -> crate::sources::LoadOptions {
        crate::sources::LoadOptions {
            format: self.format,
            skip_bad_lines: self.skip_bad_lines,
            no_memory_check: self.no_memory_check,
            instance: self.instance.clone(),
            ..Default::default()
        }
    }
}

/// `--theme`: the TUI's colours (and the SVG export's).
#[derive(Args, Debug, Clone, Default)]
pub struct ThemeArg {
    /// Colour theme: a built-in name (default, ansi16, dark, light, high-contrast, colorblind) or the
    /// path of a JSON theme file (slots it leaves out come from default). NO_COLOR turns colour
    /// off unless a theme is named.
    #[arg(long, value_name = "NAME|PATH")]
    pub theme: Option<String>,
}

/// `--keys`: the TUI's key bindings.
#[derive(Args, Debug, Clone, Default)]
pub struct KeysArg {
    /// Key bindings file: {"action-name": ["key", ...]} (docs/keys.md).
    /// Default: ~/.config/cidscope/keys.json when it exists.
    #[arg(long, value_name = "PATH")]
    pub keys: Option<String>,
}

/// The look and keys of a command that opens the TUI.
#[derive(Args, Debug, Clone, Default)]
pub struct UiArgs {
    #[command(flatten)]
    pub theme: ThemeArg,
    #[command(flatten)]
    pub keys: KeysArg,
}

impl UiArgs {
    /// The theme and bindings, from the flags, NO_COLOR and the config file.
    pub fn options(&self) -> Result<crate::ui::UiOptions, CliError> {
        ui_options(&self.theme, &self.keys)
    }
}

/// Theme and key bindings from the command line, NO_COLOR and the config file.
pub fn ui_options(theme: &ThemeArg, keys: &KeysArg) -> Result<crate::ui::UiOptions, CliError> {
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    let theme = crate::ui::theme::Theme::resolve(theme.theme.as_deref(), no_color)?;
    let bindings = crate::ui::keys::load_bindings(keys.keys.as_deref())?;
    Ok(crate::ui::UiOptions { theme, bindings })
}

/// Model options: the replay's, and those of the commands that run a model.
#[derive(Args, Debug, Clone, Default)]
pub struct ModelArgs {
    /// CID model to replay the capture through (stats: adds model_agreement and
    /// per-process compactions; sim: the simulated policy).
    #[arg(long, value_enum)]
    pub policy: Option<CidView>,

    /// Models to show side by side, e.g. lazy-compact,owner-mode.
    #[arg(long, value_enum, value_delimiter = ',')]
    pub compare: Vec<CidView>,

    /// CONFIG_HZ of the modelled kernel (replay: inferred from the tick spacing; sim: 1000).
    #[arg(long)]
    pub hz: Option<u32>,

    /// resume-batch: CPUs per batch (CONFIG_RSEQ_CID_SCAN_BATCH, default 8). With
    /// --kernel-version on a capture that names no batch (no `cidscope vm` header): the kernel
    /// has the seed-000 series with this CONFIG_RSEQ_CID_SCAN_BATCH, so it runs resume-batch.
    #[arg(long)]
    pub batch: Option<u32>,

    /// lazy-compact kernel variant (default 6.14, i.e. 6.14-6.18; with --kernel-version: that
    /// kernel's).
    #[arg(long, value_enum)]
    pub kernel: Option<KernelVersion>,

    /// Release of the capture's kernel (`uname -r`, e.g. 6.18.15+deb13-cloud-amd64): picks
    /// the policy and variant that kernel runs when --policy does not (stats, the TUI,
    /// --check); a `cidscope vm --record` capture names its own.
    #[arg(long, value_name = "RELEASE")]
    pub kernel_version: Option<KernelRelease>,

    /// rseq emission regime (default: the policy's own).
    #[arg(long, value_enum)]
    pub regime: Option<Regime>,

    /// CPUs a scan walks (default all).
    #[arg(long, value_enum)]
    pub scan: Option<ScanScope>,

    /// Replay: do not seed processes that were running before the capture began.
    #[arg(long)]
    pub no_seed: bool,

    /// rq clock of idle CPUs goes stale (the age pass then sees young slots): `--rq-clock
    /// stale`.
    #[arg(long)]
    pub stale_rq_clock: bool,

    /// Replay: what a CPU's rq->clock reads in the 100 ms age pass of 6.4-6.18 (docs/models.md
    /// §2.4).
    #[arg(long, value_enum, default_value_t = crate::model::policies::RqClockMode::Running)]
    pub rq_clock: crate::model::policies::RqClockMode,

    /// Replay: how jiffies advance, which decides when the 100 ms scan of 6.4-6.18 and
    /// resume-batch comes due (docs/models.md §5.4).
    #[arg(long, value_enum, default_value_t = crate::model::policies::JiffiesClock::Timekeeper)]
    pub jiffies: crate::model::policies::JiffiesClock,

    /// Check every model invariant after every event (slow); breaks are reported.
    #[arg(long)]
    pub check_invariants: bool,

    /// Replay: place the jiffies' boundaries by the ticks' CLOCK_MONOTONIC `now=` instead of by
    /// the earliest phase of their record times (docs/models.md §5.4). `--jiffies timekeeper`
    /// (the default) does so by itself; with `--jiffies boundaries` it is this flag's choice.
    /// Read from ftrace text only; other formats, and text without `hrtimer_expire_entry
    /// now=`, keep the estimate.
    #[arg(long)]
    pub mono_jiffies: bool,

    /// Replay: infer where the kernel ran the CID steps the capture does not mark
    /// (model_agreement.predicted is the plain replay, agreed is with the inferred steps; the
    /// same whether --policy, --kernel-version or the capture names the model).
    #[arg(long, value_enum, default_value_t = crate::model::policies::InferSteps::Auto)]
    pub infer_steps: crate::model::policies::InferSteps,
}

impl ModelArgs {
    /// Model parameters from the flags (cpus/hz 0 = from the capture).
    pub fn params(&self) -> crate::model::policies::Params {
        use crate::model::policies::{HzSource, Params, RqClockMode};
        Params {
            cpus: 0,
            hz: self.hz.unwrap_or(0),
            hz_source: HzSource::Given,
            batch: self.batch.unwrap_or(8),
            version: self.kernel.unwrap_or_default(),
            regime: self.regime,
            rq_clock: if self.stale_rq_clock {
                RqClockMode::Stale
            } else {
                self.rq_clock
            },
            scan: self.scan.unwrap_or_default(),
            seed: !self.no_seed,
            check_invariants: self.check_invariants,
            infer: self.infer_steps,
            recording: Default::default(),
            kernel_policy: None,
            // a property of the kernel: set when the capture's kernel is known
            futex_hash_ref: false,
            // a property of the capture: set by the replay when it holds the scan probes
            observed_scans: false,
            // a property of the capture: set by the replay when it records migrations
            migrations_traced: false,
            mono_jiffies: self.mono_jiffies,
            jiffies: self.jiffies,
            // a property of the capture: set when its load ran the first pass beside
            first_pass: None,
        }
    }

    /// What the flags ask of the model choice (`model::kernel::choose`).
    pub fn asked(&self) -> crate::model::kernel::Asked {
        crate::model::kernel::Asked {
            policy: self.policy.and_then(|p| p.kind()),
            variant: self.kernel.map(|_| self.params().version),
            hz: self.hz,
            batch: self.batch,
            kernel_version: self.kernel_version.clone(),
            observed_only: self.policy == Some(CidView::Observed),
            base: self.params(),
        }
    }

    /// Models named by --policy and --compare, in order, without duplicates.
    pub fn models(&self) -> Vec<PolicyKind> {
        let mut v = Vec::new();
        for k in self
            .policy
            .iter()
            .chain(self.compare.iter())
            .filter_map(|p| p.kind())
        {
            if !v.contains(&k) {
                v.push(k);
            }
        }
        v
    }
}
