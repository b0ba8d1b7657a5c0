//! The source papers' experiments, each from its plan to its report
//! sections and claim rows: HIOPS ([`hiops_paper`]), the ADMS'10 platform
//! study ([`characterize`], with its cores x devices grid in
//! [`cores_devices`] and clocks by layer in [`by_layer`]), the IOZone study
//! ([`iozone`]), Table 1's I/O paths ([`table1`]), and what each part ran
//! against the paper's method ([`method`], [`platform_settings`]).

pub mod by_layer;
pub mod characterize;
pub mod cores_devices;
pub mod hiops_paper;
pub mod iozone;
pub mod method;
pub mod platform_settings;
pub mod table1;
