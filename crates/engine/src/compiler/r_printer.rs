//! The one printer of R syntax trees (`r_syntax.rs`). Its layout is deterministic: an
//! expression goes on one line when it fits in [`LINE_WIDTH`] columns and is otherwise broken
//! one argument (or one `+` layer) per line, indented by two spaces; blocks always span lines.
//!
//! Escaping rules, which are what make user text inert:
//! - a string literal is double-quoted; `\` `"` and control characters are escaped and every
//!   non-ASCII character is written as `\u{…}` / `\U{…}`, so the script is plain ASCII and no
//!   invisible or bidirectional character can hide in it (a NUL cannot be an R string: refused);
//! - a name that is not a syntactic, non-reserved ASCII name is backquoted, with `` ` `` and `\`
//!   escaped;
//! - a comment is split at line breaks and every line gets its own `# `.

use std::fmt::Write as _;

use super::r_syntax::{BinaryOp, RArg, RExpr, RName, RParam, RScript, RStatement, UnaryOp};

/// Columns a line may use before the printer breaks an expression.
pub const LINE_WIDTH: usize = 80;
const INDENT: usize = 2;

/// Why a tree cannot be printed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PrintError {
    /// R strings cannot hold NUL.
    #[error("text {text:?} contains a NUL character, which an R string cannot hold")]
    NulInText {
        /// The offending text (NUL shown escaped).
        text: String,
    },
}

/// Prints a script: statements one per line, final newline, no trailing blanks.
pub fn print_script(script: &RScript) -> Result<String, PrintError> {
    let mut printer = Printer::default();
    for statement in &script.statements {
        printer.statement(statement, 0)?;
        printer.out.push('\n');
    }
    Ok(printer.out)
}

/// Prints one expression as the printer would inside a script at column 0.
pub fn print_expr(expr: &RExpr) -> Result<String, PrintError> {
    let mut printer = Printer::default();
    printer.expr(expr, 0)?;
    Ok(printer.out)
}

#[derive(Default)]
struct Printer {
    out: String,
}

impl Printer {
    fn column(&self) -> usize {
        let line_start = self.out.rfind('\n').map_or(0, |i| i + 1);
        self.out[line_start..].chars().count()
    }

    fn newline(&mut self, indent: usize) {
        self.out.push('\n');
        self.out.extend(std::iter::repeat_n(' ', indent));
    }

    fn statement(&mut self, statement: &RStatement, indent: usize) -> Result<(), PrintError> {
        match statement {
            RStatement::Expr(expr) => self.expr(expr, indent),
            RStatement::Assign(target, value) => {
                self.expr(target, indent)?;
                self.out.push_str(" <- ");
                self.expr(value, indent)
            }
            RStatement::Comment(text) => {
                let lines: Vec<String> = text.split(['\n', '\r']).map(comment_line).collect();
                for (i, line) in lines.iter().enumerate() {
                    if i > 0 {
                        self.newline(indent);
                    }
                    if line.is_empty() {
                        self.out.push('#');
                    } else {
                        self.out.push_str("# ");
                        self.out.push_str(line);
                    }
                }
                Ok(())
            }
            RStatement::Blank => {
                // An empty line carries no indentation.
                let trimmed = self.out.trim_end_matches(' ').len();
                self.out.truncate(trimmed);
                Ok(())
            }
        }
    }

