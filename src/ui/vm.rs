//! `cidscope vm` in the TUI: the guest's capture fills the view as it streams in (the loading
//! path of a capture file); the message line says what the VM is doing; when the run ends, the
//! guest kernel's model runs beside what it shows.

use super::app::{App, LoadMsg};
use super::{UiOptions, run_app};
use crate::events::{Format, Trace};
use crate::timeline::Timeline;
use crate::vm::{ModelOverride, Phase, VmConfig, VmRun, feed::Feed, report};

/// Runs the TUI until the user quits (the run may go on; the caller ends it).
pub fn run_vm(
    run: &VmRun,
    cfg: &VmConfig,
    m: &ModelOverride,
    opts: UiOptions,
) -> Result<(), String> {
    let name = format!(
        "vm: {} ({} vCPUs, {})",
        cfg.kernel.display(),
        cfg.cpus,
        cfg.workload
    );
    let mut app = App::with_timeline(
        Trace::new(&name, Format::Ftrace),
        Timeline::empty(Timeline::DEFAULT_INTERVAL),
    );
    app.theme = opts.theme;
    app.bindings = opts.bindings;
    app.follow_load = true;
    let mut feed = Feed::new(&name);
    let mut hello = false;
    let mut done = false;
    run_app(app, &mut |app| {
        if done {
            return;
        }
        let st = run.status();
        // once the guest said hello and its HZ is resolved: its kernel's model
        let up = matches!(st.phase, Phase::Running | Phase::Collecting | Phase::Done);
        if let (false, true, Some(h)) = (hello, up, &st.hello) {
            hello = true;
            feed.set_cpus(h.cpus);
            let header = crate::vm::protocol::RecordHeader {
                kernel_version: h.kernel.clone(),
                hz: st.hz.as_ref().map(|z| z.0),
                cpus: h.cpus,
                ..Default::default()
            };
            if let Some((p, params)) = report::kernel_model(&header, m) {
                app.model_request = Some((vec![p], params));
            }
        }
        feed.push(&run.take_text());
        let finished = run.is_finished();
        let d = feed.take(finished);
        if !(d.events.is_empty() && d.new_strings.is_empty() && d.tasks.is_empty()) {
            app.on_load(LoadMsg::Delta(d));
        }
        app.message = Some(format!("cidscope vm: {}", report::progress_line(&st, cfg)));
        if finished {
            done = true;
            app.on_load(LoadMsg::Done(Ok(())));
            if st.phase == Phase::Failed {
                app.message = Some("the VM run failed: q shows why".into());
            }
        }
    })
    .map(|_| ())
}
