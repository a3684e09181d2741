//! Fits the token estimator's constants (`reloop_agent::estimate::ratios`)
//! to o200k_base on the tuning corpus: a least-squares fit of each file's
//! charged figures (`estimate::charged`) to its o200k count, weighted by
//! 1 / count so that it minimizes relative error. Prints the fitted
//! constants beside the current ones, and each class's mean absolute error:
//! on the tuning corpus under both, under ten-fold cross-validation (each
//! file estimated by constants fitted without it: what to expect on
//! unseen text), and on `corpus/heldout4/`, which the fit never sees.
//!
//! ```sh
//! cargo run --release -p reloop-benches --example fit_estimator
//! ```

use std::path::{Path, PathBuf};

use reloop_agent::estimate::ratios::TOKENS_PER;
use reloop_agent::estimate::{FIGURES, charged};

/// The tuning corpus's class directories.
const CLASSES: [&str; 5] = ["code", "prose", "json", "cjk", "mixed"];

/// One tuning file: its class directory, charged figures and o200k count.
struct Sample {
    class: &'static str,
    row: [f64; FIGURES],
    tokens: f64,
}

fn samples(corpus: &Path) -> Vec<Sample> {
    let tokenizer = bpe_openai::o200k_base();
    let mut samples = Vec::new();
    // A held-out set not written yet gives no figures.
    for class in CLASSES.into_iter().filter(|class| corpus.join(class).is_dir()) {
        let mut files: Vec<PathBuf> = std::fs::read_dir(corpus.join(class)).expect("the corpus reads").map(|e| e.expect("an entry").path()).collect();
        files.sort();
        for file in files {
            let text = std::fs::read_to_string(&file).expect("corpus files are UTF-8");
            samples.push(Sample { class, row: charged(&text), tokens: tokenizer.count(&text) as f64 });
        }
    }
    samples
}

/// Solves the weighted normal equations by Gaussian elimination.
fn fit<'a>(samples: impl IntoIterator<Item = &'a Sample>) -> [f64; FIGURES] {
    const N: usize = FIGURES;
    let mut a = [[0.0; N]; N];
    let mut b = [0.0; N];
    for sample in samples {
        let row = sample.row.map(|x| x / sample.tokens);
        for i in 0..N {
            b[i] += row[i];
            for j in 0..N {
                a[i][j] += row[i] * row[j];
            }
        }
    }
    for col in 0..N {
        let pivot = (col..N).max_by(|&x, &y| a[x][col].abs().total_cmp(&a[y][col].abs())).expect("rows remain");
        a.swap(col, pivot);
        b.swap(col, pivot);
        assert!(a[col][col].abs() > 1e-12, "{} is never charged in the corpus", TOKENS_PER[col].0);
        let (upper, lower) = a.split_at_mut(col + 1);
        let pivot_row = &upper[col];
        for (offset, row) in lower.iter_mut().enumerate() {
            let factor = row[col] / pivot_row[col];
            for (x, p) in row[col..].iter_mut().zip(&pivot_row[col..]) {
                *x -= factor * p;
            }
            b[col + 1 + offset] -= factor * b[col];
        }
    }
    let mut x = [0.0; N];
    for i in (0..N).rev() {
        x[i] = (b[i] - (i + 1..N).map(|k| a[i][k] * x[k]).sum::<f64>()) / a[i][i];
    }
    x
}

/// A sample's estimate under `constants`.
fn estimate(sample: &Sample, constants: &[f64; FIGURES]) -> f64 {
    sample.row.iter().zip(constants).map(|(n, c)| n * c).sum()
}

/// Mean absolute percentage error per class directory of `estimates`.
fn mape(samples: &[Sample], estimates: &[f64]) -> Vec<f64> {
    CLASSES
        .iter()
        .map(|class| {
            let errors: Vec<f64> = samples.iter().zip(estimates).filter(|(s, _)| s.class == *class).map(|(s, e)| (e - s.tokens).abs() / s.tokens).collect();
            // No files of the class (a held-out set not written yet): NaN.
            100.0 * errors.iter().sum::<f64>() / errors.len() as f64
        })
        .collect()
}

/// Each sample estimated by constants fitted on the other nine tenths.
fn cross_validated(samples: &[Sample]) -> Vec<f64> {
    const FOLDS: usize = 10;
    let mut estimates = vec![0.0; samples.len()];
    for fold in 0..FOLDS {
        let constants = fit(samples.iter().enumerate().filter(|(i, _)| i % FOLDS != fold).map(|(_, s)| s));
        for (i, s) in samples.iter().enumerate().filter(|(i, _)| i % FOLDS == fold) {
            estimates[i] = estimate(s, &constants);
        }
    }
    estimates
}

fn main() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus");
    let heldout = samples(&corpus.join("heldout4"));
    let samples = samples(&corpus);
    let current = TOKENS_PER.map(|(_, cost)| cost);
    let fitted = fit(&samples);
    println!("{} tuning files\n\n| constant | current | fitted |\n|---|---:|---:|", samples.len());
    for (i, (name, _)) in TOKENS_PER.iter().enumerate() {
        println!("| {name} | {:.3} | {:.3} |", current[i], fitted[i]);
    }
    let under = |set: &[Sample], constants: &[f64; FIGURES]| mape(set, &set.iter().map(|s| estimate(s, constants)).collect::<Vec<_>>());
    println!("\n| class | tuning, current | tuning, fitted | tuning, cross-validated | held-out, current | held-out, fitted |\n|---|---:|---:|---:|---:|---:|");
    let columns =
        [under(&samples, &current), under(&samples, &fitted), mape(&samples, &cross_validated(&samples)), under(&heldout, &current), under(&heldout, &fitted)];
    for (i, class) in CLASSES.iter().enumerate() {
        let [a, b, c, d, e] = columns.each_ref().map(|column| column[i]);
        println!("| {class} | {a:.1} % | {b:.1} % | {c:.1} % | {d:.1} % | {e:.1} % |");
    }
}
