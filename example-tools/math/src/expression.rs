//! A recursive-descent evaluator for arithmetic expressions.
//!
//! Grammar (lowest precedence first):
//! ```text
//! sum     = product (("+" | "-") product)*
//! product = power (("*" | "/" | "%") power)*
//! power   = unary ("^" power)?            right-associative
//! unary   = "-" unary | "+" unary | call
//! call    = NAME "(" sum ("," sum)* ")" | NAME | NUMBER | "(" sum ")"
//! ```
//! Nesting is bounded so that a hostile expression cannot exhaust the stack.

use std::fmt;

const MAX_DEPTH: usize = 64;

#[derive(Debug, PartialEq)]
pub struct EvalError {
    position: usize,
    message: String,
}

impl fmt::Display for EvalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (at character {})", self.message, self.position + 1)
    }
}

pub fn evaluate(source: &str) -> Result<f64, EvalError> {
    let mut parser = Parser { source: source.as_bytes(), position: 0, depth: 0 };
    let value = parser.sum()?;
    parser.skip_whitespace();
    if parser.position < parser.source.len() {
        return Err(parser.error(format!("unexpected `{}`", parser.source[parser.position] as char)));
    }
    Ok(value)
}

struct Parser<'a> {
    source: &'a [u8],
    position: usize,
    depth: usize,
}

impl Parser<'_> {
    fn error(&self, message: impl Into<String>) -> EvalError {
        EvalError { position: self.position, message: message.into() }
    }

    fn skip_whitespace(&mut self) {
        while self.source.get(self.position).is_some_and(u8::is_ascii_whitespace) {
            self.position += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.skip_whitespace();
        self.source.get(self.position).copied()
    }

    fn eat(&mut self, byte: u8) -> bool {
        if self.peek() == Some(byte) {
            self.position += 1;
            true
        } else {
            false
        }
    }

    fn nested<T>(&mut self, parse: impl FnOnce(&mut Self) -> Result<T, EvalError>) -> Result<T, EvalError> {
        if self.depth == MAX_DEPTH {
            return Err(self.error(format!("expression nested deeper than {MAX_DEPTH} levels")));
        }
        self.depth += 1;
        let result = parse(self);
        self.depth -= 1;
        result
    }

    fn sum(&mut self) -> Result<f64, EvalError> {
        let mut value = self.product()?;
        loop {
            if self.eat(b'+') {
                value += self.product()?;
            } else if self.eat(b'-') {
                value -= self.product()?;
            } else {
                return Ok(value);
            }
        }
    }

    fn product(&mut self) -> Result<f64, EvalError> {
        let mut value = self.power()?;
        loop {
            if self.eat(b'*') {
                value *= self.power()?;
            } else if self.eat(b'/') {
                let position = self.position;
                let divisor = self.power()?;
                if divisor == 0.0 {
                    return Err(EvalError { position, message: "division by zero".into() });
                }
                value /= divisor;
            } else if self.eat(b'%') {
                let position = self.position;
                let divisor = self.power()?;
                if divisor == 0.0 {
                    return Err(EvalError { position, message: "remainder by zero".into() });
                }
                value %= divisor;
            } else {
                return Ok(value);
            }
        }
    }

    fn power(&mut self) -> Result<f64, EvalError> {
        let base = self.unary()?;
        if self.eat(b'^') {
            let exponent = self.nested(Self::power)?;
            return Ok(base.powf(exponent));
        }
        Ok(base)
    }

    fn unary(&mut self) -> Result<f64, EvalError> {
        if self.eat(b'-') {
            return self.nested(Self::unary).map(|v| -v);
        }
        if self.eat(b'+') {
            return self.nested(Self::unary);
        }
        self.primary()
    }

    fn primary(&mut self) -> Result<f64, EvalError> {
        match self.peek() {
            Some(b'(') => {
                self.position += 1;
                let value = self.nested(Self::sum)?;
                if !self.eat(b')') {
                    return Err(self.error("missing `)`"));
                }
                Ok(value)
            }
            Some(c) if c.is_ascii_digit() || c == b'.' => self.number(),
            Some(c) if c.is_ascii_alphabetic() => self.name(),
            Some(c) => Err(self.error(format!("unexpected `{}`", c as char))),
            None => Err(self.error("unexpected end of expression")),
        }
    }

    fn number(&mut self) -> Result<f64, EvalError> {
        let start = self.position;
        while self.source.get(self.position).is_some_and(|c| c.is_ascii_digit() || *c == b'.') {
            self.position += 1;
        }
        if matches!(self.source.get(self.position), Some(b'e' | b'E'))
            && self.source.get(self.position + 1).is_some_and(|c| c.is_ascii_digit() || *c == b'-' || *c == b'+')
        {
            self.position += 2;
            while self.source.get(self.position).is_some_and(u8::is_ascii_digit) {
                self.position += 1;
            }
        }
        let text = std::str::from_utf8(&self.source[start..self.position]).expect("ASCII digits");
        text.parse().map_err(|_| EvalError { position: start, message: format!("`{text}` is not a number") })
    }

    fn name(&mut self) -> Result<f64, EvalError> {
        let start = self.position;
        while self.source.get(self.position).is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_') {
            self.position += 1;
        }
        let name = std::str::from_utf8(&self.source[start..self.position]).expect("ASCII name");
        match name {
            "pi" => return Ok(std::f64::consts::PI),
            "e" => return Ok(std::f64::consts::E),
            _ => {}
        }
        if !self.eat(b'(') {
            return Err(EvalError { position: start, message: format!("unknown name `{name}`") });
        }
        let mut args = vec![self.nested(Self::sum)?];
        while self.eat(b',') {
            args.push(self.nested(Self::sum)?);
        }
        if !self.eat(b')') {
            return Err(self.error("missing `)` after function arguments"));
        }
        apply(name, &args).map_err(|message| EvalError { position: start, message })
    }
}