    /// Prints `expr` at `indent`: on one line when it fits in the width, else broken.
    ///
    /// Long by design: one arm per kind of R expression that can span lines.
    fn expr(&mut self, expr: &RExpr, indent: usize) -> Result<(), PrintError> {
        if let Some(flat) = flat(expr)? {
            if self.column() + flat.chars().count() <= LINE_WIDTH {
                self.out.push_str(&flat);
                return Ok(());
            }
        }
        match expr {
            RExpr::Call(callee, args) => {
                self.callee(callee, indent)?;
                self.broken_args(args, "(", ")", indent)
            }
            RExpr::Index(target, args) => {
                self.operand(target, u8::MAX, indent)?;
                self.broken_args(args, "[", "]", indent)
            }
            RExpr::Element(target, index) => {
                self.operand(target, u8::MAX, indent)?;
                self.out.push_str("[[");
                self.expr(index, indent)?;
                self.out.push_str("]]");
                Ok(())
            }
            RExpr::Dollar(target, field) => {
                self.operand(target, u8::MAX, indent)?;
                self.out.push('$');
                self.out.push_str(&name_text(field));
                Ok(())
            }
            RExpr::Binary(op, lhs, rhs) => {
                self.operand(lhs, op.precedence(), indent)?;
                self.out.push(' ');
                self.out.push_str(op.token());
                self.newline(indent + INDENT);
                // Left-associative: an equal-precedence right operand needs parentheses.
                self.operand(rhs, op.precedence() + 1, indent + INDENT)
            }
            RExpr::Unary(op, operand) => {
                self.out.push_str(unary_token(*op));
                self.operand(operand, unary_precedence(*op), indent)
            }
            RExpr::Function(params, body) => {
                self.out.push_str("function(");
                self.out.push_str(&flat_params(params)?);
                self.out.push_str(") ");
                self.expr(body, indent)
            }
            RExpr::Block(statements) => {
                if statements.is_empty() {
                    self.out.push_str("{}");
                    return Ok(());
                }
                self.out.push('{');
                for statement in statements {
                    self.newline(indent + INDENT);
                    self.statement(statement, indent + INDENT)?;
                }
                self.newline(indent);
                self.out.push('}');
                Ok(())
            }
            RExpr::If(condition, then, otherwise) => {
                // Too wide for one line: both branches become braced blocks, so that each
                // starts on its own line and `else` follows the closing brace (on a line of
                // its own R would end the `if` there).
                self.out.push_str("if (");
                self.expr(condition, indent)?;
                self.out.push_str(") ");
                self.expr(&braced(then), indent)?;
                if let Some(otherwise) = otherwise {
                    self.out.push_str(" else ");
                    match otherwise.as_ref() {
                        chained @ RExpr::If(..) => self.expr(chained, indent)?,
                        other => self.expr(&braced(other), indent)?,
                    }
                }
                Ok(())
            }
            RExpr::For(variable, sequence, body) => {
                self.out.push_str("for (");
                self.out.push_str(&name_text(variable));
                self.out.push_str(" in ");
                self.expr(sequence, indent)?;
                self.out.push_str(") ");
                self.expr(body, indent)
            }
            // Atoms are always flat; reached only when they are wider than the line.
            atom => {
                let text = flat(atom)?.unwrap_or_default();
                self.out.push_str(&text);
                Ok(())
            }
        }
    }

    fn callee(&mut self, callee: &RExpr, indent: usize) -> Result<(), PrintError> {
        match callee {
            RExpr::Name(_) | RExpr::Namespaced(..) => self.expr(callee, indent),
            other => self.operand(other, u8::MAX, indent),
        }
    }

    /// Writes `expr`, in parentheses when it binds less tightly than `needed`.
    fn operand(&mut self, expr: &RExpr, needed: u8, indent: usize) -> Result<(), PrintError> {
        if expr_precedence(expr) < needed {
            self.out.push('(');
            self.expr(expr, indent)?;
            self.out.push(')');
            Ok(())
        } else {
            self.expr(expr, indent)
        }
    }

    fn broken_args(
        &mut self,
        args: &[RArg],
        open: &str,
        close: &str,
        indent: usize,
    ) -> Result<(), PrintError> {
        self.out.push_str(open);
        for (i, arg) in args.iter().enumerate() {
            self.newline(indent + INDENT);
            if let Some(name) = &arg.name {
                self.out.push_str(&name_text(name));
                self.out.push_str(" = ");
            }
            self.expr(&arg.value, indent + INDENT)?;
            if i + 1 < args.len() {
                self.out.push(',');
            }
        }
        self.newline(indent);
        self.out.push_str(close);
        Ok(())
    }
}

