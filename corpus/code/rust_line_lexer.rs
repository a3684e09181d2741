use std::iter::Peekable;
use std::str::CharIndices;

#[derive(Debug, Clone, PartialEq)]
pub enum Token<'a> {
    Ident(&'a str),
    Int(i64),
    Float(f64),
    Str(String),
    Op(&'static str),
    LParen,
    RParen,
    Comma,
    Newline,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LexError {
    pub line: usize,
    pub column: usize,
    pub message: String,
}

pub struct Lexer<'a> {
    src: &'a str,
    chars: Peekable<CharIndices<'a>>,
    line: usize,
    line_start: usize,
}

const OPERATORS: &[&str] = &["==", "!=", "<=", ">=", "&&", "||", "+", "-", "*", "/", "%", "<", ">", "=", "!"];

impl<'a> Lexer<'a> {
    pub fn new(src: &'a str) -> Self {
        Self { src, chars: src.char_indices().peekable(), line: 1, line_start: 0 }
    }

    pub fn tokenize(mut self) -> Result<Vec<Token<'a>>, LexError> {
        let mut tokens = Vec::new();
        while let Some(token) = self.next_token()? {
            tokens.push(token);
        }
        Ok(tokens)
    }

    fn error(&self, at: usize, message: impl Into<String>) -> LexError {
        LexError { line: self.line, column: at - self.line_start + 1, message: message.into() }
    }

    fn next_token(&mut self) -> Result<Option<Token<'a>>, LexError> {
        loop {
            let Some(&(at, c)) = self.chars.peek() else { return Ok(None) };
            match c {
                ' ' | '\t' | '\r' => {
                    self.chars.next();
                }
                '#' => {
                    while self.chars.next_if(|&(_, c)| c != '\n').is_some() {}
                }
                '\n' => {
                    self.chars.next();
                    self.line += 1;
                    self.line_start = at + 1;
                    return Ok(Some(Token::Newline));
                }
                '(' => {
                    self.chars.next();
                    return Ok(Some(Token::LParen));
                }
                ')' => {
                    self.chars.next();
                    return Ok(Some(Token::RParen));
                }
                ',' => {
                    self.chars.next();
                    return Ok(Some(Token::Comma));
                }
                '"' => return self.string(at).map(Some),
                c if c.is_ascii_digit() => return self.number(at).map(Some),
                c if c.is_alphabetic() || c == '_' => return Ok(Some(self.ident(at))),
                _ => return self.operator(at).map(Some),
            }
        }
    }

    fn ident(&mut self, start: usize) -> Token<'a> {
        let mut end = start;
        while let Some((i, c)) = self.chars.next_if(|&(_, c)| c.is_alphanumeric() || c == '_') {
            end = i + c.len_utf8();
        }
        Token::Ident(&self.src[start..end])
    }

    fn number(&mut self, start: usize) -> Result<Token<'a>, LexError> {
        let mut end = start;
        let mut is_float = false;
        while let Some((i, c)) = self.chars.next_if(|&(_, c)| c.is_ascii_digit() || c == '.' || c == '_') {
            if c == '.' {
                if is_float {
                    return Err(self.error(i, "a number has at most one decimal point"));
                }
                is_float = true;
            }
            end = i + 1;
        }
        let text: String = self.src[start..end].chars().filter(|&c| c != '_').collect();
        if is_float {
            text.parse().map(Token::Float).map_err(|e| self.error(start, format!("bad float {text}: {e}")))
        } else {
            text.parse().map(Token::Int).map_err(|e| self.error(start, format!("bad integer {text}: {e}")))
        }
    }

    fn string(&mut self, start: usize) -> Result<Token<'a>, LexError> {
        self.chars.next();
        let mut value = String::new();
        loop {
            match self.chars.next() {
                None | Some((_, '\n')) => return Err(self.error(start, "unterminated string")),
                Some((_, '"')) => return Ok(Token::Str(value)),
                Some((at, '\\')) => match self.chars.next() {
                    Some((_, 'n')) => value.push('\n'),
                    Some((_, 't')) => value.push('\t'),
                    Some((_, '"')) => value.push('"'),
                    Some((_, '\\')) => value.push('\\'),
                    Some((_, other)) => return Err(self.error(at, format!("unknown escape \\{other}"))),
                    None => return Err(self.error(at, "escape at end of input")),
                },
                Some((_, c)) => value.push(c),
            }
        }
    }

    fn operator(&mut self, at: usize) -> Result<Token<'a>, LexError> {
        let rest = &self.src[at..];
        let op = OPERATORS
            .iter()
            .find(|op| rest.starts_with(**op))
            .ok_or_else(|| self.error(at, format!("unexpected character {:?}", rest.chars().next().unwrap_or(' '))))?;
        for _ in 0..op.len() {
            self.chars.next();
        }
        Ok(Token::Op(op))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lexes_a_call_with_mixed_arguments() {
        let tokens = Lexer::new("print(\"a\\tb\", 1_000, 2.5) # done\n").tokenize().unwrap();
        assert_eq!(
            tokens,
            vec![
                Token::Ident("print"),
                Token::LParen,
                Token::Str("a\tb".into()),
                Token::Comma,
                Token::Int(1000),
                Token::Comma,
                Token::Float(2.5),
                Token::RParen,
                Token::Newline,
            ]
        );
    }

    #[test]
    fn two_character_operators_win_over_one() {
        let tokens = Lexer::new("a <= b != c").tokenize().unwrap();
        assert_eq!(tokens[1], Token::Op("<="));
        assert_eq!(tokens[3], Token::Op("!="));
    }

    #[test]
    fn errors_carry_line_and_column() {
        let error = Lexer::new("x = 1\ny = \"open\n").tokenize().unwrap_err();
        assert_eq!((error.line, error.column), (2, 5));
        assert_eq!(error.message, "unterminated string");
    }
}
