//! `cidscope vm` in the TUI: the capture streams in through the [`Vm`] session.

use super::app::App;
use super::error::UiError;
use super::event_loop::run_app;
use super::options::UiOptions;
use super::session::vm::Vm;
use super::state::State;
use crate::events::Trace;
use crate::sources::formats::FTRACE;
use crate::timeline::Timeline;
use crate::vm::{ModelOverride, VmConfig, VmRun};

/// Runs the TUI until the user quits; gives the run back (it may go on; the caller ends it).
pub fn run_vm(
    run: VmRun,
    cfg: &VmConfig,
    model: &ModelOverride,
    opts: UiOptions,
) -> Result<VmRun, UiError> {
    let name = format!(
        "vm: {} ({} vCPUs, {})",
        cfg.kernel.display(),
        cfg.cpus,
        cfg.workload
    );
    let mut state = State::new(
        Trace::new(&name, FTRACE),
        Timeline::empty(Timeline::DEFAULT_INTERVAL),
    );
    state.view.follow_load = true;
    let session = Vm::new(run, cfg.clone(), model.clone(), &name);
    let mut app = App::with_session(state, Box::new(session));
    app.theme = opts.theme;
    app.bindings = opts.bindings;
    let app = run_app(app)?;
    let vm = app.into_session::<Vm>().expect("run_vm runs a Vm session"); // invariant: built above
    Ok(vm.into_run())
}
