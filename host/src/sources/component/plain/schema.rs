//! WIT types as JSON Schemas (draft 2020-12), exactly.
//!
//! WIT types as JSON Schemas (draft 2020-12), exactly: every value [`super::value`]
//! produces validates against the schema of its type, and every JSON value that
//! validates converts to a value of the type. The table is in [`super`].

use serde_json::{Map, Value, json};
use wasmtime::component::Type;
use wasmtime::component::types::{Case, Field};

/// Why a type cannot travel as JSON.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Unrepresentable(pub String);

/// The strings that stand for the floating-point values JSON has no number for.
pub(crate) const NON_FINITE: [&str; 3] = ["NaN", "Infinity", "-Infinity"];

/// The largest finite `f32`, so an input never silently becomes infinity.
const F32_MAX: f64 = f32::MAX as f64;

/// The JSON Schema of `ty`.
pub(crate) fn of(ty: &Type) -> Result<Value, Unrepresentable> {
    Ok(match ty {
        Type::Bool => json!({ "type": "boolean" }),
        Type::S8 => integer(i8::MIN, i8::MAX),
        Type::U8 => integer(u8::MIN, u8::MAX),
        Type::S16 => integer(i16::MIN, i16::MAX),
        Type::U16 => integer(u16::MIN, u16::MAX),
        Type::S32 => integer(i32::MIN, i32::MAX),
        Type::U32 => integer(u32::MIN, u32::MAX),
        Type::S64 => integer(i64::MIN, i64::MAX),
        Type::U64 => integer(u64::MIN, u64::MAX),
        Type::Float32 => float(Some(F32_MAX)),
        Type::Float64 => float(None),
        Type::Char => json!({ "type": "string", "minLength": 1, "maxLength": 1 }),
        Type::String => json!({ "type": "string" }),
        Type::List(list) if list.ty() == Type::U8 => bytes(),
        Type::List(list) => json!({ "type": "array", "items": of(&list.ty())? }),
        Type::FixedLengthList(list) => {
            json!({ "type": "array", "items": of(&list.ty())?, "minItems": list.len(), "maxItems": list.len() })
        }
        Type::Map(map) if map.key() == Type::String => {
            json!({ "type": "object", "additionalProperties": of(&map.value())? })
        }
        Type::Map(map) => json!({ "type": "array", "items": tuple(&[map.key(), map.value()])? }),
        Type::Record(record) => object(record.fields())?,
        Type::Tuple(tuple_type) => tuple(&tuple_type.types().collect::<Vec<_>>())?,
        Type::Variant(variant) => {
            let cases: Result<Vec<Value>, _> = variant.cases().map(tagged_case).collect();
            json!({ "oneOf": cases? })
        }
        Type::Enum(names) => json!({ "type": "string", "enum": names.names().collect::<Vec<_>>() }),
        Type::Option(option) => optional(&option.ty())?,
        Type::Result(result) => {
            let case = |tag: &str, ty: Option<Type>| tagged(tag, ty.as_ref());
            json!({ "oneOf": [case("ok", result.ok())?, case("err", result.err())?] })
        }
        Type::Flags(flags) => json!({
            "type": "array",
            "items": { "type": "string", "enum": flags.names().collect::<Vec<_>>() },
            "uniqueItems": true,
        }),
        Type::Own(_) | Type::Borrow(_) => return Err(unrepresentable("a resource handle")),
        Type::Future(_) => return Err(unrepresentable("a future")),
        Type::Stream(_) => return Err(unrepresentable("a stream")),
        Type::ErrorContext => return Err(unrepresentable("an error context")),
    })
}

fn unrepresentable(what: &str) -> Unrepresentable {
    Unrepresentable(format!("{what} has no JSON form: it only makes sense between components"))
}

fn integer<T: Into<i128>>(minimum: T, maximum: T) -> Value {
    // Through i128, so u64::MAX and i64::MIN are written exactly.
    let (minimum, maximum): (i128, i128) = (minimum.into(), maximum.into());
    let number = |n: i128| match (i64::try_from(n), u64::try_from(n)) {
        (Ok(n), _) => json!(n),
        (_, Ok(n)) => json!(n),
        _ => unreachable!("every WIT integer fits i64 or u64"),
    };
    json!({ "type": "integer", "minimum": number(minimum), "maximum": number(maximum) })
}

fn float(maximum: Option<f64>) -> Value {
    let mut number = json!({ "type": "number" });
    if let Some(maximum) = maximum {
        number["minimum"] = json!(-maximum);
        number["maximum"] = json!(maximum);
    }
    json!({ "anyOf": [number, { "enum": NON_FINITE }] })
}

/// `list<u8>`: standard base64 with padding.
fn bytes() -> Value {
    json!({
        "type": "string",
        "contentEncoding": "base64",
        "pattern": "^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$",
    })
}

fn tuple(types: &[Type]) -> Result<Value, Unrepresentable> {
    let items: Result<Vec<Value>, _> = types.iter().map(of).collect();
    Ok(
        json!({ "type": "array", "prefixItems": items?, "items": false, "minItems": types.len(), "maxItems": types.len() }),
    )
}

/// A record: every field a property, required unless it is an option.
pub(crate) fn object<'a>(fields: impl Iterator<Item = Field<'a>>) -> Result<Value, Unrepresentable> {
    let mut properties = Map::new();
    let mut required = Vec::new();
    for field in fields {
        properties.insert(field.name.to_owned(), of(&field.ty)?);
        if !matches!(field.ty, Type::Option(_)) {
            required.push(field.name);
        }
    }
    Ok(json!({ "type": "object", "properties": properties, "required": required, "additionalProperties": false }))
}

fn tagged_case(case: Case<'_>) -> Result<Value, Unrepresentable> {
    tagged(case.name, case.ty.as_ref())
}

/// `{"TAG": PAYLOAD}`, the payload `null` for a case without one.
fn tagged(tag: &str, payload: Option<&Type>) -> Result<Value, Unrepresentable> {
    let payload = match payload {
        Some(ty) => of(ty)?,
        None => json!({ "type": "null" }),
    };
    Ok(json!({ "type": "object", "properties": { tag: payload }, "required": [tag], "additionalProperties": false }))
}

/// `option<T>`: `T` or `null`; when `T` is itself an option, `some` is spelled out so
/// that `none` and `some(none)` stay apart.
fn optional(inner: &Type) -> Result<Value, Unrepresentable> {
    let some = if matches!(inner, Type::Option(_)) { tagged("some", Some(inner))? } else { of(inner)? };
    Ok(json!({ "anyOf": [some, { "type": "null" }] }))
}
