use cidscope::cli::{Cli, Command, LoadArgs};
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
            let s = cidscope::stats::compute(&trace);
            if a.json {
                let out = serde_json::to_string_pretty(&s).map_err(|e| e.to_string())?;
                println!("{out}");
            } else {
                print!("{}", cidscope::stats::render_text(&s));
            }
            Ok(ExitCode::SUCCESS)
        }
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
