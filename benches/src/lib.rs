//! What the benches share: the generated replay workload (scenario files
//! and their recording), the in-process floor it is compared with, and the
//! frame of the estimator's generated tables.

pub mod estimate_table;
pub mod floor;
pub mod workload;
