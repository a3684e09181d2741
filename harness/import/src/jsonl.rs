//! Reading JSON Lines as real logs hold them: blank lines, lines that are
//! not JSON, and several objects glued on one line (a crash between two
//! writes). Every physical line lands in exactly one bucket of the
//! [`LineAccount`].

use crate::session::LineAccount;

/// One JSON value and the line it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    /// 1-based line.
    pub line: usize,
    /// The value.
    pub value: serde_json::Value,
    /// Already accounted for (a split line is counted once, as joined).
    pub accounted: bool,
}

/// The records of `text`, accounting for the lines that give none.
///
/// Rules: a blank line is ignored (`blank`); a line that is not JSON is
/// skipped with the parser's message; a line holding several complete JSON
/// values is split into one record each and counted once as joined.
pub fn records(text: &str, account: &mut LineAccount) -> Vec<Record> {
    let mut out = Vec::new();
    for (index, raw) in text.lines().enumerate() {
        let line = index + 1;
        account.read += 1;
        if raw.trim().is_empty() {
            account.ignore("blank");
            continue;
        }
        let values: Result<Vec<serde_json::Value>, _> = serde_json::Deserializer::from_str(raw).into_iter().collect();
        match values {
            Ok(values) if values.len() == 1 => {
                out.extend(values.into_iter().map(|value| Record { line, value, accounted: false }));
            }
            Ok(values) => {
                account.join(line, format!("{} JSON objects glued on one line: split, each used in order", values.len()));
                out.extend(values.into_iter().map(|value| Record { line, value, accounted: true }));
            }
            Err(error) => account.skip(line, format!("not JSON ({error}): skipped")),
        }
    }
    out
}

impl LineAccount {
    /// Counts `record`'s line as used, unless it was already accounted for.
    pub fn use_record(&mut self, record: &Record) {
        if !record.accounted {
            self.used += 1;
        }
    }

    /// Counts `record`'s line as ignored, unless it was already accounted for.
    pub fn ignore_record(&mut self, record: &Record, kind: &str) {
        if !record.accounted {
            self.ignore(kind);
        }
    }

    /// Counts `record`'s line as skipped, unless already accounted for
    /// (then the reason is still kept as a warning).
    pub fn skip_record(&mut self, record: &Record, reason: impl Into<String>) {
        if record.accounted {
            self.warn(record.line, reason);
        } else {
            self.skip(record.line, reason);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glued_objects_split_and_bad_lines_skipped_and_every_line_accounted() {
        let text = "{\"a\":1}\n\n{\"b\":2}{\"c\":3}\nnot json\n{\"d\":4}";
        let mut account = LineAccount::default();
        let got = records(text, &mut account);
        let lines: Vec<usize> = got.iter().map(|r| r.line).collect();
        assert_eq!(lines, [1, 3, 3, 5]);
        assert_eq!(got[2].value["c"], 3);
        for record in &got {
            account.use_record(record);
        }
        assert_eq!(account.read, 5);
        assert_eq!(account.accounted(), 5);
        assert_eq!(account.skipped[0].line, 4);
        assert_eq!(account.joined[0].line, 3);
    }
}
