//! The reads a shell command line is, when it is one: `cat FILE` or
//! `sed -n 'A,Bp' FILE`, the two ways agents read a file through their
//! shell, whose output is then the file's text (all of it, or lines A to B).
//! Anything else (a pipe, a redirect, an expansion, several files) is not
//! taken for a read: its output is not one file's text.

/// A file read by a command: its path as written, and the lines asked for
/// (1-based, inclusive; `None`: the whole file).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Read {
    /// The path as the command names it (relative to its folder, or absolute).
    pub path: String,
    /// `sed -n 'A,Bp'`: lines A to B.
    pub lines: Option<(usize, usize)>,
}

/// The read `command` is, if it is one.
pub fn read_of(command: &str) -> Option<Read> {
    let words = words(command.trim())?;
    match words.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["cat", path] if !path.starts_with('-') => Some(Read { path: path.to_owned(), lines: None }),
        ["sed", "-n", range, path] if !path.starts_with('-') => {
            let (first, last) = range.strip_suffix('p')?.split_once(',')?;
            let (first, last) = (first.parse::<usize>().ok()?, last.parse::<usize>().ok()?);
            (first >= 1 && last >= first).then(|| Read { path: path.to_owned(), lines: Some((first, last)) })
        }
        _ => None,
    }
}

/// The words of a simple command: blanks split, quotes and backslashes as
/// POSIX `sh` reads them; `None` for anything the shell would do more with
/// (operators, redirects, expansions, globs, comments).
pub fn words(command: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = command.chars();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' => words.extend(word.take()),
            '\'' => {
                let text = word.get_or_insert_with(String::new);
                loop {
                    match chars.next()? {
                        '\'' => break,
                        other => text.push(other),
                    }
                }
            }
            '"' => {
                let text = word.get_or_insert_with(String::new);
                loop {
                    match chars.next()? {
                        '"' => break,
                        '$' | '`' => return None,
                        '\\' => match chars.next()? {
                            escaped @ ('"' | '\\' | '$' | '`') => text.push(escaped),
                            '\n' => {}
                            other => {
                                text.push('\\');
                                text.push(other);
                            }
                        },
                        other => text.push(other),
                    }
                }
            }
            '\\' => match chars.next()? {
                '\n' => {}
                escaped => word.get_or_insert_with(String::new).push(escaped),
            },
            '|' | '&' | ';' | '<' | '>' | '(' | ')' | '$' | '`' | '*' | '?' | '[' | '~' | '#' | '{' | '\n' => return None,
            other => word.get_or_insert_with(String::new).push(other),
        }
    }
    words.extend(word);
    Some(words)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cat_and_sed_ranges_are_reads_with_their_quoting_undone() {
        assert_eq!(read_of("cat package.json"), Some(Read { path: "package.json".into(), lines: None }));
        assert_eq!(
            read_of("sed -n '1,200p' packages/services/src/types.ts"),
            Some(Read { path: "packages/services/src/types.ts".into(), lines: Some((1, 200)) })
        );
        assert_eq!(
            read_of(r"sed -n '40,180p' /Users/U/Downloads/Sample\ BiS\ Demo.vtt"),
            Some(Read { path: "/Users/U/Downloads/Sample BiS Demo.vtt".into(), lines: Some((40, 180)) })
        );
        assert_eq!(read_of(r#"cat "my file.txt""#).map(|r| r.path).as_deref(), Some("my file.txt"));
    }

    #[test]
    fn anything_the_shell_does_more_with_is_not_a_read() {
        for command in [
            "cat a | head",
            "cat a b",
            "cat -n a",
            "cat $HOME/a",
            "cat *.rs",
            "sed -n '1,20p' a && sed -n '1,5p' b",
            "sed -i 's/a/b/' a",
            "sed -n '20,1p' a",
            "cat ~/a",
            "cat 'unclosed",
            "cat \"$(pwd)/a\"",
            "ls",
        ] {
            assert_eq!(read_of(command), None, "{command}");
        }
    }
}
