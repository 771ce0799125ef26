//! A typed R syntax tree: the only way the compiler produces R code. Text that comes from the
//! user or the data (level names, column names, units, titles) can only enter a script as a
//! [`RExpr::Str`] literal or an [`RName`], which the printer (`r_printer.rs`) escapes; there is
//! no node that holds raw code.

/// An R name (a symbol). Printed bare when it is a syntactic, non-reserved ASCII name and
/// backquoted (with escapes) otherwise, so any text is a safe name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RName(String);

impl RName {
    /// A name with this text.
    pub fn new(text: impl Into<String>) -> Self {
        Self(text.into())
    }

    /// The name's text, unescaped.
    pub fn text(&self) -> &str {
        &self.0
    }
}

/// Binary operators, each printed with spaces around it (`a + b`), except `:` and `^`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinaryOp {
    /// `+`
    Plus,
    /// `-`
    Minus,
    /// `*`
    Times,
    /// `/`
    Divide,
    /// `==`
    Equal,
    /// `!=`
    NotEqual,
    /// `<`
    Less,
    /// `>`
    Greater,
    /// `<=`
    LessEqual,
    /// `>=`
    GreaterEqual,
    /// `&`
    And,
    /// `|`
    Or,
    /// `&&`
    AndAlso,
    /// `||`
    OrElse,
    /// `%in%`
    In,
    /// `:`
    Range,
}

impl BinaryOp {
    /// The operator's token.
    pub fn token(self) -> &'static str {
        match self {
            Self::Plus => "+",
            Self::Minus => "-",
            Self::Times => "*",
            Self::Divide => "/",
            Self::Equal => "==",
            Self::NotEqual => "!=",
            Self::Less => "<",
            Self::Greater => ">",
            Self::LessEqual => "<=",
            Self::GreaterEqual => ">=",
            Self::And => "&",
            Self::Or => "|",
            Self::AndAlso => "&&",
            Self::OrElse => "||",
            Self::In => "%in%",
            Self::Range => ":",
        }
    }

    /// Binding strength as in R's grammar (higher binds tighter); the printer adds parentheses
    /// where the tree needs them, so a tree never prints as a different expression.
    pub fn precedence(self) -> u8 {
        match self {
            Self::OrElse | Self::Or => 2,
            Self::AndAlso | Self::And => 3,
            Self::Equal
            | Self::NotEqual
            | Self::Less
            | Self::Greater
            | Self::LessEqual
            | Self::GreaterEqual => 5,
            Self::Plus | Self::Minus => 6,
            Self::Times | Self::Divide => 7,
            Self::In => 8,
            Self::Range => 9,
        }
    }
}

/// Unary operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnaryOp {
    /// `!`
    Not,
    /// `-`
    Negate,
}

/// A call argument, optionally named (`name = value`).
#[derive(Debug, Clone, PartialEq)]
pub struct RArg {
    /// The argument name, if any.
    pub name: Option<RName>,
    /// The value.
    pub value: RExpr,
}

/// A function parameter with an optional default.
#[derive(Debug, Clone, PartialEq)]
pub struct RParam {
    /// The parameter name.
    pub name: RName,
    /// Its default value.
    pub default: Option<RExpr>,
}

/// An R expression.
#[derive(Debug, Clone, PartialEq)]
pub enum RExpr {
    /// `NULL`
    Null,
    /// An empty argument, as the column position in `x[rows, , drop = FALSE]`.
    Empty,
    /// `TRUE` / `FALSE`
    Logical(bool),
    /// A double, printed in shortest round-trip form (`Inf`, `-Inf`, `NaN` for non-finite).
    Number(f64),
    /// An integer, printed with the `L` suffix.
    Integer(i64),
    /// `NA_character_`
    MissingText,
    /// `NA_real_`
    MissingReal,
    /// `NA` (logical)
    Missing,
    /// A string literal; any text, escaped by the printer.
    Str(String),
    /// A symbol.
    Name(RName),
    /// `package::name`
    Namespaced(RName, RName),
    /// `function(arguments)`
    Call(Box<RExpr>, Vec<RArg>),
    /// `lhs op rhs`
    Binary(BinaryOp, Box<RExpr>, Box<RExpr>),
    /// `op operand`
    Unary(UnaryOp, Box<RExpr>),
    /// `target[index, …]`
    Index(Box<RExpr>, Vec<RArg>),
    /// `target[[index]]`
    Element(Box<RExpr>, Box<RExpr>),
    /// `target$name`
    Dollar(Box<RExpr>, RName),
    /// `function(parameters) body`
    Function(Vec<RParam>, Box<RExpr>),
    /// `{ statements }`
    Block(Vec<RStatement>),
    /// `if (condition) then else otherwise`
    If(Box<RExpr>, Box<RExpr>, Option<Box<RExpr>>),
    /// `for (variable in sequence) body`
    For(RName, Box<RExpr>, Box<RExpr>),
}

