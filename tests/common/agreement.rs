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
