//! Jumps: the cursor to the next or previous search match, CID change, alarm, lost-event gap,
//! or (from the model layers) compaction trigger and scan start.

use super::jump::{jump_in, jump_to_time, jump_wrapping};
use super::keys::Action;
use super::state::State;

/// Carries out a jump action; false for any other action.
pub fn jump(st: &mut State, action: Action) -> bool {
    use Action as A;
    let fwd = matches!(
        action,
        A::SearchNext
            | A::NextCidChange
            | A::NextAlarm
            | A::NextLost
            | A::NextTick
            | A::NextResume
            | A::NextScan
            | A::NextTrigger
            | A::NextDiff
    );
    match action {
        A::SearchNext | A::SearchPrev => match &st.sel.search {
            None => st.overlays.message = Some("no search yet: press / to search".into()),
            Some((_, hits)) if hits.is_empty() => {
                st.overlays.message = Some("the last search matched nothing".into())
            }
            Some((_, hits)) => {
                let hits = hits.clone();
                jump_wrapping(st, &hits, fwd, "match");
                super::prompt::follow_match(st);
            }
        },
        A::NextCidChange | A::PrevCidChange => {
            let mm = st.sel.selected_mm();
            let idx: Vec<u32> = st
                .timeline
                .cid_changes
                .iter()
                .filter(|(_, m)| mm.is_none_or(|s| s == *m))
                .map(|&(i, _)| i)
                .collect();
            jump_in(st, &idx, fwd, "CID change");
        }
        A::NextAlarm | A::PrevAlarm => {
            let mm = st.sel.selected_mm();
            let ts: Vec<u64> = st
                .timeline
                .alarms
                .iter()
                .filter(|a| mm.is_none_or(|m| a.mm() == m))
                .map(|a| a.ts)
                .collect();
            jump_to_time(st, &ts, fwd, "alarm");
        }
        A::NextLost | A::PrevLost => {
            let idx: Vec<u32> = st.timeline.lost_at.iter().map(|&i| i as u32).collect();
            jump_in(st, &idx, fwd, "lost-event gap");
        }
        A::NextTick | A::PrevTick => {
            let ts = st.models.marks.ticks.clone();
            jump_model(st, &ts, fwd, "tick-triggered compaction");
        }
        A::NextResume | A::PrevResume => {
            let ts = st.models.marks.resumes.clone();
            jump_model(st, &ts, fwd, "resume-triggered compaction");
        }
        A::NextTrigger | A::PrevTrigger => {
            let ts = st.models.marks.triggers.clone();
            jump_model(st, &ts, fwd, "compaction start");
        }
        A::NextDiff | A::PrevDiff => match super::diffs::disagreements(st) {
            None => {
                st.overlays.message = Some(
                    "nothing to compare: --compare observed,P (or --policy P) shows two lane sets"
                        .into(),
                )
            }
            Some((a, b, ts)) => jump_to_time(st, &ts, fwd, &format!("place {a} and {b} disagree")),
        },
        A::NextScan | A::PrevScan => {
            let ts = st.models.marks.scans.clone();
            jump_model(st, &ts, fwd, "scan start");
        }
        _ => return false,
    }
    true
}

fn jump_model(st: &mut State, ts: &[u64], forward: bool, what: &str) {
    if ts.is_empty() {
        let models: Vec<&str> = st.models.views.iter().map(|m| m.run.policy.id()).collect();
        st.overlays.message = Some(if st.models.running.is_some() {
            format!("no {what} yet: the models are still replaying (the title says replaying…)")
        } else if models.is_empty() {
            format!(
                "no {what}: the kernel does not trace them; they come from a CID model (--policy)"
            )
        } else {
            let whose = match st.sel.selected_mm() {
                Some(_) => "for this process",
                None => "for any process",
            };
            format!(
                "no {what} in the {} model{} {whose}",
                models.join(", "),
                if models.len() == 1 { "" } else { "s" }
            )
        });
        return;
    }
    jump_to_time(st, ts, forward, what);
}
