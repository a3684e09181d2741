//! Every simulated cache break explained on bundled scenarios: the bytes
//! that moved, the kind of change and what in the loop made it.

use reloop_agent::context::StrategyName;
use reloop_eval::{RunReport, Scenario, StepRow, run_scenario};

fn breaks(report: &RunReport) -> Vec<&StepRow> {
    report.steps.iter().filter(|s| s.cache_break_simulated).collect()
}

#[test]
fn a_timestamp_in_the_system_prompt_is_named_with_its_span() {
    let report = run_scenario(&Scenario::load(&crate::bundled("system-prompt-drift")).unwrap());
    let [step] = breaks(&report)[..] else { panic!("one break: {:?}", breaks(&report)) };
    let explained = step.cache_break_explained.as_ref().unwrap();
    assert_eq!((step.step, explained.site.cause, explained.site.role, explained.site.block.as_str()), (2, "system", "system", "system"));
    assert_eq!(explained.site.span.as_deref(), Some("\"10:42\" → \"10:43\""));
    let offset = explained.site.byte_offset.unwrap() as usize;
    let system = &Scenario::load(&crate::bundled("system-prompt-drift")).unwrap().spec.system;
    assert_eq!(&system[offset - 4..offset + 1], "10:42", "the offset is the first differing byte of the system prompt");
    assert!(explained.site.lost_tokens > 1_024 && explained.lost_usd.unwrap() > 0.0, "{explained:?}");
    assert_eq!(report.metrics.cache_breaks_by_cause.breaks[1], 1, "counted under system");
    let event = report.events.iter().find(|e| e.kind == "cache_break_simulated").unwrap();
    assert_eq!(event.step, 2);
    assert!(event.payload.contains("\"cause\":\"system\"") && event.payload.contains("10:43"), "{}", event.payload);
}

#[test]
fn a_masking_break_names_the_masked_message_and_its_step() {
    let mut scenario = Scenario::load(&crate::bundled("long-session-microcompaction")).unwrap();
    scenario.loop_settings.strategy = StrategyName::Masking.into();
    let report = run_scenario(&scenario);
    let found = breaks(&report);
    assert!(!found.is_empty());
    for step in found {
        let explained = step.cache_break_explained.as_ref().unwrap();
        assert_eq!((explained.site.cause, explained.site.role, explained.site.block.as_str()), ("edited", "tool_result", "content"), "{explained:?}");
        let by = explained.by.as_deref().unwrap();
        let prefix = format!("masking layer 0 at step {}: masked message ", step.step);
        assert!(by.starts_with(&prefix) && by.contains("(tool_result of "), "{by}");
        let first_sent: u64 = by.rsplit("first sent at step ").next().unwrap().trim_end_matches(')').parse().unwrap();
        assert!(first_sent < step.step, "{by}");
        let masked: usize = by[prefix.len()..].split(' ').next().unwrap().parse().unwrap();
        assert!(masked > 0, "{by}");
    }
}

#[test]
fn an_expired_entry_is_a_ttl_break() {
    let report = run_scenario(&Scenario::load(&crate::bundled("anthropic-prompt-cache-ttl-5m")).unwrap());
    let last = breaks(&report).last().copied().unwrap().cache_break_explained.clone().unwrap();
    assert_eq!((last.site.cause, last.site.role), ("ttl", ""));
}