fn braced(expr: &RExpr) -> RExpr {
    match expr {
        RExpr::Block(_) => expr.clone(),
        other => RExpr::Block(vec![RStatement::Expr(other.clone())]),
    }
}

/// The one-line form of `expr`, or `None` when it must span lines (it holds a block).
///
/// Long by design: one arm per kind of R expression, so that every kind is printed in one place.
fn flat(expr: &RExpr) -> Result<Option<String>, PrintError> {
    Ok(Some(match expr {
        RExpr::Null => "NULL".to_owned(),
        RExpr::Empty => String::new(),
        RExpr::Logical(true) => "TRUE".to_owned(),
        RExpr::Logical(false) => "FALSE".to_owned(),
        RExpr::Number(value) => number_text(*value),
        RExpr::Integer(value) => format!("{value}L"),
        RExpr::MissingText => "NA_character_".to_owned(),
        RExpr::MissingReal => "NA_real_".to_owned(),
        RExpr::Missing => "NA".to_owned(),
        RExpr::Str(text) => string_literal(text)?,
        RExpr::Name(name) => name_text(name),
        RExpr::Namespaced(package, item) => format!("{}::{}", name_text(package), name_text(item)),
        RExpr::Call(callee, args) => {
            let callee = match callee.as_ref() {
                RExpr::Name(_) | RExpr::Namespaced(..) => flat(callee)?,
                other => flat(other)?.map(|text| format!("({text})")),
            };
            let (Some(callee), Some(args)) = (callee, flat_args(args)?) else {
                return Ok(None);
            };
            format!("{callee}({args})")
        }
        RExpr::Index(target, args) => {
            let (Some(target), Some(args)) = (flat_operand(target, u8::MAX)?, flat_args(args)?)
            else {
                return Ok(None);
            };
            format!("{target}[{args}]")
        }
        RExpr::Element(target, index) => {
            let (Some(target), Some(index)) = (flat_operand(target, u8::MAX)?, flat(index)?) else {
                return Ok(None);
            };
            format!("{target}[[{index}]]")
        }
        RExpr::Dollar(target, field) => {
            let Some(target) = flat_operand(target, u8::MAX)? else {
                return Ok(None);
            };
            format!("{target}${}", name_text(field))
        }
        RExpr::Binary(op, lhs, rhs) => {
            let (Some(lhs), Some(rhs)) = (
                flat_operand(lhs, op.precedence())?,
                flat_operand(rhs, op.precedence() + 1)?,
            ) else {
                return Ok(None);
            };
            match op {
                BinaryOp::Range => format!("{lhs}:{rhs}"),
                _ => format!("{lhs} {} {rhs}", op.token()),
            }
        }
        RExpr::Unary(op, operand) => {
            let Some(operand) = flat_operand(operand, unary_precedence(*op))? else {
                return Ok(None);
            };
            format!("{}{operand}", unary_token(*op))
        }
        RExpr::Function(params, body) => {
            let Some(body) = flat(body)? else {
                return Ok(None);
            };
            format!("function({}) {body}", flat_params(params)?)
        }
        RExpr::Block(statements) if statements.is_empty() => "{}".to_owned(),
        RExpr::Block(_) | RExpr::For(..) => return Ok(None),
        RExpr::If(condition, then, otherwise) => {
            let (Some(condition), Some(then)) = (flat(condition)?, flat(then)?) else {
                return Ok(None);
            };
            match otherwise {
                None => format!("if ({condition}) {then}"),
                Some(otherwise) => {
                    let Some(otherwise) = flat(otherwise)? else {
                        return Ok(None);
                    };
                    format!("if ({condition}) {then} else {otherwise}")
                }
            }
        }
    }))
}

fn flat_operand(expr: &RExpr, needed: u8) -> Result<Option<String>, PrintError> {
    Ok(flat(expr)?.map(|text| {
        if expr_precedence(expr) < needed {
            format!("({text})")
        } else {
            text
        }
    }))
}

