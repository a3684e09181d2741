//! What the benches share: the generated replay workload (scenario files
//! and their recording), the in-process floor it is compared with, the
//! load on `reloop serve` and its floor (and the bench of both), peak
//! memory against the number of runs, the figures' helpers, and the frame of the estimator's
//! generated tables.

pub mod estimate_table;
pub mod figures;
pub mod floor;
pub mod serve_bench;
pub mod serve_load;
pub mod sweep_memory;
pub mod workload;
