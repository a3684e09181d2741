//! `--shard k/n`: a deterministic 1/n of the scenario files, chosen by a
//! stable hash of each file's path, so n machines split a suite without
//! talking to each other and `reloop merge` joins their reports.
//!
//! `--shard auto` reads k and n from the batch engine that started the
//! process, so one job template serves every shard: a Kubernetes Indexed
//! Job, a Slurm job array, or `RELOOP_SHARD` (what the GitHub Action sets
//! from its matrix, and what any other engine can set).

use std::path::Path;
use std::str::FromStr;

use reloop_agent::cache_break::fnv1a;

/// Shard `index` (1-based) of `count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// 1-based.
    pub index: u64,
    /// How many shards.
    pub count: u64,
}

impl FromStr for Shard {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let parsed = text.split_once('/').and_then(|(k, n)| Some((k.trim().parse::<u64>().ok()?, n.trim().parse::<u64>().ok()?)));
        match parsed {
            Some((index, count)) => Self::new(index, count).ok_or_else(|| format!("`{text}` is not a shard like `2/8` (1 ≤ k ≤ n)")),
            None => Err(format!("`{text}` is not a shard like `2/8` (1 ≤ k ≤ n), nor `auto`")),
        }
    }
}

impl Shard {
    fn new(index: u64, count: u64) -> Option<Self> {
        (count >= 1 && (1..=count).contains(&index)).then_some(Self { index, count })
    }

    /// Whether the scenario file at `path` belongs to this shard.
    pub fn contains(self, path: &Path) -> bool {
        fnv1a(path.to_string_lossy().replace('\\', "/").as_bytes()) % self.count == self.index - 1
    }
}

/// What `--shard` was given: a shard, or `auto`, resolved from the
/// environment when the batch starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShardArg {
    Given(Shard),
    Auto,
}

impl FromStr for ShardArg {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        if text.trim() == "auto" { Ok(Self::Auto) } else { text.parse().map(Self::Given) }
    }
}

impl ShardArg {
    /// The shard, reading `auto`'s from the process environment.
    pub fn resolve(self) -> Result<Shard, String> {
        match self {
            Self::Given(shard) => Ok(shard),
            Self::Auto => from_env(&|name| std::env::var(name).ok()),
        }
    }
}

