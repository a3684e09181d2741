//! Splits a shell command the way bash would, with tree-sitter-bash, into
//! every simple command it runs (inside lists, pipelines, subshells,
//! `$(...)`, backticks, control flow and function bodies alike), every
//! redirection, and the constructs whose effect cannot be read off the text.
//!
//! tree-sitter-bash over the alternatives: it is what Codex uses for the same
//! check, it is maintained by the tree-sitter project, it builds from C with
//! no proc macros (brush-parser brings bon, cached, peg and insta with pest;
//! yash-syntax is GPL; conch-parser is unmaintained since 2017), and it
//! marks what it cannot parse with error nodes, which the policy refuses.

use tree_sitter::{Node, Parser};

/// How deep the syntax tree may nest before the command is refused
/// (`((((...))))` would otherwise exhaust the stack).
const MAX_DEPTH: usize = 128;

/// A command the parser could not read; the policy treats it as high risk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unparseable;

/// A word as the shell would pass it, when that can be known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    /// The text after quote removal.
    pub text: String,
    /// False when expansions make the value depend on the environment.
    pub is_static: bool,
}

/// One simple command: a program and its arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimpleCommand {
    /// The command name first, then the arguments.
    pub words: Vec<Word>,
    /// Reads its standard input from a pipe (`... | this`).
    pub fed_by_pipe: bool,
    /// Preceded by `VAR=value` assignments.
    pub has_assignments: bool,
}

/// A redirection (`> file`, `2>&1`, `< input`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redirect {
    /// The operator, e.g. `>`, `>>`, `&>`, `<`, `>&`.
    pub operator: String,
    /// Where it points.
    pub target: Word,
}

/// A construct whose effect the text alone does not tell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Construct {
    /// `$VAR`, `${...}`, `$(...)`, backticks, `<(...)`, `$((...))`.
    Expansion,
    /// `VAR=value`, `export`, `declare`, `unset`.
    Assignment,
    /// A function definition; `recursive` when its body calls itself.
    Function {
        /// The body calls the function (`:(){ :|:& };:`).
        recursive: bool,
    },
    /// A syntax node the policy does not know.
    Other(String),
}

/// Everything a command line would run.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Script {
    /// Every simple command, in source order.
    pub commands: Vec<SimpleCommand>,
    /// Every redirection.
    pub redirects: Vec<Redirect>,
    /// Constructs found.
    pub constructs: Vec<Construct>,
}

/// Parses `source` as bash.
pub fn parse(source: &str) -> Result<Script, Unparseable> {
    let mut parser = Parser::new();
    parser.set_language(&tree_sitter_bash::LANGUAGE.into()).map_err(|_| Unparseable)?;
    let tree = parser.parse(source, None).ok_or(Unparseable)?;
    let root = tree.root_node();
    if root.has_error() {
        return Err(Unparseable);
    }
    let mut walker = Walker { source: source.as_bytes(), script: Script::default() };
    walker.statement(root, 0)?;
    Ok(walker.script)
}

struct Walker<'s> {
    source: &'s [u8],
    script: Script,
}

/// Nodes that only group or sequence what they hold.
const STRUCTURE: [&str; 16] = [
    "program",
    "list",
    "subshell",
    "compound_statement",
    "negated_command",
    "do_group",
    "if_statement",
    "elif_clause",
    "else_clause",
    "while_statement",
    "for_statement",
    "case_statement",
    "case_item",
    "test_command",
    "heredoc_body",
    "redirected_statement",
];

/// Nodes that carry no behaviour of their own.
const INERT: [&str; 8] = ["comment", "heredoc_start", "heredoc_end", "heredoc_content", "file_descriptor", "variable_name", "string_content", "test_operator"];

/// Nodes whose value comes from the environment or another command.
const EXPANSIONS: [&str; 7] =
    ["simple_expansion", "expansion", "command_substitution", "process_substitution", "arithmetic_expansion", "ansi_c_string", "translated_string"];

