use cidscope::cli::{Cli, Command, LoadArgs, ModelArgs, SimArgs};
use cidscope::sources::{self, LoadOptions};
use clap::Parser;
use std::process::ExitCode;

fn load_options(a: &LoadArgs) -> LoadOptions {
    LoadOptions {
        format: a.format.map(|f| f.format()),
        skip_bad_lines: a.skip_bad_lines,
        ..Default::default()
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(msg) => {
            eprintln!("cidscope: {msg}");
            ExitCode::from(2)
        }
    }
}

fn run(cli: Cli) -> Result<ExitCode, String> {
    match cli.command {
        Some(Command::Stats(a)) => {
            let trace =
                sources::load(&a.file, &load_options(&cli.load)).map_err(|e| e.to_string())?;
            let models = cli.model.models();
            let s = if models.is_empty() {
                cidscope::stats::compute(&trace)
            } else {
                cidscope::stats::policy::compute_with_models(&trace, &models, &cli.model.params())
            };
            if a.json {
                let out = serde_json::to_string_pretty(&s).map_err(|e| e.to_string())?;
                println!("{out}");
            } else {
                print!("{}", cidscope::stats::render_text(&s));
                print!("{}", cidscope::stats::policy::render_text(&s));
            }
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::Sim(a)) => run_sim(&a, &cli.model),
        None => {
            let opts = load_options(&cli.load);
            let trace = match &cli.file {
                Some(f) => sources::load(f, &opts),
                None => sources::load_bytes(cidscope::DEMO_NAME, cidscope::DEMO_TRACE, &opts),
            }
            .map_err(|e| e.to_string())?;
            cidscope::ui::run(trace).map_err(|e| format!("terminal: {e}"))?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// `cidscope sim`: schedule, model, then JSON, a recorded trace, or the TUI.
fn run_sim(a: &SimArgs, m: &ModelArgs) -> Result<ExitCode, String> {
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
        let out = serde_json::to_string_pretty(&out.summary).map_err(|e| e.to_string())?;
        println!("{out}");
        return Ok(ExitCode::SUCCESS);
    }
    if a.record.is_some() {
        return Ok(ExitCode::SUCCESS);
    }
    show_sim_in_tui(out.trace, out.run)
}

/// Hands a simulated run to the TUI. The lead wires this to `cidscope::ui::run_sim(trace, run)`.
fn show_sim_in_tui(
    _trace: cidscope::events::Trace,
    _run: cidscope::model::policies::PolicyRun,
) -> Result<ExitCode, String> {
    eprintln!("cidscope: the TUI view of sim is not wired yet; use --json");
    Ok(ExitCode::from(2))
}
