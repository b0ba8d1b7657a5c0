//! RAM block devices a suite sets up beside the disk (the HAL's, shared
//! with the tests).

pub use hiops_hal::ramdev::RamDevice;
