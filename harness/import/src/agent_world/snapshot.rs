//! The first workspace snapshot of a session: the files it read in full
//! before any edit of them, pieced together from whole reads (`cat FILE`,
//! a read tool without a range) and line ranges (`sed -n 'A,Bp' FILE`, a
//! read tool's offset and limit) that cover the file to its end; a range
//! that comes back short tells where the file ends. A file edited before it
//! was read in full is a gap: the replay's agent edits a file it cannot
//! find, or one with other text.

use std::collections::BTreeMap;

/// What the session told of each file, by path relative to the workspace root.
#[derive(Debug, Default)]
pub struct Snapshot {
    files: BTreeMap<String, FileText>,
}

#[derive(Debug, Default)]
struct FileText {
    /// Lines known, each with its line end (the last may lack one).
    lines: Vec<Option<String>>,
    /// The file has at most this many lines (a range came back short).
    at_most: Option<usize>,
    /// Two reads disagreed (a command changed the file between them).
    conflict: bool,
    /// The first edit, once edited: its source line, and whether the file
    /// was known in full then. Reads after it are not the first snapshot.
    edited: Option<(usize, bool)>,
    /// The source line of the first read.
    first_read: usize,
}

impl FileText {
    fn known(&self) -> Option<String> {
        let end = self.at_most?;
        if self.conflict || self.lines.len() < end {
            return None;
        }
        self.lines[..end].iter().map(Option::as_deref).collect::<Option<Vec<&str>>>().map(|lines| lines.concat())
    }

    fn set(&mut self, index: usize, line: &str) {
        if self.lines.len() <= index {
            self.lines.resize(index + 1, None);
        }
        match &self.lines[index] {
            Some(known) if known != line => self.conflict = true,
            _ => self.lines[index] = Some(line.to_owned()),
        }
    }
}

impl Snapshot {
    /// The whole text of `path`, read at source line `line`.
    pub fn read_whole(&mut self, path: &str, text: &str, line: usize) {
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        self.read_lines(path, 1, lines.len() + 1, text, line);
    }

    /// Lines `first` to `last` of `path` (1-based, inclusive) asked for and
    /// `text` got back, at source line `line`: fewer lines than asked means
    /// the file ends there.
    pub fn read_lines(&mut self, path: &str, first: usize, last: usize, text: &str, line: usize) {
        let file = self.files.entry(path.to_owned()).or_insert_with(|| FileText { first_read: line, ..FileText::default() });
        if file.edited.is_some() {
            return;
        }
        let got: Vec<&str> = text.split_inclusive('\n').collect();
        for (offset, text) in got.iter().enumerate() {
            file.set(first - 1 + offset, text);
        }
        if got.len() < last + 1 - first {
            let end = first - 1 + got.len();
            file.at_most = Some(file.at_most.map_or(end, |known| known.min(end)));
        }
    }

    /// `path` edited in place at source line `line` (not created: a file
    /// the edit makes needs no text before it).
    pub fn edit(&mut self, path: &str, line: usize) {
        let file = self.files.entry(path.to_owned()).or_insert_with(|| FileText { first_read: line, ..FileText::default() });
        if file.edited.is_none() {
            let known = file.known().is_some();
            file.edited = Some((line, known));
        }
    }

    /// `path` created at source line `line`: reads after it are not of the first snapshot.
    pub fn create(&mut self, path: &str, line: usize) {
        let file = self.files.entry(path.to_owned()).or_default();
        file.edited.get_or_insert((line, true));
    }

    /// The files known in full, and the gaps: files edited but not read in
    /// full before, files read only in part or read with two texts.
    pub fn finish(self) -> (BTreeMap<String, String>, Vec<String>) {
        let mut files = BTreeMap::new();
        let mut gaps = Vec::new();
        for (path, file) in self.files {
            match (file.known(), file.edited) {
                (Some(text), _) => {
                    files.insert(path, text);
                }
                (None, Some((line, false))) => {
                    gaps.push(format!("{path}: edited at line {line} but never read in full before: not in the snapshot, so the replay's edit of it fails"));
                }
                (None, Some((_, true))) => {}
                (None, None) if file.conflict => {
                    gaps.push(format!("{path}: read twice with different text (from line {}): a command changed it; not in the snapshot", file.first_read))
                }
                (None, None) => gaps.push(format!("{path}: read only in part (from line {}): not in the snapshot", file.first_read)),
            }
        }
        (files, gaps)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_that_reach_a_short_one_make_the_whole_file() {
        let mut snapshot = Snapshot::default();
        snapshot.read_lines("a.ts", 1, 2, "one\ntwo\n", 3);
        snapshot.read_lines("a.ts", 2, 4, "two\nthree", 5);
        snapshot.read_lines("b.ts", 1, 2, "one\ntwo\n", 7);
        let (files, gaps) = snapshot.finish();
        assert_eq!(files.get("a.ts").map(String::as_str), Some("one\ntwo\nthree"));
        assert!(!files.contains_key("b.ts"), "b.ts may go on past line 2");
        assert_eq!(gaps, ["b.ts: read only in part (from line 7): not in the snapshot"]);
    }

    #[test]
    fn a_read_after_an_edit_is_not_the_first_snapshot_and_an_edit_before_a_full_read_is_a_gap() {
        let mut snapshot = Snapshot::default();
        snapshot.read_whole("kept.rs", "fn a() {}\n", 2);
        snapshot.edit("kept.rs", 4);
        snapshot.read_whole("kept.rs", "fn b() {}\n", 6);
        snapshot.edit("blind.rs", 8);
        snapshot.read_whole("blind.rs", "after\n", 9);
        snapshot.create("new.rs", 10);
        snapshot.read_whole("new.rs", "made\n", 11);
        let (files, gaps) = snapshot.finish();
        assert_eq!(files, BTreeMap::from([("kept.rs".to_owned(), "fn a() {}\n".to_owned())]));
        assert_eq!(gaps, ["blind.rs: edited at line 8 but never read in full before: not in the snapshot, so the replay's edit of it fails"]);
    }

    #[test]
    fn two_texts_of_one_line_are_a_conflict_and_an_empty_file_is_known() {
        let mut snapshot = Snapshot::default();
        snapshot.read_lines("a", 1, 5, "x\n", 1);
        snapshot.read_lines("a", 1, 5, "y\n", 2);
        snapshot.read_whole("empty", "", 3);
        let (files, gaps) = snapshot.finish();
        assert_eq!(files.get("empty").map(String::as_str), Some(""));
        assert!(!files.contains_key("a") && gaps[0].starts_with("a: read twice with different text"), "{gaps:?}");
    }
}
