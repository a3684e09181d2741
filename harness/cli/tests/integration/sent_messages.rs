//! What each call sent, as the steps table keeps it for the trajectory
//! viewer (`docs/metrics.md`, `docs/html-report.md`): a real run whose
//! layer 0 masks old tool results, read back from its Parquet file and its
//! HTML page.

use std::collections::HashMap;

use serde_json::Value;

use crate::util::{reloop, repo, stderr};

#[test]
fn every_call_lists_what_it_sent_and_a_masked_result_names_its_original() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let run = reloop(&repo(), &["run", "scenarios/long-session-microcompaction.yaml", "--out", out.to_str().unwrap()]);
    assert!(run.status.code().is_some_and(|code| code <= 1), "{}", stderr(&run));
    let mut steps = crate::tables::read_rows(&out.join("steps.parquet"));
    steps.sort_by_key(|row| row["call_index"].parse::<u64>().unwrap());
    // Each message number's body, as the rows first wrote it.
    let mut bodies: HashMap<u64, Value> = HashMap::new();
    let mut masked = Vec::new();
    for row in &steps {
        if row["messages_first_seen"] != "null" {
            let first: Vec<Value> = serde_json::from_str(&row["messages_first_seen"]).unwrap();
            for message in first {
                let number = message["n"].as_u64().unwrap();
                assert!(bodies.insert(number, message.clone()).is_none(), "message {number} written twice");
                if message["shown"] == "masked" {
                    masked.push(message);
                }
            }
        }
        let sent = &row["sent_messages"];
        assert_ne!(sent, "null", "call {} lists what it sent", row["call_index"]);
        let numbers: Vec<u64> = sent
            .split(',')
            .flat_map(|part| {
                let (start, end) = part.split_once('-').unwrap_or((part, part));
                start.parse::<u64>().unwrap()..=end.parse::<u64>().unwrap()
            })
            .collect();
        assert_eq!(numbers.len().to_string(), row["request_messages"], "call {}: one number per message sent", row["call_index"]);
        assert!(numbers.iter().all(|n| bodies.contains_key(n)), "call {}: every message sent has a body by then", row["call_index"]);
        assert_eq!(bodies[&numbers[0]]["shown"], "system", "the system prompt goes first");
    }
    let message = masked.first().expect("layer 0 masked a tool result");
    let original = &bodies[&message["of"].as_u64().expect("a masked result names its original")];
    assert_eq!(original["shown"], "original");
    assert_eq!(original["body"]["call_id"], message["body"]["call_id"]);
    assert!(original["body"]["content"].as_str().unwrap().len() > message["body"]["content"].as_str().unwrap().len());

    let page = dir.path().join("report.html");
    let report = reloop(&repo(), &["report", out.to_str().unwrap(), "--html", page.to_str().unwrap()]);
    assert_eq!(report.status.code(), Some(0), "{}", stderr(&report));
    let page = std::fs::read_to_string(page).unwrap();
    assert_eq!(page.matches("<script type=\"application/json\" id=\"messages\">").count(), 1, "one messages table for the page");
    assert!(page.contains("\"masked\""), "the masked message travels marked");
}
