//! The TUI's entry points, one per kind of run: each builds the state and its session, then
//! runs the event loop.

use super::app::App;
use super::error::UiError;
use super::event_loop::run_app;
use super::options::{ModelChoice, UiOptions};
use super::samples::Samples;
use super::session::demo::Demo;
use super::session::live::Live;
use super::session::replay::Replay;
use super::state::{LoadMsg, State};
use crate::events::Trace;
use crate::export::record::RecordStatus;
use crate::sources::live::{LiveCapture, LiveSession};
use crate::timeline::Timeline;
use std::sync::{Arc, mpsc};

fn styled(mut app: App, opts: UiOptions) -> App {
    app.theme = opts.theme;
    app.bindings = opts.bindings;
    app
}

/// Runs the TUI on an opened capture, reading it in the background: the first frame comes at
/// once with a progress bar, the view fills in as deltas arrive, and quitting during the load
/// is instant (the reader is told to stop and is not waited for).
pub fn run_opened(
    opened: crate::sources::Opened,
    load: crate::sources::LoadOptions,
    opts: UiOptions,
    models: ModelChoice,
    beside: Vec<crate::events::Trace>,
) -> Result<(), UiError> {
    let progress = Arc::new(crate::sources::Progress::default());
    let mut state = State::loading(&opened.name, opened.format, Arc::clone(&progress));
    state.compare.others = beside
        .into_iter()
        .map(super::compare::Companion::new)
        .collect();
    if !models.policies.is_empty() {
        state.models.show_observed = models.show_observed;
    }
    // run once read: the flags' models, or the model of the kernel the capture names
    state.models.request = Some(super::models::ModelRequest {
        asked: models.asked,
        others: models.policies,
    });
    state.overlays.message = models.note;
    // A small bound: the reader stays at most two segments ahead of the screen.
    let (tx, rx) = mpsc::sync_channel::<LoadMsg>(2);
    let lopts = crate::sources::LoadOptions {
        progress: Some(Arc::clone(&progress)),
        ..load
    };
    std::thread::Builder::new()
        .name("loader".into())
        .spawn(move || {
            // a bug in a reader stops the load with what it read kept, said in the status bar
            let r = crate::sources::sys::panics::contain(|| {
                opened.stream(&lopts, &mut |d| {
                    tx.send(LoadMsg::Delta(std::mem::take(d))).is_ok()
                })
            })
            .unwrap_or_else(|why| {
                Err(crate::sources::SourceError::file(
                    &opened.name,
                    format!("internal error (a bug; please report it): the reader failed: {why}"),
                ))
            });
            let _ = tx.send(LoadMsg::Done(r));
        })
        .map_err(UiError::LoaderThread)?;
    let app = styled(
        App::with_session(state, Box::new(Replay::reading(rx))),
        opts,
    );
    let r = run_app(app);
    progress
        .cancel
        .store(true, std::sync::atomic::Ordering::Relaxed);
    // a load that stopped after some events was shown in the status bar; it is also the
    // run's outcome, said again once the terminal is restored
    match r?.state.load_error.take() {
        Some(e) => Err(UiError::Load(e)),
        None => Ok(()),
    }
}

/// Runs the TUI on a simulated schedule and its model runs (`cidscope sim`): a replay of the
/// schedule; `note` goes on the message line.
pub fn run_sim(
    trace: Trace,
    runs: Vec<crate::model::policies::PolicyRun>,
    opts: UiOptions,
    note: Option<String>,
) -> Result<(), UiError> {
    let mut app = styled(App::new(trace), opts);
    app.state.overlays.message = note;
    // The schedule's rseq_updates are the simulated policy's own predictions: the model lanes
    // (its slots) say more than repeating them as observed lanes.
    app.state.models.show_observed = false;
    app.state.set_models(runs);
    run_app(app).map(|_| ())
}

/// An app showing a demo, at its first step.
pub fn demo_app(name: &str, setup: crate::demo::Setup) -> App {
    demo_app_presenting(name, setup, false)
}

/// An app showing a demo at its first step; `present`: in presenter mode (`demo --present`),
/// the lane sets each step names and only them, each step asked before it is shown.
pub fn demo_app_presenting(name: &str, setup: crate::demo::Setup, present: bool) -> App {
    let mut app = App::new(setup.trace);
    let st = &mut app.state;
    st.models.show_observed = setup.show_observed;
    if let Some(mm) = setup.mm {
        st.sel.select_mm(mm);
    }
    st.set_models(setup.runs);
    debug_assert!(st.sel.selected_mm().is_some() || setup.mm.is_none());
    let mut demo = Demo::new(name, setup.steps, setup.speed);
    demo.present = present;
    demo.go_to_step(0, st);
    app.session = Box::new(demo);
    app
}

/// Runs a demo in the TUI.
pub fn run_demo(
    name: &str,
    setup: crate::demo::Setup,
    opts: UiOptions,
    present: bool,
) -> Result<(), UiError> {
    run_app(styled(demo_app_presenting(name, setup, present), opts)).map(|_| ())
}

/// Runs the TUI on an attach session (`cidscope attach`: the kernel's events, no workload of
/// its own) until the user quits; shows process `pid` first (when it has rseq activity), else
/// the first pick. Returns the whole capture.
pub fn run_attach(
    source: LiveSession,
    opts: UiOptions,
    pid: Option<u32>,
    ncpus: u32,
    record: Option<Arc<RecordStatus>>,
) -> Result<LiveCapture, UiError> {
    let app = styled(attach_app(source, pid, ncpus, record), opts);
    let app = run_app(app)?;
    let live = app
        .into_session::<Live>()
        .expect("run_attach runs a Live session"); // invariant: built by attach_app
    Ok(live.into_source().stop()?)
}

/// The app of an attach session, before its first tick.
pub fn attach_app(
    source: LiveSession,
    pid: Option<u32>,
    ncpus: u32,
    record: Option<Arc<RecordStatus>>,
) -> App {
    let mut trace = source.empty_trace();
    if trace.ncpus_hint.is_none() {
        trace.ncpus_hint = Some(ncpus);
    }
    let mut state = State::new(trace, Timeline::empty(Timeline::DEFAULT_INTERVAL));
    state.sel.prefer_tgid = pid;
    state.streaming = true;
    let mut live = Live::new(source, pid.unwrap_or(0), ncpus);
    live.record = record;
    live.label = Some(match pid {
        Some(p) => format!("attach --pid {p}"),
        None => "attach --all".into(),
    });
    App::with_session(state, Box::new(live))
}

/// Runs the TUI on a live session until the user quits; returns the whole capture.
pub fn run_live(
    source: LiveSession,
    opts: UiOptions,
    pid: u32,
    attached: bool,
    ncpus: u32,
    record: Option<Arc<RecordStatus>>,
) -> Result<LiveCapture, UiError> {
    let mut trace = source.empty_trace();
    if trace.ncpus_hint.is_none() {
        trace.ncpus_hint = Some(ncpus);
    }
    let mut state = State::new(trace, Timeline::empty(Timeline::DEFAULT_INTERVAL));
    let mut samples = Samples::new(pid, attached);
    samples.privileged = crate::sources::sys::clock::geteuid() == 0;
    state.samples = Some(samples);
    let mut live = Box::new(Live::new(source, pid, ncpus));
    live.record = record;
    let app = run_app(styled(App::with_session(state, live), opts))?;
    let live = app
        .into_session::<Live>()
        .expect("run_live runs a Live session"); // invariant: built above
    Ok(live.into_source().stop()?)
}
