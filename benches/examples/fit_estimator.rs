//! Fits the token estimator's constants (`reloop_agent::estimate::ratios`)
//! to o200k_base on the tuning corpus: a least-squares fit of each file's
//! charged figures (`estimate::charged`) to its o200k count, weighted by
//! 1 / count so that it minimizes relative error. Prints the fitted
//! constants beside the current ones, and each class's mean absolute error
//! under both, on the tuning corpus and on `corpus/heldout/` and
//! `corpus/heldout2/`, which the fit
//! never sees: that set only checks the result.
//!
//! ```sh
//! cargo run --release -p reloop-benches --example fit_estimator
//! ```

use std::path::{Path, PathBuf};

use reloop_agent::estimate::{Charged, FIGURES, charged};

/// The tuning corpus's class directories.
const CLASSES: [&str; 5] = ["code", "prose", "json", "cjk", "mixed"];

/// The constants' names, in the order of `Charged::row`.
const NAMES: [&str; FIGURES] = [
    "1 / bytes_per_token(Code)",
    "1 / bytes_per_token(Prose)",
    "1 / bytes_per_token(Json)",
    "1 / bytes_per_token(Cjk)",
    "TOKENS_PER_CJK_CHAR",
    "TOKENS_PER_SYMBOL",
    "TOKENS_PER_NUMBER_GROUP",
    "TOKENS_PER_ID_PIECE",
    "TOKENS_PER_PUNCT_RUN",
    "TOKENS_PER_INDENT",
    "TOKENS_PER_REPEAT",
    "TOKENS_PER_TRADITIONAL_HAN",
    "TOKENS_PER_JOINED_PUNCT",
];

/// One tuning file: its class directory, charged figures and o200k count.
struct Sample {
    class: &'static str,
    row: [f64; FIGURES],
    tokens: f64,
}

fn samples(corpus: &Path) -> Vec<Sample> {
    let tokenizer = bpe_openai::o200k_base();
    let mut samples = Vec::new();
    for class in CLASSES {
        let mut files: Vec<PathBuf> = std::fs::read_dir(corpus.join(class)).expect("the corpus reads").map(|e| e.expect("an entry").path()).collect();
        files.sort();
        for file in files {
            let text = std::fs::read_to_string(&file).expect("corpus files are UTF-8");
            samples.push(Sample { class, row: charged(&text).row(), tokens: tokenizer.count(&text) as f64 });
        }
    }
    samples
}

/// Solves the weighted normal equations by Gaussian elimination.
fn fit(samples: &[Sample]) -> [f64; FIGURES] {
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
        assert!(a[col][col].abs() > 1e-12, "{} is never charged in the corpus", NAMES[col]);
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

/// Each constant refitted alone, the others kept at `current`: a change
/// that one new feature or one new text asks for, without refitting (and
/// overfitting) everything.
fn fit_alone(samples: &[Sample], current: &[f64; FIGURES]) -> [f64; FIGURES] {
    std::array::from_fn(|k| {
        let (mut num, mut den) = (0.0, 0.0);
        for s in samples {
            let rest: f64 = s.row.iter().zip(current).enumerate().filter(|(i, _)| *i != k).map(|(_, (n, c))| n * c).sum();
            let x = s.row[k] / s.tokens;
            num += x * (1.0 - rest / s.tokens);
            den += x * x;
        }
        if den > 0.0 { num / den } else { current[k] }
    })
}

/// Mean absolute percentage error per class directory under `constants`.
fn mape(samples: &[Sample], constants: &[f64; FIGURES]) -> Vec<(&'static str, f64)> {
    CLASSES
        .iter()
        .map(|class| {
            let errors: Vec<f64> = samples
                .iter()
                .filter(|s| s.class == *class)
                .map(|s| (s.row.iter().zip(constants).map(|(n, c)| n * c).sum::<f64>() - s.tokens).abs() / s.tokens)
                .collect();
            (*class, 100.0 * errors.iter().sum::<f64>() / errors.len() as f64)
        })
        .collect()
}

fn main() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus");
    let heldout = samples(&corpus.join("heldout"));
    let heldout2 = samples(&corpus.join("heldout2"));
    let samples = samples(&corpus);
    let current = Charged::constants();
    let fitted = fit(&samples);
    let alone = fit_alone(&samples, &current);
    println!("{} tuning files\n\n| constant | current | fitted together | refitted alone |\n|---|---:|---:|---:|", samples.len());
    for (i, name) in NAMES.iter().enumerate() {
        let shown = |x: f64| if i < 4 { format!("{:.3} (1 / {:.2})", x, 1.0 / x) } else { format!("{x:.3}") };
        println!("| {name} | {} | {} | {} |", shown(current[i]), shown(fitted[i]), shown(alone[i]));
    }
    println!(
        "\n| class | tuning, current | tuning, fitted | held-out, current | held-out, fitted | held-out 2, current | held-out 2, fitted |\n|---|---:|---:|---:|---:|---:|---:|"
    );
    let columns = [
        mape(&samples, &current),
        mape(&samples, &fitted),
        mape(&heldout, &current),
        mape(&heldout, &fitted),
        mape(&heldout2, &current),
        mape(&heldout2, &fitted),
    ];
    for (i, class) in CLASSES.iter().enumerate() {
        let [a, b, c, d, e, f] = columns.each_ref().map(|column| column[i].1);
        println!("| {class} | {a:.1} % | {b:.1} % | {c:.1} % | {d:.1} % | {e:.1} % | {f:.1} % |");
    }
}