fn apply(name: &str, args: &[f64]) -> Result<f64, String> {
    let one = |f: fn(f64) -> f64| match args {
        [x] => Ok(f(*x)),
        _ => Err(format!("`{name}` takes one argument, got {}", args.len())),
    };
    match name {
        "sqrt" => match args {
            [x] if *x < 0.0 => Err(format!("`sqrt` of a negative number ({x})")),
            _ => one(f64::sqrt),
        },
        "abs" => one(f64::abs),
        "ln" => one(f64::ln),
        "log10" => one(f64::log10),
        "sin" => one(f64::sin),
        "cos" => one(f64::cos),
        "tan" => one(f64::tan),
        "floor" => one(f64::floor),
        "ceil" => one(f64::ceil),
        "round" => one(f64::round),
        "min" | "max" if args.is_empty() => Err(format!("`{name}` needs at least one argument")),
        "min" => Ok(args.iter().copied().fold(f64::INFINITY, f64::min)),
        "max" => Ok(args.iter().copied().fold(f64::NEG_INFINITY, f64::max)),
        _ => Err(format!("unknown function `{name}`")),
    }
}

#[cfg(test)]
mod tests {
    use super::evaluate;

    #[test]
    fn precedence_and_associativity() {
        assert_eq!(evaluate("1 + 2 * 3").unwrap(), 7.0);
        assert_eq!(evaluate("2 ^ 3 ^ 2").unwrap(), 512.0);
        assert_eq!(evaluate("-2 ^ 2").unwrap(), 4.0);
        assert_eq!(evaluate("(1 + 2) * 3").unwrap(), 9.0);
        assert_eq!(evaluate("max(1, 5, 3) + sqrt(16)").unwrap(), 9.0);
        assert_eq!(evaluate("1.5e3").unwrap(), 1500.0);
    }

    #[test]
    fn errors_name_the_position() {
        assert!(evaluate("1 / 0").unwrap_err().to_string().starts_with("division by zero"));
        assert_eq!(evaluate("2 +").unwrap_err().to_string(), "unexpected end of expression (at character 4)");
        assert!(evaluate("foo(1)").unwrap_err().to_string().contains("unknown function `foo`"));
        assert!(evaluate(&"(".repeat(1000)).unwrap_err().to_string().contains("nested deeper"));
    }
}
