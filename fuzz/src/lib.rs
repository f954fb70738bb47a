//! The fuzz targets share cidscope's own pipeline exerciser.
pub use cidscope::testing::exercise;
