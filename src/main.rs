use cidscope::cli::command::{self, Cli, Command};
use cidscope::cli::export::ExportArgs;
use cidscope::cli::sim::SimArgs;
use cidscope::cli::stats::StatsArgs;
use cidscope::cli::vm::VmArgs;
use cidscope::cli::{self, CliError};
use cidscope::sources;
use std::process::ExitCode;

/// The system allocator, asking for huge pages on large blocks (`sources::sys::alloc`).
#[global_allocator]
static ALLOC: sources::sys::alloc::HugeBlocks = sources::sys::alloc::HugeBlocks;

/// Writes to stdout; a closed pipe (`cidscope stats ... | head`) is not an error.
fn emit(bytes: &[u8]) -> Result<(), CliError> {
    cli::stdout::write(bytes).map_err(CliError::Stdout)
}

/// Writes `v` as pretty JSON to stdout while it is serialized (the summary of a capture of a
/// million tasks is hundreds of MB of text: never held whole); a closed pipe is not an error.
fn emit_json<T: serde::Serialize>(v: &T) -> Result<(), CliError> {
    use std::io::Write;
    let mut out = cli::stdout::buffered();
    let r = serde_json::to_writer_pretty(&mut out, v)
        .map_err(std::io::Error::from)
        .and_then(|_| out.write_all(b"\n"))
        .and_then(|_| out.flush());
    cli::stdout::pipe_closed_is_ok(r).map_err(CliError::Stdout)
}

/// Writes text to stdout while it is made (a summary of a million processes is a million
/// lines: never held whole); a closed pipe is not an error.
fn emit_text(
    write: impl FnOnce(&mut dyn std::fmt::Write) -> std::fmt::Result,
) -> Result<(), CliError> {
    use std::io::Write;
    /// `fmt::Write` over a buffered stdout, keeping the first I/O error.
    struct Out<W: Write> {
        w: W,
        err: Option<std::io::Error>,
    }
    impl<W: Write> std::fmt::Write for Out<W> {
        fn write_str(&mut self, s: &str) -> std::fmt::Result {
            self.w.write_all(s.as_bytes()).map_err(|e| {
                self.err.get_or_insert(e);
                std::fmt::Error
            })
        }
    }
    let mut out = Out {
        w: cli::stdout::buffered(),
        err: None,
    };
    let r = match write(&mut out) {
        Ok(()) => out.w.flush(),
        Err(_) => Err(out
            .err
            .take()
            .unwrap_or_else(|| std::io::Error::other("formatting failed"))),
    };
    cli::stdout::pipe_closed_is_ok(r).map_err(CliError::Stdout)
}

fn main() -> ExitCode {
    // cidscope as the init of a `cidscope vm` guest, or one of its worker processes
    if let Some(code) = cidscope::vm::guest::entry() {
        return code;
    }
    sources::memory::tune_allocator();
    let cli = command::parse();
    let code = match run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("cidscope: {e}");
            ExitCode::from(2)
        }
    };
    // A TUI ended by SIGTERM, SIGHUP, SIGQUIT, ... exits 128 + the signal, as a process the
    // signal killed would (after its cleanup: a live source stopped, a recording saved).
    match cidscope::ui::terminal::exit_signal() {
        Some(sig) => ExitCode::from((128 + sig).clamp(0, 255) as u8),
        None => code,
    }
}

