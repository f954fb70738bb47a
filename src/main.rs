use cidscope::cli::{Cli, Command, LoadArgs, ModelArgs, SimArgs, VmArgs};
use cidscope::sources::{self, LoadOptions};
use clap::Parser;
use std::process::ExitCode;

fn load_options(a: &LoadArgs) -> LoadOptions {
    LoadOptions {
        format: a.format.map(|f| f.format()),
        skip_bad_lines: a.skip_bad_lines,
        no_memory_check: a.no_memory_check,
        ..Default::default()
    }
}

/// Writes to stdout; a closed pipe (`cidscope stats ... | head`) is not an error.
fn emit(bytes: &[u8]) -> Result<(), String> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|_| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(format!("writing output: {e}")),
        _ => Ok(()),
    }
}

/// Theme and key bindings from the command line, NO_COLOR and the config file.
fn ui_options(
    theme: &Option<String>,
    keys: &Option<String>,
) -> Result<cidscope::ui::UiOptions, String> {
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    let theme = cidscope::ui::theme::Theme::resolve(theme.as_deref(), no_color)
        .map_err(|e| e.to_string())?;
    let bindings = cidscope::ui::keys::load_bindings(keys.as_deref()).map_err(|e| e.to_string())?;
    Ok(cidscope::ui::UiOptions { theme, bindings })
}

