//! `math`: exact arithmetic and a safe expression evaluator for agents, which are
//! notoriously bad at carrying digits.

mod expression;
mod primes;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolhost_guest::{ToolError, toolbox};

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Numbers {
    /// The numbers to add; an empty list sums to 0.
    numbers: Vec<f64>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Division {
    dividend: f64,
    divisor: f64,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Expression {
    /// An arithmetic expression such as `2 * (3 + 4) ^ 2 / sqrt(16)`.
    #[schemars(length(min = 1, max = 4096))]
    expression: String,
}

#[derive(Serialize, JsonSchema)]
struct Value {
    value: f64,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct PrimeBound {
    /// Count the primes below this number (at most ten million, which fits the
    /// default fuel budget).
    #[schemars(range(min = 0, max = 10_000_000u64))]
    below: u64,
}

#[derive(Serialize, JsonSchema)]
struct PrimeCount {
    /// How many primes are below the bound.
    count: u64,
    /// The largest of them, if there is one.
    largest: Option<u64>,
}

toolbox! {
    /// Adds a list of numbers and returns their sum.
    fn add(input: Numbers) -> Result<Value, ToolError> {
        Ok(Value { value: input.numbers.iter().sum() })
    }

    /// Divides `dividend` by `divisor`. A zero divisor is refused as invalid input.
    fn divide(input: Division) -> Result<Value, ToolError> {
        if input.divisor == 0.0 {
            return Err(ToolError::invalid_input("division by zero"));
        }
        Ok(Value { value: input.dividend / input.divisor })
    }

    /// Evaluates an arithmetic expression: numbers, `+ - * / % ^`, parentheses, unary
    /// minus, the constants `pi` and `e`, and the functions `sqrt abs ln log10 sin cos
    /// tan floor ceil round min max`. No variables, no side effects.
    fn evaluate(input: Expression) -> Result<Value, ToolError> {
        let value = expression::evaluate(&input.expression).map_err(ToolError::invalid_input)?;
        if !value.is_finite() {
            return Err(ToolError::invalid_input(format!("the result is not a finite number ({value})")));
        }
        Ok(Value { value })
    }

    /// Counts the primes below a bound (up to ten million) with a segmented sieve, and
    /// gives the largest, reporting its progress as it goes.
    fn count_primes(input: PrimeBound) -> Result<PrimeCount, ToolError> {
        let (count, largest) = primes::count_below(input.below, |done, total| {
            toolhost_guest::progress(done, Some(total), Some(&format!("sieved the numbers below {done}")));
        });
        Ok(PrimeCount { count, largest })
    }
}
