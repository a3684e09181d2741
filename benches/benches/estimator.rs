//! Throughput over the whole corpus of the loop's class estimator, of the
//! two o200k tokenizers (what an agent would pay to count exactly), of the
//! mock's exact count through its memo of piece counts (warm: after the
//! first iteration every piece has been seen), and of a plain pass over the
//! same bytes (the floor). Compare within one run: the
//! machines these run on are noisy, so only ratios travel.

use std::hint::black_box;
use std::path::PathBuf;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use reloop_agent::estimate::estimate_text;
use reloop_eval::estimator_report::expand;
use reloop_mock::tokens::count_text;

/// Every corpus file's text.
fn corpus() -> Vec<String> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../corpus");
    let classes = ["code", "prose", "json", "cjk", "mixed"].map(|class| root.join(class));
    expand(&classes).expect("the corpus is there").iter().map(|path| std::fs::read_to_string(path).expect("UTF-8")).collect()
}

fn estimator(c: &mut Criterion) {
    let texts = corpus();
    let bytes: usize = texts.iter().map(String::len).sum();
    let tiktoken = tiktoken_rs::o200k_base().expect("o200k loads");
    let bpe = bpe_openai::o200k_base();

    let mut group = c.benchmark_group("estimator");
    group.throughput(Throughput::Bytes(bytes as u64));
    group.bench_function("byte_scan", |b| {
        // One pass counting characters (bytes that do not continue one), /4.
        b.iter(|| texts.iter().map(|t| black_box(t.as_bytes()).iter().filter(|&&x| (x as i8) >= -0x40).count() / 4).sum::<usize>())
    });
    group.bench_function("class_estimator", |b| b.iter(|| texts.iter().map(|t| estimate_text(black_box(t))).sum::<u64>()));
    group.bench_function("bpe_openai_o200k", |b| b.iter(|| texts.iter().map(|t| bpe.count(black_box(t))).sum::<usize>()));
    group.bench_function("mock_o200k_piece_memo", |b| b.iter(|| texts.iter().map(|t| count_text(black_box(t))).sum::<u64>()));
    group.bench_function("tiktoken_o200k", |b| b.iter(|| texts.iter().map(|t| tiktoken.encode_ordinary(black_box(t)).len()).sum::<usize>()));
    group.finish();
}

criterion_group!(benches, estimator);
criterion_main!(benches);