fn run(cli: Cli) -> Result<ExitCode, CliError> {
    // a limit that does not parse never turns the memory check off silently
    sources::memory::limit_from_env()?;
    match cli.command {
        Some(Command::Completions { shell }) => {
            let mut cmd = command::command();
            let mut buf = Vec::new();
            clap_complete::generate(shell, &mut cmd, "cidscope", &mut buf);
            emit(&buf)?;
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::Export(a)) => run_export(&a),
        Some(Command::Demo(a)) => {
            if a.list {
                emit(cidscope::demo::list().as_bytes())?;
                return Ok(ExitCode::SUCCESS);
            }
            let name = a.name.as_deref().unwrap_or(cidscope::demo::DEMOS[0].name);
            let demo = cidscope::demo::find(name).ok_or_else(|| {
                CliError::Usage(format!(
                    "no demo named {name:?}; `cidscope demo --list` names them"
                ))
            })?;
            let setup = (demo.build)()?;
            let ui = a.ui.options()?;
            cidscope::ui::run_demo(demo.name, setup, ui, a.present)?;
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::Probes) => {
            emit(cidscope::events::probe_script().as_bytes())?;
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::Man(a)) => {
            match &a.dir {
                Some(dir) => {
                    for p in cli::man_page::write_pages(dir).map_err(CliError::Man)? {
                        eprintln!("cidscope: wrote {}", cidscope::sources::shown_path(&p));
                    }
                }
                None => emit(cli::man_page::main_page(false).as_bytes())?,
            }
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::Stats(a)) => run_stats(&a),
        Some(Command::Sim(a)) => run_sim(&a),
        Some(Command::Live(a)) => {
            // The TUI when a person watches; the text summary when piped or scripted.
            use std::io::IsTerminal;
            let ui = if !a.json && std::io::stdout().is_terminal() {
                Some(a.ui.options()?)
            } else {
                None
            };
            cidscope::live_cli::run_live(&a, ui)
        }
        Some(Command::Attach(a)) => {
            // like live: the TUI when a person watches, the summary when piped or --json
            use std::io::IsTerminal;
            let ui = if !a.json && std::io::stdout().is_terminal() {
                Some(a.ui.options()?)
            } else {
                None
            };
            cidscope::live_cli::run_attach(&a, ui)
        }
        Some(Command::Vm(a)) => run_vm(&a),
        None if cli.check => {
            let Some(file) = &cli.file else {
                return Err(CliError::Usage("--check needs a capture file".into()));
            };
            if !cli.more.is_empty() {
                return Err(CliError::Usage(
                    "--check checks one capture at a time".into(),
                ));
            }
            let opts = cli.load.options();
            let trace = cli::capture::open(file, &opts)?.load(&opts)?;
            cli::capture::note_interrupt();
            let mut report = cidscope::stats::check::run(&trace);
            // with --policy / --compare (or a known kernel): each model's invariants over the
            // capture's schedule too
            let mut kinds = cli.model.models();
            let mut params = cli.model.params();
            if let Some(c) = cidscope::model::kernel::choose(
                &cli.model.asked(),
                &cidscope::model::kernel::KernelFacts::of(&trace),
            ) {
                kinds.retain(|&k| k != c.policy);
                kinds.insert(0, c.policy);
                params = c.params;
            }
            if !kinds.is_empty() {
                let params = cidscope::model::policies::Params {
                    check_invariants: true,
                    ..params
                };
                for run in cidscope::model::policies::replay_all(&trace, &kinds, &params) {
                    report.add_model(&run);
                }
            }
            emit(report.text.as_bytes())?;
            Ok(ExitCode::from(report.status()))
        }
        None => {
            let ui = cli::ui_options(&cli.theme, &cli.keys)?;
            let opts = cli.load.options();
            // an experiment's directory: its recordings, first of each kernel × vCPUs
            let mut files: Vec<std::path::PathBuf> = Vec::new();
            for f in cli.file.iter().chain(&cli.more) {
                if f.is_dir() {
                    files.extend(cidscope::vm::experiment::record::recordings(f)?);
                } else {
                    files.push(f.clone());
                }
            }
            let opened = match files.first() {
                Some(f) => sources::open(f, &opts),
                None => sources::open_static(cidscope::DEMO_NAME, cidscope::DEMO_TRACE, &opts),
            }?;
            let mut beside = Vec::new();
            for f in files.iter().skip(1) {
                eprintln!("cidscope: reading {}", sources::shown_path(f));
                beside.push(cli::capture::open(f, &opts)?.load(&opts)?);
            }
            // --compare lists what to show (`observed` is the capture itself); --policy adds its
            // model beside the capture
            let mut models = cidscope::ui::ModelChoice::from_flags(
                cli.model.policy,
                &cli.model.compare,
                cli.model.params(),
            );
            models.asked = cli.model.asked();
            cidscope::ui::run_opened(opened, opts, ui, models, beside)?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// `cidscope stats`: the summary, as text or JSON.
fn run_stats(a: &StatsArgs) -> Result<ExitCode, CliError> {
    let mut opts = a.load.options();
    let progress = cli::capture::StderrProgress::start(&mut opts, &a.file.display().to_string());
    let opened = cli::capture::open(&a.file, &opts)?;
    let models = a.model.models();
    // the model of the capture's kernel when --kernel-version or the capture names it, or its
    // first lines show its family (a binary capture is decoded whole anyway: its trace says,
    // from a file or a pipe alike) (`--policy observed`: no model at all, so the capture is
    // streamed)
    let named = !a.model.asked().observed_only
        && (a.model.kernel_version.is_some() || !opened.is_text() || {
            let head = opened.kernel_facts(&opts);
            head.release.is_some() || head.rseq_irqs_off > 0
        });
    let s = if models.is_empty() && !named {
        // a stream: memory stays flat whatever the capture's size
        cidscope::stats::compute_streaming_with(&opened, &opts, a.json)?
    } else {
        // (CIDSCOPE_TIMING: the load's and the model's wall time on stderr, as the replay's)
        let timing = std::env::var_os("CIDSCOPE_TIMING").is_some();
        let t0 = std::time::Instant::now();
        // (the replay's first pass runs beside the load's last stage where the format can: a
        // binary capture's merge or packing, instead of after it)
        let (trace, first) = opened.load_beside(
            &opts,
            cidscope::model::policies::replay::FirstPassOf::beside,
        )?;
        let loaded = t0.elapsed();
        let s = stats_with_model(&trace, &a.model, a.json, first);
        if timing {
            eprintln!(
                "stats: load {loaded:?}, model and summary {:?}",
                t0.elapsed() - loaded
            );
        }
        s
    };
    drop(progress);
    cli::capture::note_interrupt();
    if a.json {
        emit_json(&s)?;
    } else {
        emit_text(|o| cidscope::stats::text::write_text(&s, o))?;
        emit(cidscope::stats::policy::render_text(&s).as_bytes())?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `stats` with the chosen model (`--policy`, else the kernel's) and the `--compare` ones;
/// `per_task` false: the text summary's form; `first_pass`: the replay's first pass, run beside the load.
fn stats_with_model(
    trace: &cidscope::events::Trace,
    m: &cli::ModelArgs,
    per_task: bool,
    first_pass: Option<cidscope::model::policies::replay::FirstPassOf>,
) -> cidscope::stats::Stats {
    let models = m.models();
    match cidscope::model::kernel::choose(
        &m.asked(),
        &cidscope::model::kernel::KernelFacts::of(trace),
    ) {
        Some(mut c) => {
            c.params.first_pass = first_pass;
            cidscope::stats::policy::compute_chosen(trace, &c, &models, per_task)
        }
        None if !models.is_empty() => {
            let params = cidscope::model::policies::Params {
                first_pass,
                ..m.params()
            };
            cidscope::stats::policy::compute_with_models(trace, &models, &params, per_task)
        }
        None => cidscope::stats::compute_with(trace, per_task),
    }
}

/// `cidscope export`: Perfetto JSON, CSV and/or SVG.
fn run_export(a: &ExportArgs) -> Result<ExitCode, CliError> {
    if a.perfetto.is_none() && a.perfetto_proto.is_none() && a.csv.is_none() && a.svg.is_none() {
        return Err(CliError::Usage(
            "export: name an output with --perfetto OUT.json, --perfetto-proto OUT.pftrace, --csv OUT.csv and/or --svg OUT.svg"
                .into(),
        ));
    }
    let write_err = |p: &std::path::Path| {
        let path = p.to_path_buf();
        move |source| CliError::Write { path, source }
    };
    let opts = a.load.options();
    let trace = cli::capture::open(&a.file, &opts)?.load(&opts)?;
    cli::capture::note_interrupt();
    let tl = cidscope::timeline::Timeline::build(&trace);
    if let Some(p) = &a.perfetto {
        // with --policy / --compare: each model's compactions as instants too
        let runs =
            cidscope::model::policies::replay_all(&trace, &a.model.models(), &a.model.params());
        let extra = cidscope::export::perfetto::model_instants(&runs);
        let f = out_file(p).map_err(write_err(p))?;
        // written as it is made: memory stays that of the loaded capture
        let mut w = std::io::BufWriter::with_capacity(1 << 20, f);
        cidscope::export::perfetto::write(&trace, &tl, &extra, &mut w)
            .and_then(|_| std::io::Write::flush(&mut w))
            .map_err(write_err(p))?;
    }
    if let Some(p) = &a.perfetto_proto {
        // each model's lanes, weights and compactions beside the observed ones
        let runs =
            cidscope::model::policies::replay_all(&trace, &a.model.models(), &a.model.params());
        let f = out_file(p).map_err(write_err(p))?;
        let mut w = std::io::BufWriter::with_capacity(1 << 20, f);
        cidscope::export::perfetto_proto::write(&trace, &tl, &runs, &mut w)
            .and_then(|_| std::io::Write::flush(&mut w))
            .map_err(write_err(p))?;
    }
    if let Some(p) = &a.svg {
        let theme = cidscope::ui::theme::Theme::resolve(a.theme.theme.as_deref(), false)?;
        let opts =
            cidscope::ui::svg_colors::svg_options(&trace, &tl, (a.from, a.to), a.tgid, &theme)?;
        // with --policy (or --compare): the first model's lanes and weight
        let picture = match a.model.models().first() {
            Some(&k) => {
                let run = cidscope::model::policies::replay(&trace, k, &a.model.params());
                cidscope::export::svg::render_model(&trace, &tl, &run, &opts)
            }
            None => cidscope::export::svg::render(&trace, &tl, &opts),
        };
        write_out(p, picture.as_bytes()).map_err(write_err(p))?;
    }
    if let Some(p) = &a.csv {
        let mut w = std::io::BufWriter::new(out_file(p).map_err(write_err(p))?);
        let r = cidscope::export::csv::write(&trace, &tl, &mut w)
            .and_then(|_| std::io::Write::flush(&mut w));
        // (`--csv - | head`: the reader leaving is no failure)
        r.or_else(|e| match e.kind() {
            std::io::ErrorKind::BrokenPipe if p.as_os_str() == "-" => Ok(()),
            _ => Err(e),
        })
        .map_err(write_err(p))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Where an export writes: the file named, or standard output for `-`.
fn out_file(p: &std::path::Path) -> std::io::Result<Box<dyn std::io::Write>> {
    if p.as_os_str() == "-" {
        return Ok(Box::new(std::io::stdout().lock()));
    }
    Ok(Box::new(std::fs::File::create(p)?))
}

/// Writes `bytes` to the file named, or to standard output for `-`.
fn write_out(p: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut f = out_file(p)?;
    f.write_all(bytes)?;
    f.flush()
}

/// `cidscope sim`: schedule, model, then JSON, a recorded trace, or the TUI.
fn run_sim(a: &SimArgs) -> Result<ExitCode, CliError> {
    let mut cfg = a.config()?;
    // refused before running when it cannot fit; stopped (and said so) where it stops fitting
    if !a.no_memory_check {
        cfg.max_events = cidscope::sim::memory_plan(&cfg)?;
    }
    let out = cidscope::sim::simulate(&cfg);
    if let Some(at_ns) = out.capped_at {
        return Err(cidscope::sim::SimError::Stopped {
            at_ns,
            events: out.trace.events.len(),
        }
        .into());
    }
    if let Some(path) = &a.record {
        cidscope::sim::record::write_file(path, &out.trace, &cfg).map_err(|source| {
            CliError::WriteSchedule {
                path: path.clone(),
                source,
            }
        })?;
    }
    if a.json {
        let mut text = serde_json::to_string_pretty(&out.summary)?;
        text.push('\n');
        emit(text.as_bytes())?;
        return Ok(ExitCode::SUCCESS);
    }
    if a.record.is_some() {
        return Ok(ExitCode::SUCCESS);
    }
    let ui = a.ui.options()?;
    // --compare: the same schedule through the other models too, in aligned lanes (each once;
    // the simulated policy is the first)
    let m = &a.model;
    let mut runs = vec![out.run];
    let mut others = Vec::new();
    for k in m.compare.iter().filter_map(|p| p.kind()) {
        if k != cfg.policy && !others.contains(&k) {
            others.push(k);
        }
    }
    runs.extend(cidscope::model::policies::replay_all(
        &out.trace,
        &others,
        &cfg.params,
    ));
    // a schedule has no kernel of its own to observe: say so rather than drop it silently
    let note = m
        .compare
        .contains(&cidscope::model::CidView::Observed)
        .then(|| {
            format!(
                "sim: no observed lanes (the schedule's rseq_updates are the {} model's own)",
                cfg.policy.id()
            )
        });
    cidscope::ui::run_sim(out.trace, runs, ui, note)?;
    Ok(ExitCode::SUCCESS)
}

/// `cidscope vm`: the TUI when a person watches; progress on stderr and the summary (or JSON)
/// when piped or asked for --json.
fn run_vm(a: &VmArgs) -> Result<ExitCode, CliError> {
    use cidscope::vm;
    use std::io::IsTerminal;
    if let Some(dir) = &a.report {
        let mut out = |t: &str| cli::stdout::write(t.as_bytes());
        return Ok(vm::experiment::reread::reread(
            dir,
            &a.model_override(),
            a.json,
            &mut out,
        )?);
    }
    if let Some(plan) = a.experiment()? {
        let mut out = |t: &str| cli::stdout::write(t.as_bytes());
        return Ok(vm::experiment::run(&plan, a.json, &mut out)?);
    }
    let mut cfg = a.config();
    let over = a.model_override();
    if a.json || !std::io::stdout().is_terminal() {
        let mut out = |t: &str| cli::stdout::write(t.as_bytes());
        return Ok(vm::report::run_headless(cfg, a.json, &over, &mut out)?);
    }
    cfg.keep_text = true;
    let ui = a.ui.options()?;
    let run = vm::VmRun::start(cfg.clone())?;
    let run = cidscope::ui::vm::run_vm(run, &cfg, &over, ui)?;
    if !run.is_finished() {
        if a.record.is_none() {
            // quit before the end and nothing to save: the VM goes at once
            run.kill();
            return Ok(ExitCode::SUCCESS);
        }
        eprintln!("cidscope vm: stopping the guest to save --record (Ctrl-C kills it)");
        run.request_stop();
    }
    run.wait()?;
    if let Some(p) = &a.record {
        // (the run wrote it as the capture arrived)
        eprintln!(
            "cidscope vm: recorded {} (replay: cidscope {0})",
            cidscope::sources::shown_path(p)
        );
    }
    Ok(ExitCode::SUCCESS)
}