fn main() -> ExitCode {
    // cidscope as the init of a `cidscope vm` guest, or one of its worker processes
    if let Some(code) = cidscope::vm::guest::entry() {
        return code;
    }
    sources::memory::tune_allocator();
    let cli = Cli::parse();
    let code = match run(cli) {
        Ok(code) => code,
        Err(msg) => {
            eprintln!("cidscope: {msg}");
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

fn run(cli: Cli) -> Result<ExitCode, String> {
    match cli.command {
        Some(Command::Completions { shell }) => {
            let mut cmd = <Cli as clap::CommandFactory>::command();
            let mut buf = Vec::new();
            clap_complete::generate(shell, &mut cmd, "cidscope", &mut buf);
            emit(&buf)?;
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::Export(a)) => {
            if a.perfetto.is_none() && a.csv.is_none() && a.svg.is_none() {
                return Err(
                    "export: name an output with --perfetto OUT.json, --csv OUT.csv and/or --svg OUT.svg".into(),
                );
            }
            let trace =
                sources::load(&a.file, &load_options(&cli.load)).map_err(|e| e.to_string())?;
            let tl = cidscope::timeline::Timeline::build(&trace);
            if let Some(p) = &a.perfetto {
                // with --policy / --compare: each model's compactions as instants too
                let runs = cidscope::model::policies::replay_all(
                    &trace,
                    &cli.model.models(),
                    &cli.model.params(),
                );
                let extra = cidscope::export::perfetto::model_instants(&runs);
                let v = cidscope::export::perfetto::export(&trace, &tl, &extra);
                let f = std::fs::File::create(p).map_err(|e| format!("{}: {e}", p.display()))?;
                serde_json::to_writer(std::io::BufWriter::new(f), &v)
                    .map_err(|e| format!("{}: {e}", p.display()))?;
            }
            if let Some(p) = &a.svg {
                let theme = cidscope::ui::theme::Theme::resolve(cli.theme.as_deref(), false)
                    .map_err(|e| e.to_string())?;
                let opts = cidscope::ui::svg_colors::svg_options(
                    &trace,
                    &tl,
                    (a.from, a.to),
                    a.tgid,
                    &theme,
                )?;
                std::fs::write(p, cidscope::export::svg::render(&trace, &tl, &opts))
                    .map_err(|e| format!("{}: {e}", p.display()))?;
            }
            if let Some(p) = &a.csv {
                let f = std::fs::File::create(p).map_err(|e| format!("{}: {e}", p.display()))?;
                let mut w = std::io::BufWriter::new(f);
                cidscope::export::csv::write(&trace, &tl, &mut w)
                    .and_then(|_| std::io::Write::flush(&mut w))
                    .map_err(|e| format!("{}: {e}", p.display()))?;
            }
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::Demo(a)) => {
            if a.list {
                emit(cidscope::demo::list().as_bytes())?;
                return Ok(ExitCode::SUCCESS);
            }
            let name = a.name.as_deref().unwrap_or(cidscope::demo::DEMOS[0].name);
            let demo = cidscope::demo::find(name).ok_or_else(|| {
                format!("no demo named {name:?}; `cidscope demo --list` names them")
            })?;
            let setup = (demo.build)()?;
            let ui = ui_options(&cli.theme, &cli.keys)?;
            cidscope::ui::run_demo(demo.name, setup, ui).map_err(|e| e.to_string())?;
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::Man) => {
            let cmd = <Cli as clap::CommandFactory>::command();
            let mut buf = Vec::new();
            clap_mangen::Man::new(cmd)
                .render(&mut buf)
                .map_err(|e| format!("writing the man page: {e}"))?;
            emit(&buf)?;
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::Stats(a)) => {
            let opts = load_options(&cli.load);
            let opened = sources::open(&a.file, &opts).map_err(|e| e.to_string())?;
            let models = cli.model.models();
            let s = if models.is_empty() {
                // a stream: memory stays flat whatever the capture's size
                cidscope::stats::compute_streaming(&opened, &opts).map_err(|e| e.to_string())?
            } else {
                let trace = opened.load(&opts).map_err(|e| e.to_string())?;
                cidscope::stats::policy::compute_with_models(&trace, &models, &cli.model.params())
            };
            if a.json {
                let mut out = serde_json::to_string_pretty(&s).map_err(|e| e.to_string())?;
                out.push('\n');
                emit(out.as_bytes())?;
            } else {
                emit(cidscope::stats::render_text(&s).as_bytes())?;
                emit(cidscope::stats::policy::render_text(&s).as_bytes())?;
            }
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::Sim(a)) => run_sim(&a, &cli.model, || ui_options(&cli.theme, &cli.keys)),
        Some(Command::Live(a)) => {
            // The TUI when a person watches; the text summary when piped or scripted.
            use std::io::IsTerminal;
            let ui = if !a.json && std::io::stdout().is_terminal() {
                Some(ui_options(&cli.theme, &cli.keys)?)
            } else {
                None
            };
            cidscope::live_cli::run_live(&a, ui)
        }
        Some(Command::Attach(a)) => {
            // like live: the TUI when a person watches, the summary when piped or --json
            use std::io::IsTerminal;
            let ui = if !a.json && std::io::stdout().is_terminal() {
                Some(ui_options(&cli.theme, &cli.keys)?)
            } else {
                None
            };
            cidscope::live_cli::run_attach(&a, ui)
        }
        Some(Command::Vm(a)) => run_vm(&a, &cli.model, || ui_options(&cli.theme, &cli.keys)),
        None if cli.check => {
            let Some(file) = &cli.file else {
                return Err("--check needs a capture file".into());
            };
            let trace = sources::load(file, &load_options(&cli.load)).map_err(|e| e.to_string())?;
            let mut report = cidscope::stats::check::run(&trace);
            // with --policy / --compare: each model's invariants over the capture's schedule too
            let kinds = cli.model.models();
            if !kinds.is_empty() {
                let params = cidscope::model::policies::Params {
                    check_invariants: true,
                    ..cli.model.params()
                };
                for run in cidscope::model::policies::replay_all(&trace, &kinds, &params) {
                    report.add_model(&run);
                }
            }
            emit(report.text.as_bytes())?;
            Ok(ExitCode::from(report.status()))
        }
        None => {
            let ui = ui_options(&cli.theme, &cli.keys)?;
            let opts = load_options(&cli.load);
            let opened = match &cli.file {
                Some(f) => sources::open(f, &opts),
                None => sources::open_static(cidscope::DEMO_NAME, cidscope::DEMO_TRACE, &opts),
            }
            .map_err(|e| e.to_string())?;
            // --compare lists what to show (`observed` is the capture itself); --policy adds its
            // model beside the capture
            let models = cidscope::ui::ModelChoice::from_flags(
                cli.model.policy,
                &cli.model.compare,
                cli.model.params(),
            );
            cidscope::ui::run_opened(opened, opts, ui, models).map_err(|e| e.to_string())?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// `cidscope sim`: schedule, model, then JSON, a recorded trace, or the TUI.
fn run_sim(
    a: &SimArgs,
    m: &ModelArgs,
    ui: impl FnOnce() -> Result<cidscope::ui::UiOptions, String>,
) -> Result<ExitCode, String> {
    let cfg = cidscope::sim::SimConfig::from_args(a, m)?;
    let out = cidscope::sim::simulate(&cfg);
    if let Some(path) = &a.record {
        cidscope::sim::record::write_file(path, &out.trace, &cfg).map_err(|e| {
            format!(
                "{}: cannot write the recorded schedule: {e}",
                path.display()
            )
        })?;
    }
    if a.json {
        let mut text = serde_json::to_string_pretty(&out.summary).map_err(|e| e.to_string())?;
        text.push('\n');
        emit(text.as_bytes())?;
        return Ok(ExitCode::SUCCESS);
    }
    if a.record.is_some() {
        return Ok(ExitCode::SUCCESS);
    }
    let ui = ui()?;
    // --compare: the same schedule through the other models too, in aligned lanes (each once;
    // the simulated policy is the first)
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
        .contains(&cidscope::cli::PolicyArg::Observed)
        .then(|| {
            format!(
                "sim: no observed lanes (the schedule's rseq_updates are the {} model's own)",
                cfg.policy.id()
            )
        });
    cidscope::ui::run_sim(out.trace, runs, ui, note).map_err(|e| e.to_string())?;
    Ok(ExitCode::SUCCESS)
}

/// `cidscope vm`: the TUI when a person watches; progress on stderr and the summary (or JSON)
/// when piped or asked for --json.
fn run_vm(
    a: &VmArgs,
    m: &ModelArgs,
    ui: impl FnOnce() -> Result<cidscope::ui::UiOptions, String>,
) -> Result<ExitCode, String> {
    use cidscope::vm;
    use std::io::IsTerminal;
    let mut cfg = vm::VmConfig {
        threads: a.threads,
        duration_ns: a.duration,
        attach: a.attach,
        append: a.append.clone(),
        memory_mb: a.memory,
        boot_timeout: a.boot_timeout.map(std::time::Duration::from_secs),
        qemu: a.qemu.clone(),
        accel: match a.accel {
            cidscope::cli::AccelArg::Auto => vm::qemu::AccelChoice::Auto,
            cidscope::cli::AccelArg::Kvm => vm::qemu::AccelChoice::Kvm,
            cidscope::cli::AccelArg::Tcg => vm::qemu::AccelChoice::Tcg,
        },
        buffer_kb: a.buffer_kb,
        gzip_initrd: a.gzip_initrd,
        ..vm::VmConfig::new(a.kernel.clone(), a.cpus, &a.workload)
    };
    let over = vm::ModelOverride {
        policy: m.policy.and_then(|p| p.kind()),
        version: m.kernel.map(|_| m.params().version),
        hz: m.hz,
        base: m.params(),
    };
    let mut out = |t: &str| emit(t.as_bytes());
    if a.json || !std::io::stdout().is_terminal() {
        return vm::report::run_headless(cfg, a.record.clone(), a.json, &over, &mut out);
    }
    cfg.keep_text = true;
    let ui = ui()?;
    let run = vm::VmRun::start(cfg.clone())?;
    let run = cidscope::ui::vm::run_vm(run, &cfg, &over, ui).map_err(|e| e.to_string())?;
    if !run.is_finished() {
        if a.record.is_none() {
            // quit before the end and nothing to save: the VM goes at once
            run.kill();
            return Ok(ExitCode::SUCCESS);
        }
        eprintln!("cidscope vm: stopping the guest to save --record (Ctrl-C kills it)");
        run.request_stop();
    }
    let o = run.wait()?;
    if let Some(p) = &a.record {
        std::fs::copy(&o.capture, p)
            .map_err(|e| format!("--record {}: cannot write: {e}", p.display()))?;
        eprintln!(
            "cidscope vm: recorded {} (replay: cidscope {0})",
            p.display()
        );
    }
    Ok(ExitCode::SUCCESS)
}
