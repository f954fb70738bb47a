//! Models of CID state: what was observed in a capture, and (policies) what the kernel's CID
//! policies would do. Models read canonical events only; they know no file format and no UI.

pub mod alarm;
pub mod anomaly;
pub mod coverage;
pub mod error;
pub mod kernel;
pub mod lane;
pub mod observed;
pub mod policies;
pub mod seglane;
pub mod tasks;
pub mod thread_lanes;
pub mod view;

pub use alarm::{Alarm, AlarmKind};
pub use anomaly::{Anomalies, Anomaly, AnomalyKind};
pub use coverage::{Checkable, Coverage, Missing};
pub use error::ModelError;
pub use lane::{Segment, SlotFlags};
pub use observed::{Context, CpuSlot, ObservedState};
pub use seglane::SegLane;
pub use tasks::{MmId, MmInfo, MmOrigin};
pub use thread_lanes::ThreadLanes;
pub use view::CidView;