/// The shard an engine's variables name, looked up with `var`, tried in
/// this order: `RELOOP_SHARD` (`k/n`, set by hand or by the Action), a
/// Slurm array task, a Kubernetes Indexed Job pod. Each engine numbers
/// from its own base; the result is always 1-based.
fn from_env(var: &dyn Fn(&str) -> Option<String>) -> Result<Shard, String> {
    let number = |name: &str| -> Result<Option<u64>, String> {
        var(name).map(|text| text.trim().parse::<u64>().map_err(|_| format!("--shard auto: {name}={text:?} is not a whole number"))).transpose()
    };
    if let Some(text) = var("RELOOP_SHARD") {
        return text.parse().map_err(|error| format!("--shard auto: RELOOP_SHARD: {error}"));
    }
    if let Some(id) = number("SLURM_ARRAY_TASK_ID")? {
        // `--array=1-8` numbers from 1, `--array=0-30:10` steps by 10: the
        // task's place is its distance from the first id, in steps.
        let count = number("SLURM_ARRAY_TASK_COUNT")?.ok_or("--shard auto: SLURM_ARRAY_TASK_ID is set but SLURM_ARRAY_TASK_COUNT is not")?;
        let min = number("SLURM_ARRAY_TASK_MIN")?.unwrap_or(0);
        let step = number("SLURM_ARRAY_TASK_STEP")?.unwrap_or(1).max(1);
        let offset = id.checked_sub(min).filter(|offset| offset % step == 0);
        return offset.and_then(|offset| Shard::new(offset / step + 1, count)).ok_or_else(|| {
            format!(
                "--shard auto: Slurm array task {id} (first {min}, step {step}) is not one of {count} evenly spaced tasks; give --shard K/N or RELOOP_SHARD"
            )
        });
    }
    if let Some(index) = number("JOB_COMPLETION_INDEX")? {
        // A pod sees its index but not the Job's `completions`: the Job
        // template passes that as RELOOP_SHARD_COUNT (docs/scale.md).
        let count = number("RELOOP_SHARD_COUNT")?
            .ok_or("--shard auto: JOB_COMPLETION_INDEX is set but RELOOP_SHARD_COUNT is not (set it to the Job's `completions`)")?;
        return Shard::new(index + 1, count).ok_or_else(|| format!("--shard auto: JOB_COMPLETION_INDEX={index} is past RELOOP_SHARD_COUNT={count}"));
    }
    Err("--shard auto: no shard in the environment (RELOOP_SHARD=K/N; SLURM_ARRAY_TASK_ID with SLURM_ARRAY_TASK_COUNT; \
         JOB_COMPLETION_INDEX with RELOOP_SHARD_COUNT)"
        .into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_k_of_n_and_auto_and_refuses_nonsense() {
        assert_eq!("2/3".parse::<Shard>(), Ok(Shard { index: 2, count: 3 }));
        assert_eq!("auto".parse::<ShardArg>(), Ok(ShardArg::Auto));
        assert_eq!("1/2".parse::<ShardArg>(), Ok(ShardArg::Given(Shard { index: 1, count: 2 })));
        for bad in ["0/3", "4/3", "1/0", "x/3", "3", "automatic"] {
            assert!(bad.parse::<ShardArg>().is_err(), "{bad}");
        }
    }

    #[test]
    fn every_file_lands_in_exactly_one_shard_and_the_hash_is_fixed() {
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c, "FNV-1a test vector");
        for file in ["scenarios/a.yaml", "scenarios/long/b.yaml", "c.yaml"] {
            let owners = (1..=3).filter(|&k| Shard { index: k, count: 3 }.contains(Path::new(file))).count();
            assert_eq!(owners, 1, "{file}");
        }
    }

    fn resolved(vars: &[(&str, &str)]) -> Result<Shard, String> {
        from_env(&|name| vars.iter().find(|(n, _)| *n == name).map(|(_, v)| (*v).to_owned()))
    }

    #[test]
    fn each_engine_numbers_its_shards_from_its_own_base() {
        let shard = |index, count| Ok(Shard { index, count });
        assert_eq!(resolved(&[("RELOOP_SHARD", "3/4")]), shard(3, 4));
        assert_eq!(resolved(&[("JOB_COMPLETION_INDEX", "0"), ("RELOOP_SHARD_COUNT", "4")]), shard(1, 4));
        assert_eq!(resolved(&[("JOB_COMPLETION_INDEX", "3"), ("RELOOP_SHARD_COUNT", "4")]), shard(4, 4));
        assert_eq!(resolved(&[("SLURM_ARRAY_TASK_ID", "0"), ("SLURM_ARRAY_TASK_COUNT", "8")]), shard(1, 8));
        let one_to_eight = [("SLURM_ARRAY_TASK_ID", "8"), ("SLURM_ARRAY_TASK_COUNT", "8"), ("SLURM_ARRAY_TASK_MIN", "1")];
        assert_eq!(resolved(&one_to_eight), shard(8, 8));
        let stepped = [("SLURM_ARRAY_TASK_ID", "20"), ("SLURM_ARRAY_TASK_COUNT", "4"), ("SLURM_ARRAY_TASK_MIN", "0"), ("SLURM_ARRAY_TASK_STEP", "10")];
        assert_eq!(resolved(&stepped), shard(3, 4));
        // RELOOP_SHARD wins over an engine's variables: it is set on purpose.
        assert_eq!(resolved(&[("RELOOP_SHARD", "2/2"), ("JOB_COMPLETION_INDEX", "0"), ("RELOOP_SHARD_COUNT", "2")]), shard(2, 2));
    }

    #[test]
    fn what_an_engine_leaves_out_or_gets_wrong_is_named() {
        let error = |vars: &[(&str, &str)]| resolved(vars).unwrap_err();
        assert!(error(&[]).contains("no shard in the environment"));
        assert!(error(&[("JOB_COMPLETION_INDEX", "0")]).contains("RELOOP_SHARD_COUNT is not"));
        assert!(error(&[("JOB_COMPLETION_INDEX", "4"), ("RELOOP_SHARD_COUNT", "4")]).contains("past RELOOP_SHARD_COUNT=4"));
        assert!(error(&[("SLURM_ARRAY_TASK_ID", "3")]).contains("SLURM_ARRAY_TASK_COUNT is not"));
        assert!(error(&[("SLURM_ARRAY_TASK_ID", "x"), ("SLURM_ARRAY_TASK_COUNT", "2")]).contains("\"x\" is not a whole number"));
        let uneven = [("SLURM_ARRAY_TASK_ID", "7"), ("SLURM_ARRAY_TASK_COUNT", "3"), ("SLURM_ARRAY_TASK_MIN", "1")];
        assert!(error(&uneven).contains("not one of 3 evenly spaced tasks"));
        assert!(error(&[("RELOOP_SHARD", "5/4")]).contains("RELOOP_SHARD"));
    }
}
