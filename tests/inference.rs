//! The inference of untraced steps as `stats` reports it (docs/models.md §5.3): the model's own
//! prediction beside the agreement with the inferred steps, the same however the policy is
//! named, steps inside their windows that break no invariant, and no rescue of a policy of the
//! wrong family. The classes of untraced step the search places, each on a capture that shows
//! it: tests/inference_steps.rs.

mod common;

use common::agreement::{model, u};
use common::{cidscope, traces};
use serde_json::Value;

/// The text form of `stats ARGS FILE` (FILE under traces/), which must succeed.
fn stats_text(file: &str, args: &[&str]) -> String {
    let path = traces().join(file);
    let mut all = vec!["stats"];
    all.extend_from_slice(args);
    all.push(path.to_str().expect("a UTF-8 path"));
    let (code, out, err) = cidscope(&all);
    assert_eq!(code, 0, "{err}");
    out
}

/// `stats --json ARGS FILE` whole.
fn stats_json(file: &str, args: &[&str]) -> Value {
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    serde_json::from_str(&stats_text(file, &all)).expect("stats --json is JSON")
}

/// `model_agreement` without the keys that say how the model was chosen.
fn without_choice(mut a: Value) -> Value {
    let o = a.as_object_mut().expect("model_agreement");
    o.remove("chosen_because");
    o.remove("kernel_version");
    a
}