fn flat_args(args: &[RArg]) -> Result<Option<String>, PrintError> {
    let mut parts = Vec::with_capacity(args.len());
    for arg in args {
        let Some(value) = flat(&arg.value)? else {
            return Ok(None);
        };
        parts.push(match &arg.name {
            Some(name) => format!("{} = {value}", name_text(name)),
            None => value,
        });
    }
    Ok(Some(parts.join(", ")))
}

fn flat_params(params: &[RParam]) -> Result<String, PrintError> {
    let mut parts = Vec::with_capacity(params.len());
    for param in params {
        let name = name_text(&param.name);
        parts.push(match &param.default {
            Some(default) => match flat(default)? {
                Some(value) => format!("{name} = {value}"),
                None => name,
            },
            None => name,
        });
    }
    Ok(parts.join(", "))
}

/// How tightly an expression binds: operators by R's grammar; `if`, `for` and `function`
/// extend as far right as they can, so they bind least; everything else is an atom.
fn expr_precedence(expr: &RExpr) -> u8 {
    match expr {
        RExpr::Binary(op, ..) => op.precedence(),
        RExpr::Unary(op, _) => unary_precedence(*op),
        RExpr::If(..) | RExpr::For(..) | RExpr::Function(..) => 0,
        // A negative literal is a unary minus to R's parser.
        RExpr::Number(value) if value.is_sign_negative() && *value != 0.0 => {
            unary_precedence(UnaryOp::Negate)
        }
        RExpr::Integer(value) if *value < 0 => unary_precedence(UnaryOp::Negate),
        _ => u8::MAX,
    }
}

fn unary_token(op: UnaryOp) -> &'static str {
    match op {
        UnaryOp::Not => "!",
        UnaryOp::Negate => "-",
    }
}

fn unary_precedence(op: UnaryOp) -> u8 {
    match op {
        UnaryOp::Not => 4,
        UnaryOp::Negate => 10,
    }
}

/// A double in shortest round-trip form; R reads it back to the same double.
fn number_text(value: f64) -> String {
    if value.is_nan() {
        "NaN".to_owned()
    } else if value.is_infinite() {
        if value > 0.0 { "Inf" } else { "-Inf" }.to_owned()
    } else {
        ryu_js::Buffer::new().format_finite(value).to_owned()
    }
}

/// A double-quoted R string literal (see the module documentation).
pub fn string_literal(text: &str) -> Result<String, PrintError> {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '\0' => {
                return Err(PrintError::NulInText {
                    text: text.replace('\0', "\\0"),
                })
            }
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                let _ = write!(out, "\\u{{{:04x}}}", c as u32);
            }
            c if c.is_ascii() => out.push(c),
            c if (c as u32) <= 0xffff => {
                let _ = write!(out, "\\u{{{:04x}}}", c as u32);
            }
            c => {
                let _ = write!(out, "\\U{{{:08x}}}", c as u32);
            }
        }
    }
    out.push('"');
    Ok(out)
}

const RESERVED: &[&str] = &[
    "if",
    "else",
    "repeat",
    "while",
    "function",
    "for",
    "next",
    "break",
    "in",
    "TRUE",
    "FALSE",
    "NULL",
    "Inf",
    "NaN",
    "NA",
    "NA_integer_",
    "NA_real_",
    "NA_character_",
    "NA_complex_",
    "...",
];

/// Whether R reads `text` as this name without backquotes.
fn is_syntactic(text: &str) -> bool {
    let bytes = text.as_bytes();
    let Some(&first) = bytes.first() else {
        return false;
    };
    let starts_well = first.is_ascii_alphabetic()
        || (first == b'.' && !bytes.get(1).is_some_and(u8::is_ascii_digit));
    let dot_dot_number = text.starts_with("..") && text[2..].bytes().all(|b| b.is_ascii_digit());
    starts_well
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || *b == b'.' || *b == b'_')
        && !RESERVED.contains(&text)
        && !dot_dot_number
}

