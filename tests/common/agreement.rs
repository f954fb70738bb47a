//! `stats --json`'s `model_agreement` for the inference tests (tests/inference.rs,
//! tests/inference_steps.rs).

use super::{cidscope, traces};
use serde_json::Value;

/// `cidscope stats --json ARGS FILE`'s `model_agreement` and `model`.
pub fn model(file: &str, args: &[&str]) -> (Value, Value) {
    let path = traces().join(file);
    let p = path.to_str().unwrap();
    let mut all = vec!["stats", "--json"];
    all.extend_from_slice(args);
    all.push(p);
    let (code, out, err) = cidscope(&all);
    assert_eq!(code, 0, "cidscope {all:?}: {err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    (v["model_agreement"].clone(), v["model"].clone())
}

pub fn u(v: &Value, k: &str) -> u64 {
    v[k].as_u64().unwrap_or_else(|| panic!("{k} in {v}"))
}

/// `inferred_steps` of a `model_agreement`: (kind, tid, record ts, placed ts).
pub fn placed(a: &Value) -> Vec<(String, u64, u64, u64)> {
    a["inferred_steps"]
        .as_array()
        .expect("inferred_steps")
        .iter()
        .map(|s| {
            (
                s["kind"].as_str().unwrap().to_string(),
                u(s, "tid"),
                u(s, "record_ts"),
                u(s, "placed_ts"),
            )
        })
        .collect()
}

/// A capture replayed with every invariant checked, none of them broken: the figures the tests
/// on cuts of fresh boots compare.
pub struct Cut {
    /// `model_agreement`, whole (for the failure messages).
    pub a: Value,
    /// The processes begun in the capture: (checked, agreed), with the inferred steps.
    pub fresh: (u64, u64),
    /// Of those, what the plain replay agrees with (no inferred step).
    pub predicted: u64,
    /// The inferred steps: (kind, tid, record ts, placed ts).
    pub steps: Vec<(String, u64, u64, u64)>,
}

impl Cut {
    /// The probe checks: (values compared, values matched).
    pub fn probe_checks(&self) -> (u64, u64) {
        let p = &self.a["probe_checks"];
        (u(p, "checked"), u(p, "matched"))
    }

    /// Whether a step of `kind` for `tid`, recorded at `record` (ns), was placed at `at`.
    pub fn placed(&self, kind: &str, tid: u64, record: u64, at: u64) -> bool {
        self.steps
            .iter()
            .any(|s| s.0 == kind && (s.1, s.2, s.3) == (tid, record, at))
    }
}

/// `model(file, ["--check-invariants", more...])`, asserting that no invariant broke.
pub fn checked_cut(file: &str, more: &[&str]) -> Cut {
    let mut args = vec!["--check-invariants"];
    args.extend_from_slice(more);
    let (a, m) = model(file, &args);
    assert_eq!(u(&m, "violations"), 0, "{file}: {m}");
    let f = &a["fresh"];
    Cut {
        fresh: (u(f, "checked"), u(f, "agreed")),
        predicted: u(&a["predicted_fresh"], "agreed"),
        steps: placed(&a),
        a,
    }
}

/// The `model_agreement` of `cidscope stats --json ARGS traces/FILE`.
pub fn agreement(file: &str, args: &[&str]) -> serde_json::Value {
    let path = traces().join(file);
    let p = path.to_str().expect("utf-8 path");
    let all: Vec<&str> = ["stats", "--json"]
        .into_iter()
        .chain(args.iter().copied())
        .chain([p])
        .collect();
    let (code, out, err) = cidscope(&all);
    assert_eq!(code, 0, "cidscope {all:?} failed: {err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    v["model_agreement"].clone()
}

/// The probe checks' mismatches of `m`, of more than `floor` values compared.
pub fn mismatches(m: &serde_json::Value, floor: u64) -> Vec<serde_json::Value> {
    let pc = &m["probe_checks"];
    assert!(pc["checked"].as_u64().is_some_and(|n| n > floor), "{pc}");
    pc["mismatches"].as_array().expect("mismatches").clone()
}

/// `checked` values were compared, and every one matched.
pub fn every_check_matches(m: &serde_json::Value, checked: u64) {
    assert_eq!(m["probe_checks"]["checked"], checked, "{m}");
    assert_eq!(mismatches(m, 0), Vec::<serde_json::Value>::new());
}

/// Every update of a task begun in the capture agreed.
pub fn all_fresh_agreed(m: &serde_json::Value) {
    assert_eq!(
        m["fresh"]["agreed"], m["fresh"]["checked"],
        "{}",
        m["fresh"]
    );
}

/// `stats` of `file` with `args`: `checked` probe values compared and every one matched, and
/// every update of a task begun in the capture agreed.
pub fn fully_explained(file: &str, args: &[&str], checked: u64) {
    let m = agreement(file, args);
    every_check_matches(&m, checked);
    all_fresh_agreed(&m);
}
