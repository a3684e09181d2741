//! What the benches share: the generated replay workload (scenario files
//! and their recording) and the in-process floor it is compared with.

pub mod floor;
pub mod workload;
