//! `--shard k/n`: a deterministic 1/n of the scenario files, chosen by a
//! stable hash of each file's path, so n machines split a suite without
//! talking to each other and `reloop merge` joins their reports.

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
            Some((index, count)) if count >= 1 && (1..=count).contains(&index) => Ok(Self { index, count }),
            _ => Err(format!("`{text}` is not a shard like `2/8` (1 ≤ k ≤ n)")),
        }
    }
}

impl Shard {
    /// Whether the scenario file at `path` belongs to this shard.
    pub fn contains(self, path: &Path) -> bool {
        fnv1a(path.to_string_lossy().replace('\\', "/").as_bytes()) % self.count == self.index - 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_k_of_n_and_refuses_nonsense() {
        assert_eq!("2/3".parse::<Shard>(), Ok(Shard { index: 2, count: 3 }));
        for bad in ["0/3", "4/3", "1/0", "x/3", "3"] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
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
}
