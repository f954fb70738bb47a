//! Every `unsafe` block of the sources and every raw system call, one small module per concern,
//! each a thin safe wrapper (the callers hold no unsafe code).

pub mod alloc;
pub mod mmap;
pub mod prefetch;