/// A statement of a block or of the script.
#[derive(Debug, Clone, PartialEq)]
pub enum RStatement {
    /// An expression evaluated for its effect or value.
    Expr(RExpr),
    /// `target <- value`
    Assign(RExpr, RExpr),
    /// A comment; every line of the text becomes its own `# ` line, so text cannot escape it.
    Comment(String),
    /// An empty line, for the reader.
    Blank,
}

/// A whole script: its statements, printed one after another.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RScript {
    /// Top-level statements.
    pub statements: Vec<RStatement>,
}

/// Short constructors, so that code building scripts reads close to the R it produces.
pub mod build {
    use super::*;

    /// A symbol.
    pub fn name(text: &str) -> RExpr {
        RExpr::Name(RName::new(text))
    }

    /// A string literal.
    pub fn string(text: impl Into<String>) -> RExpr {
        RExpr::Str(text.into())
    }

    /// A double literal.
    pub fn number(value: f64) -> RExpr {
        RExpr::Number(value)
    }

    /// An integer literal.
    pub fn integer(value: i64) -> RExpr {
        RExpr::Integer(value)
    }

    /// A positional argument.
    pub fn arg(value: RExpr) -> RArg {
        RArg { name: None, value }
    }

    /// A named argument.
    pub fn named(name: &str, value: RExpr) -> RArg {
        RArg {
            name: Some(RName::new(name)),
            value,
        }
    }

    /// A call of `function`, which is `name` or `package::name`.
    pub fn call(function: &str, args: Vec<RArg>) -> RExpr {
        let callee = match function.split_once("::") {
            Some((package, item)) => RExpr::Namespaced(RName::new(package), RName::new(item)),
            None => name(function),
        };
        RExpr::Call(Box::new(callee), args)
    }

    /// A call with positional arguments only.
    pub fn call_positional(function: &str, args: Vec<RExpr>) -> RExpr {
        call(function, args.into_iter().map(arg).collect())
    }

    /// `c(…)` of string literals.
    pub fn strings<'a>(values: impl IntoIterator<Item = &'a String>) -> RExpr {
        call_positional(
            "c",
            values.into_iter().map(|v| string(v.as_str())).collect(),
        )
    }

    /// `lhs op rhs`
    pub fn binary(op: BinaryOp, lhs: RExpr, rhs: RExpr) -> RExpr {
        RExpr::Binary(op, Box::new(lhs), Box::new(rhs))
    }

    /// `!operand`
    pub fn not(operand: RExpr) -> RExpr {
        RExpr::Unary(UnaryOp::Not, Box::new(operand))
    }

    /// `target$field`
    pub fn dollar(target: RExpr, field: &str) -> RExpr {
        RExpr::Dollar(Box::new(target), RName::new(field))
    }

    /// `target[[index]]`
    pub fn element(target: RExpr, index: RExpr) -> RExpr {
        RExpr::Element(Box::new(target), Box::new(index))
    }

    /// `target[index, …]`
    pub fn index(target: RExpr, args: Vec<RArg>) -> RExpr {
        RExpr::Index(Box::new(target), args)
    }

    /// `target[rows, , drop = FALSE]`: rows of a data frame.
    pub fn index_rows(target: RExpr, rows: RExpr) -> RExpr {
        RExpr::Index(
            Box::new(target),
            vec![
                arg(rows),
                arg(RExpr::Empty),
                named("drop", RExpr::Logical(false)),
            ],
        )
    }

    /// `function(params) { body }`
    pub fn function(params: &[&str], body: Vec<RStatement>) -> RExpr {
        RExpr::Function(
            params
                .iter()
                .map(|p| RParam {
                    name: RName::new(*p),
                    default: None,
                })
                .collect(),
            Box::new(RExpr::Block(body)),
        )
    }

    /// `function(params) expression` (no braces)
    pub fn lambda(params: &[&str], body: RExpr) -> RExpr {
        RExpr::Function(
            params
                .iter()
                .map(|p| RParam {
                    name: RName::new(*p),
                    default: None,
                })
                .collect(),
            Box::new(body),
        )
    }

    /// `{ statements }`
    pub fn block(statements: Vec<RStatement>) -> RExpr {
        RExpr::Block(statements)
    }

    /// `if (condition) then else otherwise`
    pub fn if_else(condition: RExpr, then: RExpr, otherwise: Option<RExpr>) -> RExpr {
        RExpr::If(Box::new(condition), Box::new(then), otherwise.map(Box::new))
    }

    /// `target <- value`
    pub fn assign(target: &str, value: RExpr) -> RStatement {
        RStatement::Assign(name(target), value)
    }

    /// An expression statement.
    pub fn expr(value: RExpr) -> RStatement {
        RStatement::Expr(value)
    }

    /// A comment statement.
    pub fn comment(text: impl Into<String>) -> RStatement {
        RStatement::Comment(text.into())
    }

    /// Adds ggplot2 layers: `first + second + …`.
    pub fn layers(first: RExpr, rest: impl IntoIterator<Item = RExpr>) -> RExpr {
        rest.into_iter()
            .fold(first, |acc, layer| binary(BinaryOp::Plus, acc, layer))
    }
}
