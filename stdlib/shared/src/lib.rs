//! What several stdlib components need alike, written once.

pub mod printed;
pub mod timestamp;
pub mod traceback;