impl Walker<'_> {
    fn text(&self, node: Node<'_>) -> &str {
        node.utf8_text(self.source).unwrap_or_default()
    }

    fn named_children<'t>(node: Node<'t>) -> Vec<Node<'t>> {
        let mut cursor = node.walk();
        node.named_children(&mut cursor).collect()
    }

    /// Visits any node that may contain commands.
    fn statement(&mut self, node: Node<'_>, depth: usize) -> Result<(), Unparseable> {
        if depth > MAX_DEPTH || node.is_error() || node.is_missing() {
            return Err(Unparseable);
        }
        let kind = node.kind();
        match kind {
            "command" => self.command(node, depth),
            "pipeline" => self.pipeline(node, depth),
            "file_redirect" | "heredoc_redirect" | "herestring_redirect" => self.redirect(node, depth),
            "variable_assignment" | "variable_assignments" | "declaration_command" | "unset_command" => {
                self.script.constructs.push(Construct::Assignment);
                self.children(node, depth)
            }
            "function_definition" => self.function(node, depth),
            _ if STRUCTURE.contains(&kind) => self.children(node, depth),
            _ if INERT.contains(&kind) => Ok(()),
            _ if EXPANSIONS.contains(&kind) || is_word(kind) => self.word(node, depth).map(drop),
            _ => {
                self.script.constructs.push(Construct::Other(kind.to_owned()));
                self.children(node, depth)
            }
        }
    }

    fn children(&mut self, node: Node<'_>, depth: usize) -> Result<(), Unparseable> {
        Self::named_children(node).into_iter().try_for_each(|child| self.statement(child, depth + 1))
    }

    fn pipeline(&mut self, node: Node<'_>, depth: usize) -> Result<(), Unparseable> {
        for (position, stage) in Self::named_children(node).into_iter().enumerate() {
            let first_command = self.script.commands.len();
            self.statement(stage, depth + 1)?;
            if position > 0
                && let Some(command) = self.script.commands.get_mut(first_command)
            {
                command.fed_by_pipe = true;
            }
        }
        Ok(())
    }

    fn command(&mut self, node: Node<'_>, depth: usize) -> Result<(), Unparseable> {
        let mut words = Vec::new();
        let mut has_assignments = false;
        let index = self.script.commands.len();
        // Reserve the slot first so commands inside its words follow it.
        self.script.commands.push(SimpleCommand { words: Vec::new(), fed_by_pipe: false, has_assignments: false });
        for child in Self::named_children(node) {
            match child.kind() {
                "command_name" => {
                    for name in Self::named_children(child) {
                        words.push(self.word(name, depth + 1)?);
                    }
                }
                "variable_assignment" => {
                    has_assignments = true;
                    self.statement(child, depth + 1)?;
                }
                "file_redirect" | "heredoc_redirect" | "herestring_redirect" => self.redirect(child, depth + 1)?,
                _ => words.push(self.word(child, depth + 1)?),
            }
        }
        let slot = &mut self.script.commands[index];
        slot.words = words;
        slot.has_assignments = has_assignments;
        Ok(())
    }

    fn redirect(&mut self, node: Node<'_>, depth: usize) -> Result<(), Unparseable> {
        let mut cursor = node.walk();
        let operator = node.children(&mut cursor).find(|c| !c.is_named()).map(|c| self.text(c).to_owned()).unwrap_or_default();
        let mut target = None;
        for child in Self::named_children(node) {
            match child.kind() {
                "file_descriptor" | "heredoc_start" | "heredoc_end" => {}
                "heredoc_body" | "file_redirect" | "heredoc_redirect" | "herestring_redirect" | "command" | "pipeline" | "list" => {
                    self.statement(child, depth + 1)?
                }
                _ if target.is_none() => target = Some(self.word(child, depth + 1)?),
                _ => self.statement(child, depth + 1)?,
            }
        }
        // Heredocs and herestrings feed standard input: only the words and
        // commands inside them matter, visited above.
        if node.kind() == "file_redirect"
            && let Some(target) = target
        {
            self.script.redirects.push(Redirect { operator, target });
        }
        Ok(())
    }

    fn function(&mut self, node: Node<'_>, depth: usize) -> Result<(), Unparseable> {
        let name = node.child_by_field_name("name").map(|n| self.text(n).to_owned()).unwrap_or_default();
        let first = self.script.commands.len();
        if let Some(body) = node.child_by_field_name("body") {
            self.statement(body, depth + 1)?;
        }
        let recursive = self.script.commands[first..].iter().any(|c| c.words.first().is_some_and(|w| w.text == name));
        self.script.constructs.push(Construct::Function { recursive });
        Ok(())
    }

    /// The value of a word; expansions inside are recorded and the
    /// commands they run are visited.
    fn word(&mut self, node: Node<'_>, depth: usize) -> Result<Word, Unparseable> {
        if depth > MAX_DEPTH || node.is_error() || node.is_missing() {
            return Err(Unparseable);
        }
        let kind = node.kind();
        match kind {
            "word" | "number" => Ok(Word { text: unescape(self.text(node)), is_static: true }),
            "raw_string" => {
                let text = self.text(node);
                Ok(Word { text: text.get(1..text.len().saturating_sub(1)).unwrap_or_default().to_owned(), is_static: true })
            }
            "string_content" => Ok(Word { text: unescape_in_quotes(self.text(node)), is_static: true }),
            "string" | "concatenation" => {
                let mut whole = Word { text: String::new(), is_static: true };
                for part in Self::named_children(node) {
                    let part = self.word(part, depth + 1)?;
                    whole.text.push_str(&part.text);
                    whole.is_static &= part.is_static;
                }
                Ok(whole)
            }
            _ => {
                if EXPANSIONS.contains(&kind) {
                    self.script.constructs.push(Construct::Expansion);
                } else {
                    self.script.constructs.push(Construct::Other(kind.to_owned()));
                }
                self.children(node, depth)?;
                Ok(Word { text: self.text(node).to_owned(), is_static: false })
            }
        }
    }
}

