//! `cidscope vm` in the TUI: the guest's capture fills the view as it streams in (the loading
//! path of a capture file); the message line says what the VM is doing; once the guest has said
//! hello, its kernel's model runs beside what it shows. No keys of its own.

use super::Session;
use crate::ui::keys::Action;
use crate::ui::state::{LoadMsg, State};
use crate::vm::{ModelOverride, Phase, VmConfig, VmRun, feed::Feed, report};
use std::time::Duration;

pub struct Vm {
    run: VmRun,
    cfg: VmConfig,
    model: ModelOverride,
    feed: Feed,
    hello: bool,
    done: bool,
}

impl Vm {
    pub fn new(run: VmRun, cfg: VmConfig, model: ModelOverride, name: &str) -> Self {
        Vm {
            run,
            cfg,
            model,
            feed: Feed::new(name),
            hello: false,
            done: false,
        }
    }

    /// The run, back to the caller when the TUI ends (it may still be going).
    pub fn into_run(self) -> VmRun {
        self.run
    }
}

impl Session for Vm {
    fn tick(&mut self, st: &mut State) {
        if self.done {
            return;
        }
        let status = self.run.status();
        // once the guest said hello and its HZ is resolved: its kernel's model
        let up = matches!(
            status.phase,
            Phase::Running | Phase::Collecting | Phase::Done
        );
        if let (false, true, Some(h)) = (self.hello, up, &status.hello) {
            self.hello = true;
            self.feed.set_cpus(h.cpus);
            // the capture is the guest's: its kernel names the model
            let trace = std::sync::Arc::make_mut(&mut st.trace);
            trace.kernel_release = Some(h.kernel.clone());
            trace.kernel_hz = status.hz.as_ref().map(|z| z.0);
            trace.kernel_scan_batch = status.scan_batch;
            st.models.request = Some(crate::ui::models::ModelRequest {
                asked: self.model.clone(),
                others: Vec::new(),
            });
        }
        self.feed.push(&self.run.take_text());
        let finished = self.run.is_finished();
        let d = self.feed.take(finished);
        if !(d.events.is_empty() && d.new_strings.is_empty() && d.tasks.is_empty()) {
            st.on_load(LoadMsg::Delta(d));
        }
        st.overlays.message = Some(format!(
            "cidscope vm: {}",
            report::progress_line(&status, &self.cfg)
        ));
        if finished {
            self.done = true;
            st.on_load(LoadMsg::Done(Ok(())));
            if status.phase == Phase::Failed {
                st.overlays.message = Some("the VM run failed: q shows why".into());
            }
        }
    }

    fn apply(&mut self, _action: Action, _st: &mut State) -> bool {
        false
    }

    fn frame_wait(&self, _st: &State, _draw_ms: u64) -> Duration {
        Duration::from_millis(100)
    }
}
