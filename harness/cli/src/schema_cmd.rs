//! `reloop schema scenario|recording|gates|strategy`: the JSON Schema of a
//! file format (or of the plug-in protocol's lines), generated from the serde
//! types its loader reads, so editors and
//! other validators check what `reloop validate` checks (ranges and
//! references aside). Draft 7, the version editors' YAML support knows best.

use reloop_agent::context::plugin::protocol::ProtocolLine;
use reloop_eval::scenario::ScenarioSpec;
use reloop_recording::Recording;
use reloop_report::gates::GateSet;
use schemars::JsonSchema;
use schemars::generate::SchemaSettings;

use crate::app::{SchemaArgs, SchemaFormat};
use crate::exit_code;

/// Runs the command: the schema, pretty-printed, on stdout.
pub fn run(args: &SchemaArgs) -> anyhow::Result<i32> {
    let (mut schema, title, description) = match args.format {
        SchemaFormat::Scenario => (schema_of::<ScenarioSpec>(), "reloop scenario", "One task for the agent loop (docs/scenario-format.md)."),
        SchemaFormat::Recording => (schema_of::<Recording>(), "reloop recording", "The model's side of each exchange (docs/recording-format.md)."),
        SchemaFormat::Gates => (schema_of::<GateSet>(), "reloop gates", "CI gates of `reloop compare`: a runs.parquet column → its rule."),
        SchemaFormat::Strategy => (
            schema_of::<ProtocolLine<'_>>(),
            "reloop strategy protocol",
            "One JSON line between reloop and a plug-in strategy, either way (docs/strategies.md).",
        ),
    };
    schema.insert("title".to_owned(), title.into());
    schema.insert("description".to_owned(), description.into());
    println!("{:#}", schema.as_value());
    Ok(exit_code::SUCCESS)
}

fn schema_of<T: JsonSchema>() -> schemars::Schema {
    SchemaSettings::draft07().into_generator().into_root_schema_for::<T>()
}