/// Naming the policy (`--policy P`, with the variant) or naming the kernel that runs it
/// (`--kernel-version V`, or the capture's own header) gives the same `model_agreement`, with
/// inference on and off: the same plain replay, the same steps.
#[test]
fn the_policy_or_its_kernel_give_the_same_model_agreement() {
    let cases: [(&str, &[&str], &[&str]); 3] = [
        (
            "kernels-plain/k7.2.13-c8-churn.ftrace.txt",
            &["--policy", "owner-mode", "--hz", "250"],
            &[
                "--kernel-version",
                "7.2.13+deb14-cloud-amd64",
                "--hz",
                "250",
            ],
        ),
        (
            "kernels-plain/k6.12.117-c16-churn.ftrace.txt",
            &["--policy", "lazy-compact", "--kernel", "6.4", "--hz", "250"],
            &[
                "--kernel-version",
                "6.12.117+deb13-cloud-amd64",
                "--hz",
                "250",
            ],
        ),
        (
            "kernels/k6.18.15-c4-churn-resume.ftrace.txt.zst",
            &["--policy", "lazy-compact"],
            &["--kernel-version", "6.18.15+deb13-cloud-amd64"],
        ),
    ];
    let mut inferred = 0;
    for (file, by_policy, by_kernel) in cases {
        for infer in ["auto", "off"] {
            let with = |a: &[&'static str]| -> Vec<&'static str> {
                let mut v = a.to_vec();
                v.extend(["--infer-steps", infer]);
                v
            };
            let (p, _) = model(file, &with(by_policy));
            let (k, _) = model(file, &with(by_kernel));
            assert_eq!(p["infer_steps"], infer, "{file}");
            if infer == "auto" {
                inferred += p["inferred_steps"].as_array().map_or(0, Vec::len);
            }
            assert_eq!(
                without_choice(p),
                without_choice(k),
                "{file}, --infer-steps {infer}: --policy and --kernel-version differ"
            );
        }
    }
    // (a capture that names its kernel: plain `stats` is the third way to name it)
    let file = "kernels/k6.18.15-c4-churn-resume.ftrace.txt.zst";
    let (own, _) = model(file, &[]);
    let (p, _) = model(file, &["--policy", "lazy-compact"]);
    assert_eq!(without_choice(own), without_choice(p), "{file}");
    assert!(
        inferred > 0,
        "no case inferred a step: the test compares nothing"
    );
}

/// Predicted is the plain replay (`--infer-steps off` agrees with exactly that many), agreed is
/// with the steps; each step lies inside its window, what they changed adds up to the
/// difference, and the replay with them breaks no invariant of the model.
#[test]
fn inferred_steps_are_inside_their_windows_and_break_nothing() {
    let file = "kernels-plain/k7.2.13-c8-churn.ftrace.txt";
    let args = [
        "--kernel-version",
        "7.2.13+deb14-cloud-amd64",
        "--hz",
        "250",
    ];
    let (a, _) = model(file, &args);
    let (off, _) = model(file, &[&args[..], &["--infer-steps", "off"]].concat());
    assert_eq!(
        u(&off, "agreed"),
        u(&a, "predicted"),
        "predicted is the plain replay"
    );
    assert_eq!(u(&off, "predicted"), u(&off, "agreed"));
    assert!(off["inferred_steps"].as_array().unwrap().is_empty());
    assert!(
        off["inference"].as_str().unwrap().starts_with("off"),
        "{}",
        off["inference"]
    );
    let steps = a["inferred_steps"].as_array().unwrap();
    assert!(!steps.is_empty(), "{a}");
    assert!(u(&a, "agreed") > u(&a, "predicted"));
    let (mut fixed, mut broken) = (0, 0);
    for s in steps {
        let (from, at, to) = (
            u(&s["window"], "from_ts"),
            u(s, "placed_ts"),
            u(&s["window"], "to_ts"),
        );
        assert!(from <= at && at <= to, "{s}: outside its window");
        assert!(s["window"]["from"].as_str().is_some_and(|x| !x.is_empty()));
        assert!(s["window"]["to"].as_str().is_some_and(|x| !x.is_empty()));
        assert_eq!(
            s["displacement_ns"].as_i64().unwrap(),
            at as i64 - u(s, "record_ts") as i64
        );
        fixed += u(s, "fixed");
        broken += u(s, "broken");
    }
    assert_eq!(
        fixed - broken,
        u(&a, "agreed") - u(&a, "predicted"),
        "what the steps changed adds up"
    );
    let (c, m) = model(file, &[&args[..], &["--check-invariants"]].concat());
    assert_eq!(
        u(&m, "violations"),
        0,
        "invariant breaks with the inferred steps"
    );
    assert_eq!(c["inferred_steps"], a["inferred_steps"]);
}

/// A policy of the other family does not become a fit by inference: on a capture of a 7.x
/// kernel that names itself, lazy-compact's inference does not run; on one that does not,
/// owner-mode gains at most 5 points on a 6.x capture, and lazy-compact on a 7.x one.
#[test]
fn inference_does_not_rescue_the_wrong_family() {
    // a capture that cannot tell the families apart: the steps both need are no evidence for
    // either (and with the kernel named, its own policy keeps them)
    let file = "kernels-plain/k6.12.117-c16-workers.ftrace.txt";
    let (a, _) = model(file, &["--policy", "owner-mode", "--hz", "250"]);
    assert!(
        a["inference"]
            .as_str()
            .unwrap()
            .contains("does not tell the two families apart"),
        "{}",
        a["inference"]
    );
    let (a, _) = model(
        file,
        &[
            "--kernel-version",
            "6.12.117+deb13-cloud-amd64",
            "--hz",
            "250",
        ],
    );
    assert!(u(&a, "agreed") > u(&a, "predicted"), "{a}");
    let (a, _) = model(
        "kernels/k7.3.4-c16-periodic.ftrace.txt.zst",
        &["--policy", "lazy-compact"],
    );
    assert!(
        a["inference"].as_str().unwrap().starts_with("not run"),
        "{}",
        a["inference"]
    );
    assert_eq!(u(&a, "agreed"), u(&a, "predicted"));
    assert!(u(&a, "predicted") * 10 < u(&a, "checked") * 9, "{a}");
    for (file, wrong) in [
        ("kernels-plain/k6.12.117-c16-churn.ftrace.txt", "owner-mode"),
        // (one vCPU stall both families need: the same step lifts each by 29 points)
        (
            "kernels-plain/k6.12.117-c16-workers.ftrace.txt",
            "owner-mode",
        ),
        ("kernels-plain/k7.2.13-c8-churn.ftrace.txt", "lazy-compact"),
        ("kernels-plain/k7.2.13-c8-churn.ftrace.txt", "resume-batch"),
    ] {
        let (a, _) = model(file, &["--policy", wrong, "--hz", "250"]);
        let lift = u(&a, "agreed") - u(&a, "predicted");
        assert!(
            lift * 20 <= u(&a, "checked"),
            "{file} under {wrong}: {} -> {} of {}",
            a["predicted"],
            a["agreed"],
            a["checked"]
        );
    }
}

/// lazy-compact, HZ 250, inference off (the kernel not named).
const LAZY_COMPACT_OFF: &[&str] = &[
    "--policy",
    "lazy-compact",
    "--hz",
    "250",
    "--infer-steps",
    "off",
];

/// Where the capture's kernel is not named and the other family predicts every observed CID by
/// itself, no step could make the asked policy beat it (its steps would all be dropped): the
/// search does not run, says so, and the figures are those of the plain replay.
#[test]
fn no_search_where_the_other_family_predicts_every_cid() {
    // (a 6.x capture: its records do not show the family, as a 6.19+ one's may)
    let file = "kernels-plain/k6.18.15-c4-migrate.ftrace.txt";
    let (own, _) = model(file, &["--policy", "lazy-compact", "--hz", "250"]);
    assert_eq!(u(&own, "predicted"), u(&own, "checked"), "{own}");
    let (a, _) = model(file, &["--policy", "owner-mode", "--hz", "250"]);
    let why = a["inference"].as_str().unwrap();
    assert!(
        why.starts_with("not run: lazy-compact") && why.contains("predicts every observed CID"),
        "{why}"
    );
    let (off, _) = model(
        file,
        &[
            "--policy",
            "owner-mode",
            "--hz",
            "250",
            "--infer-steps",
            "off",
        ],
    );
    for k in ["checked", "predicted", "agreed"] {
        assert_eq!(a[k], off[k], "{k}");
    }
    assert!(u(&a, "agreed") < u(&a, "checked"), "{a}");
    assert_eq!(a["inferred_steps"].as_array().map(Vec::len), Some(0));
}

/// A capture that does not name its kernel may still show its family: an `rseq_update`
/// traced with interrupts off comes only from 6.19+'s exit-to-user fast path
/// (docs/models.md §5.8). There, inference does not run for a 6.x policy (as where the
/// kernel is named: its figures are the plain replay's), and owner-mode's steps are not held
/// against the other family's replays. A 6.x capture shows no such record.
#[test]
fn records_with_interrupts_off_show_the_6_19_family() {
    let file = "kernels-plain/k7.2.13-c8-churn.ftrace.txt";
    let s = stats_json(file, &["--policy", "lazy-compact", "--hz", "250"]);
    let a = &s["model_agreement"];
    assert!(u(&s, "rseq_irqs_off") > 0, "{}", s["rseq_irqs_off"]);
    let shown = s["kernel_family_shown"].as_str().unwrap_or_default();
    assert!(shown.starts_with("6.19+ (owner-mode): "), "{shown}");
    let why = a["inference"].as_str().unwrap();
    assert!(
        why.starts_with("not run: the capture's kernel is 6.19+") && why.contains("interrupts off"),
        "{why}"
    );
    let (off, _) = model(file, LAZY_COMPACT_OFF);
    for k in ["checked", "predicted", "agreed"] {
        assert_eq!(a[k], off[k], "{k}");
    }
    // owner-mode infers as where its kernel is named
    let (own, _) = model(file, &["--policy", "owner-mode", "--hz", "250"]);
    let named = model(
        file,
        &[
            "--kernel-version",
            "7.2.13+deb14-cloud-amd64",
            "--hz",
            "250",
        ],
    )
    .0;
    assert!(u(&own, "agreed") > u(&own, "predicted"), "{own}");
    assert_eq!(own["inferred_steps"], named["inferred_steps"]);
    let s = stats_json(
        "kernels-plain/k6.18.15-c4-migrate.ftrace.txt",
        &["--policy", "lazy-compact", "--hz", "250"],
    );
    assert_eq!(u(&s, "rseq_irqs_off"), 0);
    assert!(s.get("kernel_family_shown").is_none(), "{s}");
}

/// Without `--policy` or a release, `stats` replays the model of the family the records show
/// (owner-mode, HZ from the tick), and says why; a capture that shows none gets no model.
#[test]
fn the_family_the_records_show_chooses_the_model() {
    let file = "kernels-plain/k7.2.13-c8-churn.ftrace.txt";
    let a = &stats_json(file, &[])["model_agreement"];
    assert_eq!(a["policy"], "owner-mode", "{a}");
    let why = a["chosen_because"].as_str().unwrap_or_default();
    assert!(
        why.contains("6.19+") && why.contains("release unknown"),
        "{why}"
    );
    let (given, _) = model(file, &["--policy", "owner-mode"]);
    assert_eq!(without_choice(a.clone()), without_choice(given));
    let s = stats_json("kernels-plain/k6.18.15-c4-migrate.ftrace.txt", &[]);
    assert!(
        s.get("model_agreement").is_none(),
        "{}",
        s["model_agreement"]
    );
}

/// Where the capture lost events and the model misses, the model's section of the text says
/// what the loss means for the misses; where it lost none, it says nothing of it (both replayed
/// by lazy-compact without the kernel named, which misses on both).
#[test]
fn stats_text_says_a_lossy_capture_limits_the_model() {
    let say = "the capture lost events";
    for (file, lossy) in [
        (
            "inference/k6.18.15-c50-migrate-lost-cpu.ftrace.txt.zst",
            true,
        ),
        ("kernels-plain/k7.2.13-c8-churn.ftrace.txt", false),
    ] {
        let out = stats_text(file, LAZY_COMPACT_OFF);
        let model = out.split("\nmodel ").nth(1).expect("a model section");
        assert!(
            !model.contains("(100.0%), "),
            "{file}: the model must miss: {model}"
        );
        assert_eq!(model.contains(say), lossy, "{file}: {model}");
    }
}

/// The text form says both figures the way the TUI's title does.
#[test]
fn stats_text_says_predicted_and_agreed() {
    let out = stats_text(
        "kernels-plain/k7.2.13-c8-churn.ftrace.txt",
        &["--kernel-version", "7.2.13", "--hz", "250"],
    );
    let line = out
        .lines()
        .find(|l| l.starts_with("model owner-mode"))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(
        line.contains(": predicted ") && line.contains("inferred step"),
        "{line}"
    );
    assert!(out.contains("  inference: auto: "), "{out}");
}

/// The search copies the model's state at one snapshot in so many, more the more tasks the
/// model has, and makes the others from the copy before when a candidate asks for one
/// (`search/snapshots.rs`). On these captures, whose few tasks copy every snapshot, copying
/// one in 2 or in 16 (`CIDSCOPE_SNAPSHOT_SPACING`) must give the same steps and figures: the
/// snapshots made later are the states the copies were.
#[test]
fn snapshots_made_from_an_earlier_copy_give_the_same_steps() {
    let files = [
        "kernels-plain/k6.18.15-cidscope-seed000-c16-churn.ftrace.txt",
        "kernels/k6.18.15-c32-workers.ftrace.txt.zst",
        "kernels/k7.3.4-c16-churn.ftrace.txt.zst",
        "kernels/k6.12.117-c64-workers.ftrace.txt.zst",
    ];
    for file in files {
        let path = traces().join(file);
        let args = ["stats", "--json", path.to_str().expect("a UTF-8 path")];
        let (code, every, err) = cidscope(&args);
        assert_eq!(code, 0, "{err}");
        let a: Value = serde_json::from_str(&every).expect("JSON");
        assert!(
            !a["model_agreement"]["inferred_steps"]
                .as_array()
                .expect("inferred_steps")
                .is_empty(),
            "{file}: the search places steps here (what this test is about)"
        );
        for k in ["2", "16"] {
            let (code, sparse, err) =
                common::cidscope_env(&args, &[("CIDSCOPE_SNAPSHOT_SPACING", k)]);
            assert_eq!(code, 0, "{err}");
            let b: Value = serde_json::from_str(&sparse).expect("JSON");
            assert_eq!(
                a["model_agreement"], b["model_agreement"],
                "{file}: a copy every {k} snapshots"
            );
            assert_eq!(a, b, "{file}: a copy every {k} snapshots");
        }
    }
}

/// The search's budget is what bounds it: with none (`CIDSCOPE_SEARCH_BUDGET_BASE=0` and one
/// budgeted event per billion of the capture) a capture whose search places steps gets none,
/// the plain figures unchanged, and says the budget is why.
#[test]
fn a_search_without_budget_places_no_step() {
    let path = traces().join("kernels-plain/k6.18.15-cidscope-seed000-c16-churn.ftrace.txt");
    let args = ["stats", "--json", path.to_str().expect("a UTF-8 path")];
    let (code, out, err) = cidscope(&args);
    assert_eq!(code, 0, "{err}");
    let a: Value = serde_json::from_str(&out).expect("JSON");
    let a = &a["model_agreement"];
    let steps = |m: &Value| {
        m["inferred_steps"]
            .as_array()
            .expect("inferred_steps")
            .len()
    };
    assert!(
        steps(a) > 0,
        "the search places steps here (what this test is about)"
    );
    let (code, out, err) = common::cidscope_env(
        &args,
        &[
            ("CIDSCOPE_SEARCH_BUDGET_BASE", "0"),
            ("CIDSCOPE_SEARCH_BUDGET_PER", "1000000000"),
        ],
    );
    assert_eq!(code, 0, "{err}");
    let b: Value = serde_json::from_str(&out).expect("JSON");
    let b = &b["model_agreement"];
    assert_eq!(steps(b), 0);
    assert_eq!(a["predicted"], b["predicted"]);
    assert_eq!(b["agreed"], b["predicted"], "{b}");
    let why = b["inference"].as_str().expect("inference");
    assert!(why.contains("budget"), "{why}");
}
