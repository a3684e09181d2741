//! A small column-by-column builder for Arrow record batches, so each
//! report table reads as a list of `name ← value` lines.

use std::sync::Arc;

use arrow_array::builder::{ListBuilder, StringBuilder};
use arrow_array::{ArrayRef, BooleanArray, Float64Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{ArrowError, Field, Schema};

/// Columns being assembled for one table.
#[derive(Default)]
pub struct TableBuilder {
    fields: Vec<Field>,
    columns: Vec<ArrayRef>,
}

impl TableBuilder {
    fn push(&mut self, name: &str, nullable: bool, column: ArrayRef) {
        self.fields.push(Field::new(name, column.data_type().clone(), nullable));
        self.columns.push(column);
    }

    /// A non-null text column.
    pub fn text<'a>(&mut self, name: &str, values: impl Iterator<Item = &'a str>) -> &mut Self {
        self.push(name, false, Arc::new(StringArray::from_iter_values(values)));
        self
    }

    /// A nullable text column.
    pub fn text_opt<'a>(&mut self, name: &str, values: impl Iterator<Item = Option<&'a str>>) -> &mut Self {
        self.push(name, true, Arc::new(values.collect::<StringArray>()));
        self
    }

    /// A non-null integer column (Int64: the type every engine reads natively).
    pub fn int(&mut self, name: &str, values: impl Iterator<Item = u64>) -> &mut Self {
        let values = values.map(|v| i64::try_from(v).unwrap_or(i64::MAX));
        self.push(name, false, Arc::new(Int64Array::from_iter_values(values)));
        self
    }

    /// A non-null signed integer column.
    pub fn signed(&mut self, name: &str, values: impl Iterator<Item = i64>) -> &mut Self {
        self.push(name, false, Arc::new(Int64Array::from_iter_values(values)));
        self
    }

    /// A nullable integer column.
    pub fn signed_opt(&mut self, name: &str, values: impl Iterator<Item = Option<i64>>) -> &mut Self {
        self.push(name, true, Arc::new(values.collect::<Int64Array>()));
        self
    }

    /// A nullable unsigned integer column (stored as Int64).
    pub fn int_opt(&mut self, name: &str, values: impl Iterator<Item = Option<u64>>) -> &mut Self {
        let values = values.map(|v| v.map(|v| i64::try_from(v).unwrap_or(i64::MAX)));
        self.push(name, true, Arc::new(values.collect::<Int64Array>()));
        self
    }

    /// A non-null float column.
    pub fn float(&mut self, name: &str, values: impl Iterator<Item = f64>) -> &mut Self {
        self.push(name, false, Arc::new(Float64Array::from_iter_values(values)));
        self
    }

    /// A nullable float column.
    pub fn float_opt(&mut self, name: &str, values: impl Iterator<Item = Option<f64>>) -> &mut Self {
        self.push(name, true, Arc::new(values.collect::<Float64Array>()));
        self
    }

    /// A non-null boolean column.
    pub fn boolean(&mut self, name: &str, values: impl Iterator<Item = bool>) -> &mut Self {
        self.push(name, false, Arc::new(values.map(Some).collect::<BooleanArray>()));
        self
    }

    /// A non-null list-of-text column.
    pub fn text_list<'a, I>(&mut self, name: &str, rows: impl Iterator<Item = I>) -> &mut Self
    where
        I: IntoIterator<Item = &'a str>,
    {
        let mut builder = ListBuilder::new(StringBuilder::new());
        for row in rows {
            for value in row {
                builder.values().append_value(value);
            }
            builder.append(true);
        }
        self.push(name, false, Arc::new(builder.finish()));
        self
    }

    /// The finished batch, with `metadata` on its schema.
    pub fn finish(self, metadata: std::collections::HashMap<String, String>) -> Result<RecordBatch, ArrowError> {
        let schema = Schema::new(self.fields).with_metadata(metadata);
        RecordBatch::try_new(Arc::new(schema), self.columns)
    }
}