/// A name as R code: bare when syntactic, otherwise backquoted with `` ` `` and `\` escaped
/// (R reads escapes inside backquotes, except `\u`, so other text stays as UTF-8).
fn name_text(name: &RName) -> String {
    let text = name.text();
    if is_syntactic(text) {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len() + 2);
    out.push('`');
    for c in text.chars() {
        match c {
            '`' => out.push_str("\\`"),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c => out.push(c),
        }
    }
    out.push('`');
    out
}

/// A comment line: control characters become spaces and non-ASCII is shown escaped, so a
/// comment reads the same in any editor.
fn comment_line(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    for c in line.chars() {
        match c {
            c if c.is_ascii_control() => out.push(' '),
            c if c.is_ascii() => out.push(c),
            c => {
                let _ = write!(out, "\\u{{{:04x}}}", c as u32);
            }
        }
    }
    out.trim_end().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compiler::r_syntax::build::*;

    #[test]
    fn strings_escape_quotes_backslashes_controls_and_non_ascii() {
        assert_eq!(
            string_literal("a\"b\\c\nd\u{1}é😀").unwrap(),
            r#""a\"b\\c\nd\u{0001}\u{00e9}\U{0001f600}""#
        );
        assert!(matches!(
            string_literal("a\0b"),
            Err(PrintError::NulInText { .. })
        ));
    }

    #[test]
    fn names_are_backquoted_unless_syntactic() {
        let printed = |text: &str| name_text(&RName::new(text));
        assert_eq!(printed("AVAL"), "AVAL");
        assert_eq!(printed(".x_1"), ".x_1");
        assert_eq!(printed("if"), "`if`");
        assert_eq!(printed("..2"), "`..2`");
        assert_eq!(printed(".2a"), "`.2a`");
        assert_eq!(printed("a b`c"), "`a b\\`c`");
        assert_eq!(printed(""), "``");
    }

    #[test]
    fn calls_break_one_argument_per_line_when_too_wide() {
        let long = call(
            "list",
            (0..8)
                .map(|i| named(&format!("argument_{i}"), string("value")))
                .collect(),
        );
        let text = print_expr(&long).unwrap();
        assert!(text.starts_with("list(\n  argument_0 = \"value\",\n"));
        assert!(text.ends_with("\n  argument_7 = \"value\"\n)"));
        assert!(text.lines().all(|line| line.len() <= LINE_WIDTH));
    }

    #[test]
    fn precedence_is_kept_with_parentheses() {
        let sum = binary(BinaryOp::Plus, name("a"), name("b"));
        let product = binary(BinaryOp::Times, sum.clone(), name("c"));
        assert_eq!(print_expr(&product).unwrap(), "(a + b) * c");
        let difference = binary(BinaryOp::Minus, name("a"), sum);
        assert_eq!(print_expr(&difference).unwrap(), "a - (a + b)");
        let range = binary(BinaryOp::Range, number(-1.0), integer(3));
        assert_eq!(print_expr(&range).unwrap(), "-1:3L");
        // `!` binds less tightly than `==` in R: no parentheses needed one way, needed the other.
        assert_eq!(
            print_expr(&not(binary(BinaryOp::Equal, name("a"), number(0.1)))).unwrap(),
            "!a == 0.1"
        );
        assert_eq!(
            print_expr(&binary(BinaryOp::Equal, not(name("a")), name("b"))).unwrap(),
            "(!a) == b"
        );
    }

    #[test]
    fn comments_cannot_escape_into_code() {
        let script = RScript {
            statements: vec![comment("one\nsystem(\"x\")\r\u{202e}two")],
        };
        assert_eq!(
            print_script(&script).unwrap(),
            "# one\n# system(\"x\")\n# \\u{202e}two\n"
        );
    }

    #[test]
    fn blocks_and_else_stay_parseable() {
        let statement = expr(if_else(
            name("a"),
            block(vec![expr(call_positional("f", vec![]))]),
            Some(block(vec![])),
        ));
        let script = RScript {
            statements: vec![statement],
        };
        assert_eq!(
            print_script(&script).unwrap(),
            "if (a) {\n  f()\n} else {}\n"
        );
    }
}