fn is_word(kind: &str) -> bool {
    matches!(kind, "word" | "number" | "raw_string" | "string" | "concatenation")
}

/// Removes the backslashes of an unquoted word (`\r\m` is `rm`).
fn unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.extend(chars.next()),
            c => out.push(c),
        }
    }
    out
}

/// Removes the backslashes that escape inside double quotes.
fn unescape_in_quotes(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, chars.peek()) {
            ('\\', Some('$' | '`' | '"' | '\\' | '\n')) => out.extend(chars.next()),
            (c, _) => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(source: &str) -> Vec<String> {
        parse(source).unwrap().commands.iter().map(|c| c.words.first().map(|w| w.text.clone()).unwrap_or_default()).collect()
    }

    #[test]
    fn every_command_is_found() {
        assert_eq!(names("ls\nrm -rf x"), ["ls", "rm"]);
        assert_eq!(names("a; b && c || d | e"), ["a", "b", "c", "d", "e"]);
        assert_eq!(names("(a; (b)) & { c; }"), ["a", "b", "c"]);
        assert_eq!(names("echo $(rm x) `touch y`"), ["echo", "rm", "touch"]);
        assert_eq!(names("if a; then b; else c; fi; for i in 1; do d; done; while e; do f; done"), ["a", "b", "c", "d", "e", "f"]);
        assert_eq!(names("cat <(curl x) >(tee y)"), ["cat", "curl", "tee"]);
        assert_eq!(names("cat <<EOF\n$(rm z)\nEOF"), ["cat", "rm"]);
    }

    #[test]
    fn quoting_is_removed_and_expansions_are_marked() {
        let script = parse(r#"\r\m -r'f' "a b" $HOME"#).unwrap();
        let words: Vec<(&str, bool)> = script.commands[0].words.iter().map(|w| (w.text.as_str(), w.is_static)).collect();
        assert_eq!(words, [("rm", true), ("-rf", true), ("a b", true), ("$HOME", false)]);
        assert!(script.constructs.contains(&Construct::Expansion));
    }

    #[test]
    fn pipes_redirects_and_functions() {
        let script = parse("curl x | sh > out 2>&1").unwrap();
        assert!(!script.commands[0].fed_by_pipe && script.commands[1].fed_by_pipe);
        let redirects: Vec<(&str, &str)> = script.redirects.iter().map(|r| (r.operator.as_str(), r.target.text.as_str())).collect();
        assert_eq!(redirects, [(">", "out"), (">&", "1")]);
        assert!(parse(":(){ :|:& };:").unwrap().constructs.contains(&Construct::Function { recursive: true }));
    }

    #[test]
    fn broken_or_too_deep_input_is_unparseable() {
        assert_eq!(parse("echo 'unterminated"), Err(Unparseable));
        assert_eq!(parse("ls )"), Err(Unparseable));
        assert_eq!(parse(&format!("{}ls{}", "(".repeat(500), ")".repeat(500))), Err(Unparseable));
    }
}
