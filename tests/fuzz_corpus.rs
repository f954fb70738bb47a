//! Replays the committed fuzz corpora (fuzz/corpus/TARGET) through the same code the fuzz
//! targets run: CI does not fuzz, it replays. Every input must load or be refused cleanly, and
//! whatever loads must index, check, export and render without a panic.

use cidscope::events::Format;
use cidscope::sources::formats::{
    FTRACE, PERF_DATA, PERF_SCRIPT, SYSTRACE_HTML, TRACE_CMD_REPORT, TRACE_DAT,
};
use cidscope::sources::{LoadOptions, load_bytes};

fn format_of(target: &str) -> Option<Option<Format>> {
    Some(match target {
        "ftrace_text" => Some(FTRACE),
        "trace_cmd_report" => Some(TRACE_CMD_REPORT),
        "perf_script" => Some(PERF_SCRIPT),
        "perf_data" => Some(PERF_DATA),
        "trace_dat" => Some(TRACE_DAT),
        "systrace_html" => Some(SYSTRACE_HTML),
        "detect" => None,
        _ => return None,
    })
}

#[test]
fn replay_the_models_corpus() {
    let Ok(files) = std::fs::read_dir("fuzz/corpus/models") else {
        panic!("fuzz/corpus/models is missing");
    };
    let mut n = 0;
    for f in files {
        let data = std::fs::read(f.expect("entry").path()).expect("input");
        cidscope::testing::exercise_models(&cidscope::testing::trace_from_bytes(&data));
        n += 1;
    }
    assert!(n > 0);
}

/// The decompress target reads its input as a stream through the input layer.
#[test]
fn replay_the_decompress_corpus() {
    let files = std::fs::read_dir("fuzz/corpus/decompress").expect("fuzz/corpus/decompress");
    let mut n = 0;
    for f in files {
        let data = std::fs::read(f.expect("entry").path()).expect("input");
        let opts = LoadOptions {
            serial: true,
            ..Default::default()
        };
        if let Ok(o) = cidscope::sources::open_reader("fuzz", std::io::Cursor::new(data), &opts)
            && let Ok(trace) = o.load(&opts)
        {
            cidscope::testing::exercise(&trace);
        }
        n += 1;
    }
    assert!(n > 0);
}

#[test]
fn replay_every_corpus() {
    let Ok(dirs) = std::fs::read_dir("fuzz/corpus") else {
        panic!("fuzz/corpus is missing");
    };
    let mut inputs = 0;
    for d in dirs {
        let d = d.expect("entry");
        let target = d.file_name().to_string_lossy().into_owned();
        let Some(format) = format_of(&target) else {
            continue;
        };
        for f in std::fs::read_dir(d.path()).expect("corpus dir") {
            let f = f.expect("entry").path();
            let data = std::fs::read(&f).expect("input");
            let opts = LoadOptions {
                format,
                serial: true,
                ..Default::default()
            };
            if let Ok(trace) = load_bytes("fuzz", &data, &opts) {
                cidscope::testing::exercise(&trace);
            }
            inputs += 1;
        }
    }
    assert!(inputs > 0, "no corpus inputs found");
}
